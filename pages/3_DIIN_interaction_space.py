"""DIIN's interaction space: channels of the premise×hypothesis tensor and of the maps built on it."""
from nlivis.app import paths
from nlivis.app.components import diin, frame

with frame.page(paths.DIIN, "Each panel is one channel over premise rows × hypothesis columns "
                "(viridis, as DIIN's Figure 2). Pick channels by index, by their highest activation, or by how much they "
                "vary over the pair (the default)."):
    diin.page(frame.require_models("interaction-space view", weights=False,
                                   declared=True))

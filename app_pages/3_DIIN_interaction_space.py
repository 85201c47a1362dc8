"""DIIN's interaction space: channels of the premise×hypothesis tensor and of the maps built on it."""
from nlivis.app.components import diin, frame

with frame.page("diin", "DIIN interaction space", "Each panel is one channel over premise rows × hypothesis columns "
                "(viridis, as DIIN's Figure 2). Pick channels by index, by their highest activation, or by how much they "
                "vary over the pair (the default).", icon=":material/grid_on:"):
    diin.page(frame.require_models("interaction-space view"))

"""Gates: how open each gate is per token and layer for one pair, and on average over a dataset split."""
from nlivis.app import paths
from nlivis.app.components import frame, gates

with frame.page(paths.GATES, f"Top strip: the gate's mean over all its dimensions per token (1 = fully open); "
                f"below: its dimensions, {gates.GATE_DIMS_SHOWN} at a time (pick the window). A model's gates are "
                "drawn when its section is opened: its first layer's, the others under Layers."):
    gates.page(frame.require_models("gate view", weights=False, declared=True))

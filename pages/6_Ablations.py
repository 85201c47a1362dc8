"""Ablations: the checkpoints of one model family side by side, against the full model, with the papers' numbers."""
from nlivis.app import paths
from nlivis.app.components import ablations, frame

with frame.page(paths.ABLATIONS, "Every checkpoint of one model under one protocol — the full model, its "
                "ablations and other seeds — read from what the checkpoint folders recorded (no weights are loaded, "
                "nothing has to be selected on Home)."):
    ablations.page()

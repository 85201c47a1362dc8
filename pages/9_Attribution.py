"""Attribution: which tokens decide (gradients, integrated gradients, occlusion) beside what the attention says,
for the current pair and every loaded model; over a split, faithfulness (ERASER), agreement and plausibility."""
from nlivis.app import paths
from nlivis.app.components import attribution, frame

with frame.page(paths.ATTRIBUTION, attribution.CAPTION):
    attribution.page(frame.require_models("attribution view"))

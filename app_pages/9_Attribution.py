"""Attribution: which tokens decide (gradients, integrated gradients, occlusion) beside what the attention says,
for the current pair and every loaded model; over a split, faithfulness (ERASER), agreement and plausibility."""
from nlivis.app.components import attribution, frame

with frame.page("attribution", "Attribution", attribution.CAPTION, icon=":material/highlight:"):
    attribution.page(frame.require_models("attribution view"))

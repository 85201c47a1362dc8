"""Pair explorer: every loaded model's prediction for one pair, why the pair is here, and its alignments."""
from nlivis.app.components import explorer, frame

with frame.page("explorer", "Pair explorer", icon=":material/compare_arrows:"):
    explorer.page(frame.require_models("pair explorer"))

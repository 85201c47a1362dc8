"""Pair explorer: every loaded model's prediction for one pair, why the pair is here, and its alignments; on the
Edits tab, the pair's edits with each model's prediction before → after, one pinned beside the original."""
from nlivis.app import paths
from nlivis.app.components import explorer, frame

with frame.page(paths.EXPLORER):
    explorer.page(frame.require_models("pair explorer", weights=False, declared=True))

"""Error analysis: accuracy with intervals, confusions, every error of a split, accuracy by annotation tag in DIIN's
Table 7 layout, a challenge file by category, behavioural tests by capability; every number leads to its pairs,
and a pair opens in the explorer."""
from nlivis.app import paths
from nlivis.app.components import errors, frame

with frame.page(paths.ERRORS):
    errors.page(frame.require_models("error analysis", weights=False))

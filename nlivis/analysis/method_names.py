"""The names of the attribution and faithfulness methods and their defaults, in a module without torch, so the
analyses' option declarations (`nlivis.workflows.specs`) and the command line's `--help` read them without
loading a model library. `analysis.attribution` and `analysis.faithfulness` take them from here."""
from __future__ import annotations

ATTRIBUTION_INPUTS = ("token_features", "word_vectors")
"""Where gradients and integrated gradients attribute (`analysis.attribution`'s docstring); the first is the
default."""
DEFAULT_INPUT = ATTRIBUTION_INPUTS[0]
METHODS = ("integrated_gradients", "gradient", "grad_x_input", "occlusion", "attention")
"""Every attribution method, in the order tables and pages list them."""
FAITHFULNESS_METHODS = METHODS + ("random",)
"""Every attribution method and the random floor, as `faithfulness` compares them."""
RANDOM_PERMUTATIONS = 10
"""Seeded random rankings per pair whose comprehensiveness and sufficiency are averaged into the random floor
(one ranking per pair made the floor itself noisy)."""

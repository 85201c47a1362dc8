"""The predictions a family of checkpoints (a model, its ablations and seeds under one protocol) made on one
split, and the noise between two seeds of the full model — read through a `read(folder, split)` function, so
the app (which caches its reads) and the tests (which pass fixtures) share this logic."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from nlivis.analysis.ablations import SeedNoise, VariantRecord, seed_noise
from nlivis.store.predictions import Prediction

Read = Callable[[Path, str], tuple[list[Prediction], str | None]]
"""(folder, split key) → (predictions, None) or ([], why they cannot be read)."""


def family_predictions(members: Sequence[VariantRecord], reference: VariantRecord, split: str,
                       read: Read) -> tuple[list[Prediction], dict[str, list[Prediction]], list[str]]:
    """(the reference's predictions on `split`, {other member: its predictions}, problems): members without
    predictions for the split are left out; unreadable files are problems, as is a reference without them."""
    reference_predictions, error = read(reference.folder, split)
    problems = [error] if error else []
    variants: dict[str, list[Prediction]] = {}
    for member in members:
        if member.name == reference.name or split not in member.prediction_splits:
            continue
        predictions, member_error = read(member.folder, split)
        if member_error:
            problems.append(member_error)
        else:
            variants[member.name] = predictions
    return reference_predictions, variants, problems


def measure_seed_noise(seeds: Sequence[VariantRecord], split: str, read: Read) -> tuple[SeedNoise | None, str | None]:
    """(SeedNoise over every seed of the full model with predictions on `split`, None), or (None, why it cannot
    be measured: one seed only, no predictions for the split, or predictions that are not of the same split)."""
    if len(seeds) < 2:
        return None, "one seed only"
    found = []
    for seed in seeds:
        predictions, error = read(seed.folder, split)
        if error:
            return None, error
        found.append(predictions)
    try:
        return seed_noise(*found, names=[seed.name for seed in seeds]), None
    except ValueError as error:
        return None, f"{', '.join(seed.name for seed in seeds)}: {error}"

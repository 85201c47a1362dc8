"""Cached: the models a page shows — the checkpoints the session chose (`cache.chosen_model_names`), in the order
chosen, loaded for the pages that run them or only described by their config.json for a page that shows their
recorded predictions (Error analysis's first run loaded five models, ~2 s of a cold start and torch's import, only
to learn their labels and families) or a pair's readings kept on disk (the Pair explorer, Gates, DIIN).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import streamlit as st

from nlivis.app import paths
from nlivis.app.cache import Model, chosen_model_names, declared_types, load_model
from nlivis.features.settings import DescribedCheckpoint, describe_checkpoint
from nlivis.app.cache.run_memo import folder_stamp_in_run
from nlivis.viz.common import model_colours


def chosen(weights: bool = True, declared: bool = False) -> tuple[list[Model], list[str]]:
    """The chosen checkpoints — loaded (`cache.load_model`: the one loader, so a model loaded later is the same
    object), or with `weights=False` only described (`describe_model`: no weights read, torch not imported) — and
    the errors of those that failed. With `declared`, a described model's declared trace types are read too
    (`cache.declared_types`: kept on disk, else from the checkpoint loaded now), so a checkpoint that cannot load
    is an error here, as a loaded one's is, not a failure of the page that picks models by them. A session that
    never chose gets the default models."""
    found: list[Model] = []
    errors: list[str] = []
    for name in chosen_model_names():
        folder = paths.find_checkpoint_folder(name)
        if folder is None:
            errors.append(f"{name}: no checkpoint folder of that name in {', '.join(map(str, paths.checkpoint_roots()))}")
            continue
        types = None
        if weights:
            (checkpoint, error), described = load_model(folder), None  # a loaded checkpoint describes itself
        else:
            checkpoint, (described, error) = None, describe_model(folder)
        if not error and declared and checkpoint is None:
            types, error = declared_types_read(folder)
        if error:
            errors.append(error)
        else:
            found.append(Model(name, str(folder), checkpoint, "", described, types))
    colours = model_colours([(model.name, model.family) for model in found])
    return [replace(model, colour=colours[model.name]) for model in found], errors


def declared_types_read(folder: Path) -> tuple[frozenset[type] | None, str | None]:
    """(the declared trace types of the checkpoint in `folder`, None), or (None, why they cannot be known: it
    cannot load)."""
    try:
        return declared_types(folder), None
    except Exception as error:  # a broken folder must show as a message, whatever the failure
        return None, f"{folder}: {error}"


@st.cache_resource(max_entries=64, show_spinner=False)
def _described_cached(path: str, stamp: float) -> DescribedCheckpoint:
    return describe_checkpoint(path)


def describe_model(path: str | Path) -> tuple[DescribedCheckpoint | None, str | None]:
    """(what the checkpoint folder's config.json says, None) or (None, why it cannot be read), once per folder
    state (`folder_stamp`); its weights are not read."""
    path = Path(path)
    try:
        return _described_cached(str(path), folder_stamp_in_run(path)), None
    except Exception as error:  # a broken folder must show as a message, whatever the failure
        return None, f"{path}: {error}"

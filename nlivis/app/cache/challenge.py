"""Cached: challenge files (their pairs and gold labels, per files' state) and a model's predictions on one —
kept with its named evaluations (`workflows.evaluate`), or computed when asked (see `nlivis.app.cache` for the
keying)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import streamlit as st

from nlivis.app.cache import Model
from nlivis.data.challenge import read_challenge_files
from nlivis.store.files import file_stamp
from nlivis.store.predictions import Prediction


@st.cache_resource(max_entries=8, show_spinner="reading the challenge file …")
def _read_challenge_cached(files: tuple[str, ...], stamps: tuple[float, ...], label_scheme: str) -> Any:
    return read_challenge_files(list(files), label_scheme=label_scheme)


def read_challenge(files: Sequence[Path], label_scheme: str = "3way") -> tuple[Any | None, str | None]:
    """(challenge set with its gold labels in `label_scheme`, None) or (None, why it cannot be read: file and line)."""
    try:
        return _read_challenge_cached(tuple(str(p) for p in files), tuple(file_stamp(p) for p in files),
                                      label_scheme), None
    except (OSError, ValueError) as error:
        return None, str(error)


def earlier_evaluations(models: Sequence[Model]) -> dict[str, list[Path]]:
    """"<description> — model" → the files of each named evaluation of the models whose files are still there
    (named evaluations of recorded splits are left out: those are the splits)."""
    from nlivis.workflows.evaluate import evaluated_files

    return {f"{description} — {model.name}": files
            for model in models for description, files in evaluated_files(model.path).items()}


def challenge_predictions(model: Model, challenge: Any, compute: bool = False) -> tuple[list[Prediction], Any, str | None]:
    """(predictions, the named evaluation they come from, None) of `model` on a challenge set — ([], None, None)
    when it was not evaluated yet and `compute` is False — or ([], None, why it failed)."""
    from nlivis.workflows.evaluate import challenge_predictions as stored_or_computed

    try:
        found, evaluation = stored_or_computed(model.checkpoint, challenge, compute=compute)
    except ValueError as problem:
        return [], None, str(problem)
    return found, evaluation, None

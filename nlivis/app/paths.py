"""Where the app finds things: checkpoint folders, the data root, the runs folder, the projection cache.

Environment variables give the defaults; folders the user adds on Home live in `st.session_state`.
"""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
"""The repository (app.py, checkpoints/, configs/)."""

CHECKPOINTS_ENV = "NLIVIS_CHECKPOINTS"
"""Checkpoint folders to scan (os.pathsep-separated); default: <repository>/checkpoints."""
DATA_ENV = "NLIVIS_DATA"
"""Data root (the layout of ../shared/data); default: <repository>/../shared/data when it exists."""
PROJECTION_CACHE_ENV = "NLIVIS_PROJECTION_CACHE"
"""Where projections are cached; default: nlivis.analysis.projection's (~/.cache/nlivis/projections)."""
RUNS_ENV = "NLIVIS_RUNS"
"""Where the Train page writes new checkpoints; default: the first checkpoint folder."""

_EXTRA_ROOTS = "nlivis_extra_checkpoint_roots"
_DATA_ROOT = "nlivis_data_root"


def checkpoint_roots() -> list[Path]:
    """Folders scanned for checkpoints: NLIVIS_CHECKPOINTS (or checkpoints/), NLIVIS_RUNS when set, and any the
    user added."""
    configured = os.environ.get(CHECKPOINTS_ENV)
    roots = [Path(p) for p in configured.split(os.pathsep) if p] if configured else [ROOT / "checkpoints"]
    runs = os.environ.get(RUNS_ENV)
    if runs and Path(runs).is_dir() and Path(runs) not in roots:  # finished Train-page runs show up on Home
        roots.append(Path(runs))
    for extra in st.session_state.get(_EXTRA_ROOTS, []):
        if Path(extra) not in roots:
            roots.append(Path(extra))
    return roots


def add_checkpoint_root(folder: str) -> str | None:
    """Remember a user-given folder to scan; returns an error message when it is not a folder."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        return f"{path} is not a folder"
    extras = list(st.session_state.get(_EXTRA_ROOTS, []))
    if str(path) not in extras:
        extras.append(str(path))
    st.session_state[_EXTRA_ROOTS] = extras
    return None


def data_root() -> Path | None:
    """The data folder (user-given, NLIVIS_DATA, or ../shared/data), or None when none exists."""
    for candidate in (st.session_state.get(_DATA_ROOT), os.environ.get(DATA_ENV), ROOT.parent / "shared" / "data"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def set_data_root(folder: str) -> str | None:
    path = Path(folder).expanduser()
    if not path.is_dir():
        return f"{path} is not a folder"
    st.session_state[_DATA_ROOT] = str(path)
    return None


def runs_root() -> Path:
    """Where new training runs go: NLIVIS_RUNS, else the first checkpoint folder."""
    configured = os.environ.get(RUNS_ENV)
    return Path(configured) if configured else checkpoint_roots()[0]


def projection_cache_dir() -> Path | None:
    configured = os.environ.get(PROJECTION_CACHE_ENV)
    return Path(configured) if configured else None

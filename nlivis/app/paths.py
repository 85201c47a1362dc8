"""Where the app finds things: its pages (the one table of their scripts, titles and icons), checkpoint
folders, the data root, the runs folder.

Environment variables give the defaults; folders the user adds on Home live in `st.session_state`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import streamlit as st

from nlivis.training.run_folder import path_problem

ROOT = Path(__file__).resolve().parents[2]
"""The repository (app.py, checkpoints/, configs/)."""

PAGES_FOLDER = "pages"
"""The folder of the page scripts, relative to the repository: Streamlit's own name for it. The router (app.py)
runs every page, also the first link opened after a launch (`frame.run_through_the_router`)."""


@dataclass(frozen=True)
class Page:
    """One page of the app: the router's sidebar entry, the target of every link to it, what tests open."""

    key: str
    """Its view parameters' namespace in the URL state (`state.page_run`)."""
    script: str
    """Its file in PAGES_FOLDER; the number orders the files, the rest is its URL path (2_Pair_explorer.py →
    /Pair_explorer)."""
    title: str
    """Its name in the sidebar and in links to it."""
    icon: str
    """A Streamlit bundled icon (no glyph depends on the browser's emoji font)."""

    @property
    def path(self) -> str:
        """The script relative to the repository, as `st.Page`, `st.page_link` and `st.switch_page` take it."""
        return f"{PAGES_FOLDER}/{self.script}"

    @property
    def url_path(self) -> str:
        """Its address after the server's root: the script name without its number (Home, the default, is also /)."""
        return Path(self.script).stem.split("_", 1)[1]


HOME = Page("home", "1_Home.py", "Home", ":material/home:")
EXPLORER = Page("explorer", "2_Pair_explorer.py", "Pair explorer", ":material/compare_arrows:")
DIIN = Page("diin", "3_DIIN_interaction_space.py", "DIIN interaction space", ":material/grid_on:")
GATES = Page("gates", "4_Gates.py", "Gates", ":material/tune:")
ERRORS = Page("errors", "5_Error_analysis.py", "Error analysis", ":material/rule:")
ABLATIONS = Page("ablations", "6_Ablations.py", "Ablations", ":material/science:")
PROJECTION = Page("projection", "7_Projection.py", "Projection", ":material/scatter_plot:")
TRAIN = Page("train", "8_Train.py", "Train", ":material/model_training:")
ATTRIBUTION = Page("attribution", "9_Attribution.py", "Attribution", ":material/highlight:")
DATA_MAP = Page("datamap", "10_Data_map.py", "Data map", ":material/bubble_chart:")
PAGES: tuple[Page, ...] = (HOME, EXPLORER, DIIN, GATES, ERRORS, ABLATIONS, PROJECTION, TRAIN, ATTRIBUTION, DATA_MAP)
"""Every page of the app in sidebar order, Home (the default) first."""
PAIR_PAGES: tuple[Page, ...] = (EXPLORER, ATTRIBUTION, GATES, DIIN)
"""The pages that show one pair and link to each other; a clicked pair opens in the first."""

CHECKPOINTS_ENV = "NLIVIS_CHECKPOINTS"
"""Checkpoint folders to scan (os.pathsep-separated); default: <repository>/checkpoints."""
DATA_ENV = "NLIVIS_DATA"
"""Data root (the layout of ../shared/data); default: <repository>/../shared/data when it exists."""
RUNS_ENV = "NLIVIS_RUNS"
"""Where the Train page writes new checkpoints; default: `default_runs_root()`, outside the git checkout."""

_EXTRA_ROOTS = "nlivis_extra_checkpoint_roots"
_DATA_ROOT = "nlivis_data_root"


def checkpoint_roots() -> list[Path]:
    """Folders scanned for checkpoints: NLIVIS_CHECKPOINTS (or checkpoints/), the Train page's runs folder when it
    exists (so finished runs show up on Home), and any the user added."""
    configured = os.environ.get(CHECKPOINTS_ENV)
    roots = [Path(p) for p in configured.split(os.pathsep) if p] if configured else [ROOT / "checkpoints"]
    runs = runs_root()
    if _is_dir(runs) and runs not in roots:
        roots.append(runs)
    for extra in st.session_state.get(_EXTRA_ROOTS, []):
        if Path(extra) not in roots:
            roots.append(Path(extra))
    return roots


def _is_dir(path: Path) -> bool:
    """`path.is_dir()` that is False, not an exception, for a path no file system accepts (NUL, too long)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def folder_problem(folder: str) -> str | None:
    """Why a folder typed by the user cannot be used (NUL byte, a name over 255 bytes, not a folder), or None."""
    problem = path_problem(folder)
    if problem:
        return problem
    path = Path(folder).expanduser()
    return None if _is_dir(path) else f"{path} is not a folder"


def add_checkpoint_root(folder: str) -> str | None:
    """Remember a user-given folder to scan; returns an error message when it is not a folder."""
    problem = folder_problem(folder)
    if problem:
        return problem
    path = Path(folder).expanduser()
    extras = list(st.session_state.get(_EXTRA_ROOTS, []))
    if str(path) not in extras:
        extras.append(str(path))
    st.session_state[_EXTRA_ROOTS] = extras
    return None


def data_root() -> Path | None:
    """The data folder (user-given, NLIVIS_DATA, or ../shared/data), or None when none exists."""
    for candidate in (st.session_state.get(_DATA_ROOT), os.environ.get(DATA_ENV), ROOT.parent / "shared" / "data"):
        if candidate and _is_dir(Path(candidate)):
            return Path(candidate)
    return None


def data_root_notice() -> str | None:
    """What the user should know about where data comes from: NLIVIS_DATA names a folder that does not exist
    (and which folder is used instead), or None."""
    configured = os.environ.get(DATA_ENV)
    if not configured or st.session_state.get(_DATA_ROOT) or _is_dir(Path(configured)):
        return None
    used = data_root()
    instead = f"using {used} instead" if used else "no data folder is used"
    return f"NLIVIS_DATA is set to {configured}, which is not a folder: {instead}"


def set_data_root(folder: str) -> str | None:
    problem = folder_problem(folder)
    if problem:
        return problem
    st.session_state[_DATA_ROOT] = str(Path(folder).expanduser())
    return None


def default_runs_root() -> Path:
    """The user's data folder for runs started from the app, outside the git checkout:
    $XDG_DATA_HOME/nlivis/runs (~/.local/share/nlivis/runs)."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "nlivis" / "runs"


def runs_root() -> Path:
    """Where new training runs go: NLIVIS_RUNS, else `default_runs_root()`."""
    configured = os.environ.get(RUNS_ENV)
    return Path(configured).expanduser() if configured else default_runs_root()


def find_checkpoint_folder(name: str, roots: Sequence[Path] | None = None) -> Path | None:
    """The folder called `name` in the first checkpoint root that has one (URLs name checkpoints by folder); `roots`:
    `checkpoint_roots()` already read (a page looking up every checkpoint)."""
    if not name or "/" in name or "\\" in name or name in {".", ".."} or "\x00" in name:
        return None
    return next((root / name for root in (checkpoint_roots() if roots is None else roots) if _is_dir(root / name)),
                None)

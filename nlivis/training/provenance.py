"""Where a run or a measurement came from: library versions and the project's commit."""
from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import numpy as np
import torch

from nlivis import PROJECT_ROOT
from nlivis.features.spacy_pipeline import installed_pipeline_version


def library_versions() -> dict[str, str]:
    """The versions a checkpoint records: Python, torch, numpy, safetensors, spaCy and its pipeline — spaCy's
    read from the installed packages' metadata, not by importing spaCy and loading its pipeline (seconds at the
    end of every run whose analyses all came from the feature cache)."""
    import safetensors

    versions = {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__,
                "safetensors": safetensors.__version__}
    try:
        versions["spacy"] = metadata.version("spacy")
        versions["pipeline"] = installed_pipeline_version()
    except (ImportError, OSError, RuntimeError) as error:
        versions["spacy"] = f"unavailable ({error})"
    return versions


def git_commit(short: bool = False) -> str | None:
    """The project's commit (with `+dirty` when tracked files differ from it), or None outside a git
    checkout; `short` gives the abbreviated hash."""
    root = PROJECT_ROOT
    try:
        commit = subprocess.run(["git", "rev-parse", *(["--short"] if short else []), "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")

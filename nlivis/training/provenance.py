"""Where a run or a measurement came from: library versions and the project's commit."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import torch

from nlivis import PROJECT_ROOT
from nlivis.features.spacy_pipeline import pipeline_version


def library_versions() -> dict[str, str]:
    import safetensors

    versions = {"python": sys.version.split()[0], "torch": torch.__version__, "numpy": np.__version__,
                "safetensors": safetensors.__version__}
    try:
        import spacy

        versions["spacy"] = spacy.__version__
        versions["pipeline"] = pipeline_version()
    except (ImportError, OSError) as error:
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

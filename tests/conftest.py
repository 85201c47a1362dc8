"""Shared fixtures: where ../shared/data is (tests that need it skip with a reason when absent)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest.ini runs the suite on two pytest-xdist workers, one a core: each worker's torch (and every process it
    # starts: a training run, a streamlit server) computes on one thread, so the two never fight over the cores.
    # Set before any test module imports torch.
    os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DATA = Path(os.environ.get("NLIVIS_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip: the real datasets are never part of the project."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set NLIVIS_SHARED_DATA to its path)")
    return SHARED_DATA


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def wordnet():
    """WordNet 3.0 as nlivis fetches and checks it (`features.wordnet`), or skip saying why it is unavailable."""
    from nlivis.features.wordnet import WordNetUnavailable, load_wordnet

    try:
        return load_wordnet()
    except WordNetUnavailable as error:
        pytest.skip(f"WordNet unavailable: {error}")

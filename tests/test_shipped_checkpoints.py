"""The checkpoints shipped in checkpoints/: they load, record what they saw, stay lean, their recorded dev
accuracy is what their predictions file says, and re-predicting a slice of the select split gives the
recorded labels (that part needs ../shared/data and skips without it)."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from nlivis.store.predictions import find_prediction_files, read_predictions
from nlivis.inference import load_checkpoint
from nlivis.models.families import SHIPPED_FAMILIES

ROOT = Path(__file__).resolve().parents[1] / "checkpoints"
SHIPPED = sorted(p for p in ROOT.glob("*") if (p / "COMPLETE").is_file()) if ROOT.is_dir() else []
MAX_TOTAL_MB = 190
"""What checkpoints/ may hold (176.1 MB after issue 29's compute-matched augmented/control pairs for GCNN,
AttentiveConvNet, DIIN and ESAN's second seed, 20 MB, and issue 31's retrained minilm-quora-small; 174.9 MB with
ESAN's mnli-small pair, once shared word vectors could extend another file's rows; 189.2 MB with a second seed of
every other compute-matched control, 14.3 MB, without which the before → after report cannot tell a seed's spread
from a regression): raised from 160, then 180, for checkpoints those issues require, not a licence to grow; a clone
still fetches far less than one full-size model."""
RECHECKED_PAIRS = 100
PROBABILITY_TOLERANCE = 2e-3
HYPOTHESIS_ONLY_SNLI_SMALL = 0.58
"""The hypothesis-only baseline on snli-small (measured, see the README): every full model must beat it."""
CROSS_ATTENTION_FLOOR = 0.65
"""The models that align the two sentences (all but AMN, a sentence encoder) must beat it by 7 points."""
FULL_MODELS = SHIPPED_FAMILIES

pytestmark = pytest.mark.skipif(not SHIPPED, reason="no complete checkpoints in checkpoints/")


def test_checkpoints_folder_stays_under_its_budget():
    total = sum(f.stat().st_size for f in ROOT.rglob("*") if f.is_file() and "state" not in f.parts)
    assert total / 1e6 < MAX_TOTAL_MB, f"checkpoints/ holds {total / 1e6:.1f} MB"


def test_no_training_state_or_pickles_are_shipped():
    assert not [p for p in SHIPPED if (p / "state").exists()], "resumable training state left in a finished checkpoint"
    assert not [p for p in ROOT.rglob("*") if p.suffix in {".pt", ".pth", ".pkl", ".pickle", ".bin"}]


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_checkpoint_loads_and_its_metrics_match_its_predictions(folder):
    loaded = load_checkpoint(folder)
    config = loaded.config
    for key in ("seed", "device", "wall_time_s", "pairs_seen", "versions", "dataset", "embeddings"):
        assert key in config, f"{folder.name}: config.json does not record {key}"
    assert config["dataset"]["protocol"].endswith("-small"), "shipped models follow the reduced protocols"
    select = loaded.metrics["select_split"]
    predictions = read_predictions(find_prediction_files(folder)[select])
    accuracy = sum(p.gold == p.predicted for p in predictions) / len(predictions)
    assert accuracy == pytest.approx(loaded.metrics["best_dev_accuracy"], abs=1e-9)


@pytest.mark.parametrize("name", FULL_MODELS)
def test_full_models_beat_the_hypothesis_only_baseline_on_snli_small(name):
    folder = ROOT / f"{name}-snli-small"
    if not (folder / "COMPLETE").is_file():
        pytest.skip(f"{folder.name} is not shipped")
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    floor = HYPOTHESIS_ONLY_SNLI_SMALL if name == "amn" else CROSS_ATTENTION_FLOOR
    assert metrics["best_dev_accuracy"] > floor


@pytest.fixture(scope="module")
def rechecked_pairs(tmp_path_factory) -> Callable[[Any], tuple[list, list]]:
    """Select split → (its first RECHECKED_PAIRS pairs, analysed), read and analysed once for the module: the
    checkpoints of a protocol share their select split."""
    from nlivis.data.protocols import read_split
    from nlivis.features.dataset import analyse_pairs
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set NLIVIS_SHARED_DATA to its path)")

    cache_dir = tmp_path_factory.mktemp("analysis-cache")

    @functools.cache
    def of(ref) -> tuple[list, list]:
        pairs = read_split(ref, SHARED_DATA).pairs[:RECHECKED_PAIRS]
        return pairs, analyse_pairs(pairs, cache_dir=cache_dir, progress=False)
    return of


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_checkpoint_reproduces_its_recorded_predictions(folder, rechecked_pairs):
    from nlivis.data.protocols import get_protocol, split_key
    from nlivis.workflows.evaluate import evaluate_checkpoint

    loaded = load_checkpoint(folder)
    protocol = get_protocol(loaded.config["dataset"]["protocol"])
    ref = protocol.select
    pairs, analysed = rechecked_pairs(ref)
    result = evaluate_checkpoint(loaded, analysed)
    recorded = {p.id: p for p in read_predictions(find_prediction_files(folder)[split_key(ref)])}
    for pair, row in zip(pairs, result.predictions):
        saved = recorded[pair.id]
        # fp16-stored weights move a probability by at most ~5e-4 (checked at save time) and the file keeps
        # 4 decimals; a label may differ only where the recorded top two are that close (a float tie,
        # which another thread count can break the other way).
        assert max(abs(a - b) for a, b in zip(row["probs"], saved.probs)) < PROBABILITY_TOLERANCE, pair.id
        top_two = sorted(saved.probs)[-2:]
        assert row["predicted"] == saved.predicted or top_two[1] - top_two[0] < 2 * PROBABILITY_TOLERANCE, pair.id

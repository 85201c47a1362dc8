"""Training dynamics (issue 23 §1): the file format, what the trainer records, the data map computed from it,
`python -m nlivis datamap`, and that a run killed with SIGKILL and resumed records what an uninterrupted one does."""
from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file

from nlivis.analysis.datamap import Thresholds, data_map, hardest, paper_cuts
from nlivis.cli import main
from nlivis.store.checkpoints import DYNAMICS_FILE, CheckpointError, read_checkpoint_info
from nlivis.store.dynamics import (
    MISSING,
    PROBABILITY_SCALE,
    TrainingDynamics,
    encode,
    read_dynamics,
    write_dynamics,
)
from nlivis.store.training_state import load_training_state
from nlivis.training.dynamics import DynamicsRecorder
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG, train_tiny

ROOT = Path(__file__).resolve().parents[1]
LABELS = ["entailment", "neutral", "contradiction"]


def _dynamics(records: list[list[int]], gold: list[int] | None = None) -> TrainingDynamics:
    pairs = len(records[0]) if records else 0
    return TrainingDynamics(ids=[f"p{i}" for i in range(pairs)], gold=np.asarray(gold or [0] * pairs, dtype=np.uint8),
                            labels=LABELS, records=np.asarray(records, dtype=np.uint16).reshape(len(records), pairs),
                            sources=[{"split": "snli_train", "start": 0, "count": pairs}])


# ------------------------------------------------------------------------------------------------ format

def test_records_keep_probability_to_15_bits_and_correctness_and_never_look_missing():
    probability = np.array([0.0, 0.25, 0.5, 1 / 3, 1.0, 1.0])
    correct = np.array([False, True, False, True, True, False])
    records = encode(probability, correct)
    assert records.dtype == np.uint16 and MISSING not in records  # p = 1 and right is 0xFFFD, not 0xFFFF
    decoded = _dynamics([records.tolist()])
    assert np.abs(decoded.probabilities()[0] - probability).max() <= 0.5 / PROBABILITY_SCALE
    assert decoded.correct()[0].tolist() == correct.tolist() and decoded.seen().all()


def test_a_missing_record_is_nan_and_not_correct():
    dynamics = _dynamics([[encode(np.array([0.9]), np.array([True]))[0], MISSING]])
    assert math.isnan(dynamics.probabilities()[0, 1]) and not dynamics.correct()[0, 1]
    assert dynamics.seen().tolist() == [[True, False]]


def test_write_then_read_gives_the_same_dynamics(tmp_path):
    original = _dynamics([[encode(np.array([0.7]), np.array([True]))[0], MISSING, 12]], gold=[0, 2, 1])
    original.ids = ["a", "ü-β", "c"]
    write_dynamics(tmp_path / DYNAMICS_FILE, original)
    read = read_dynamics(tmp_path)
    assert read.ids == original.ids and read.labels == LABELS and read.sources == original.sources
    assert np.array_equal(read.records, original.records) and np.array_equal(read.gold, original.gold)


@pytest.mark.parametrize("damage,problem", [
    (lambda d: setattr(d, "gold", np.array([5], dtype=np.uint8)), "'gold' must be"),
    (lambda d: setattr(d, "sources", [{"split": "x", "start": 0, "count": 2}]), "cover 2 pairs"),
    (lambda d: setattr(d, "records", np.zeros((1, 2), dtype=np.uint16)), "'records' must be uint16"),
])
def test_inconsistent_dynamics_are_refused_with_the_reason(tmp_path, damage, problem):
    dynamics = _dynamics([[7]])
    damage(dynamics)
    with pytest.raises(CheckpointError, match=problem):
        write_dynamics(tmp_path / DYNAMICS_FILE, dynamics)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_read_as_dynamics_or_a_clear_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bytes") / DYNAMICS_FILE
    path.write_bytes(data)
    try:
        read_dynamics(path)
    except CheckpointError as error:
        assert DYNAMICS_FILE in str(error)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["format", "format_version", "labels", "ids", "sources", "x"]),
                       st.text(max_size=30), max_size=6),
       st.integers(0, 3), st.integers(0, 3))
def test_any_metadata_reads_as_dynamics_or_a_clear_error(tmp_path_factory, metadata, epochs, pairs):
    from safetensors.numpy import save_file

    path = tmp_path_factory.mktemp("meta") / DYNAMICS_FILE
    save_file({"records": np.zeros((epochs, pairs), dtype=np.uint16), "gold": np.zeros(pairs, dtype=np.uint8)},
              str(path), metadata=metadata)
    try:
        read_dynamics(path)
    except CheckpointError as error:
        assert DYNAMICS_FILE in str(error)


# -------------------------------------------------------------------------------------------- data maps

def test_data_map_values_and_regions_by_hand():
    by_epoch = [  # (gold probability, right) of pairs 0-3; pair 3 was drawn in the first two epochs only (mix-in)
        [(0.2, False), (0.9, True), (0.1, False), (0.5, True)],
        [(0.5, True), (0.95, True), (0.15, False), (0.5, False)],
        [(0.8, True), (0.85, True), (0.2, False), None],
    ]
    records = [[MISSING if cell is None else int(encode(np.array([cell[0]]), np.array([cell[1]]))[0]) for cell in row]
               for row in by_epoch]
    points = data_map(_dynamics(records))
    expected = [[0.2, 0.5, 0.8], [0.9, 0.95, 0.85], [0.1, 0.15, 0.2], [0.5, 0.5]]
    tolerance = 1 / PROBABILITY_SCALE
    for i, values in enumerate(expected):
        assert points.confidence[i] == pytest.approx(statistics.mean(values), abs=tolerance)
        assert points.variability[i] == pytest.approx(statistics.pstdev(values), abs=tolerance)
    assert points.correctness.tolist() == pytest.approx([2 / 3, 1.0, 0.0, 0.5])
    assert points.epochs.tolist() == [3, 3, 3, 2]
    # pair 0 moves by ±0.245: ambiguous; 1 high and steady: easy; 2 low and steady: hard; 3 in between
    assert points.region == ["ambiguous", "easy-to-learn", "hard-to-learn", "between"]
    assert points.region_counts() == {"easy-to-learn": 1, "ambiguous": 1, "hard-to-learn": 1, "between": 1}
    assert hardest(points, 5) == [2]
    # thresholds are changeable: a lower easy threshold takes pair 3 too
    assert data_map(_dynamics(records), Thresholds(easy_confidence=0.5)).region[3] == "easy-to-learn"
    cuts = paper_cuts(points)
    assert cuts["hard_confidence"] <= cuts["easy_confidence"] and cuts["share"] == 0.33


def test_a_pair_never_trained_on_has_no_place_on_the_map():
    points = data_map(_dynamics([[encode(np.array([0.6]), np.array([True]))[0], MISSING]]))
    assert points.region == ["between", "not trained on"] and math.isnan(points.confidence[1])
    assert points.rows()[1]["confidence"] is None and points.epochs.tolist() == [1, 0]


def test_thresholds_out_of_range_are_refused():
    with pytest.raises(ValueError, match="0 … 0.5"):
        Thresholds(ambiguous_variability=0.7)
    with pytest.raises(ValueError, match="must lie below"):
        Thresholds(easy_confidence=0.3, hard_confidence=0.4)


# --------------------------------------------------------------------------------- what the trainer records

@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("analysis-cache")


@pytest.fixture(scope="module")
def three_epochs(tmp_path_factory, cache_dir):
    """The tiny fixture trained 3 epochs, with every call of the recorder logged: (checkpoint, log)."""
    logged: list[tuple[int, list[int], np.ndarray, np.ndarray]] = []
    real_record = DynamicsRecorder.record

    def record(self, epoch, indices, probabilities, labels):
        logged.append((epoch, list(indices), probabilities.detach().numpy().copy(), labels.numpy().copy()))
        return real_record(self, epoch, indices, probabilities, labels)

    patch = pytest.MonkeyPatch()
    patch.setattr(DynamicsRecorder, "record", record)
    try:
        out = tmp_path_factory.mktemp("dynamics") / "tiny"
        train_tiny(out, cache_dir, epochs=3)
    finally:
        patch.undo()
    return out, logged


def test_three_epochs_record_every_pair_once_per_epoch(three_epochs):
    out, logged = three_epochs
    dynamics = read_dynamics(out)
    assert (dynamics.epochs, dynamics.pairs) == (3, 40) and dynamics.seen().all()
    assert dynamics.sources == [{"split": "snli_train", "start": 0, "count": 40}]
    assert dynamics.ids == [f"train-{i:03d}" for i in range(40)]
    assert sorted(i for epoch, indices, _, _ in logged if epoch == 1 for i in indices) == list(range(40))
    config = json.loads((out / "config.json").read_text())
    assert config["dynamics"] == {"file": DYNAMICS_FILE, "pairs": 40, "epochs": 3}
    manifest = json.loads((out / "COMPLETE").read_text())
    assert DYNAMICS_FILE in manifest["files"]
    assert (out / DYNAMICS_FILE).stat().st_size < 2 * 40 * 3 + 2000  # 2 bytes per pair and epoch, ids once


def test_confidence_variability_correctness_match_the_logged_probabilities(three_epochs):
    out, logged = three_epochs
    gold_probabilities: dict[int, list[float]] = {}
    right: dict[int, list[bool]] = {}
    for _, indices, probabilities, labels in logged:
        for row, pair in enumerate(indices):
            gold_probabilities.setdefault(pair, []).append(float(probabilities[row][labels[row]]))
            right.setdefault(pair, []).append(int(np.argmax(probabilities[row])) == int(labels[row]))
    points = data_map(read_dynamics(out))
    tolerance = 1 / PROBABILITY_SCALE
    for pair in range(40):
        assert len(gold_probabilities[pair]) == 3
        assert points.confidence[pair] == pytest.approx(statistics.mean(gold_probabilities[pair]), abs=tolerance)
        assert points.variability[pair] == pytest.approx(statistics.pstdev(gold_probabilities[pair]), abs=tolerance)
        assert points.correctness[pair] == pytest.approx(sum(right[pair]) / 3)


def test_a_damaged_dynamics_file_makes_the_checkpoint_incomplete(three_epochs, tmp_path):
    import shutil

    out, _ = three_epochs
    copy = tmp_path / "root" / "tiny"
    shutil.copytree(out.parent, copy.parent)
    with (copy / DYNAMICS_FILE).open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(CheckpointError, match="dynamics.safetensors is .* bytes, the manifest says"):
        read_checkpoint_info(copy)


def test_datamap_command_prints_counts_and_json(three_epochs, capsys):
    out, _ = three_epochs
    assert main(["datamap", str(out), "--json", "--hard-confidence", "0.3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["epochs"] == 3 and len(result["pairs"]) == 40
    assert sum(result["regions"].values()) == 40 and result["thresholds"]["hard_confidence"] == 0.3
    assert set(result["pairs"][0]) == {"id", "split", "gold", "confidence", "variability", "correctness", "epochs",
                                       "region", "augmented", "original"}
    assert result["pairs"][0]["augmented"] is None and result["regions_by_origin"] == {}  # trained without --augment
    assert main(["datamap", str(out)]) == 0
    text = capsys.readouterr().out
    assert "40 training pairs (snli_train) over 3 epochs" in text and "hard-to-learn" in text


def test_datamap_command_explains_what_is_wrong(three_epochs, tmp_path, capsys):
    out, _ = three_epochs
    assert main(["datamap", str(out), "--easy-confidence", "0.2", "--json"]) == 2
    captured = capsys.readouterr()
    assert "must lie below" in captured.err and json.loads(captured.out)["error"]
    assert main(["datamap", str(tmp_path)]) == 2
    assert "incomplete: no COMPLETE marker" in capsys.readouterr().err


def test_a_checkpoint_trained_without_dynamics_says_so(three_epochs, tmp_path, capsys):
    import shutil

    from nlivis.store.weights import rewrite_checkpoint

    out, _ = three_epochs
    shutil.copytree(out.parent, tmp_path / "root")
    old = tmp_path / "root" / out.name
    rewrite_checkpoint(old, remove=(DYNAMICS_FILE,))  # as checkpoints trained before dynamics were recorded
    assert read_checkpoint_info(old).name == out.name
    assert main(["datamap", str(old)]) == 2
    assert "trained without recording training dynamics" in capsys.readouterr().err


# ----------------------------------------------------------------------------------- SIGKILL and --resume

@pytest.fixture
def one_thread(monkeypatch):
    """Both runs compute on one thread, so an in-process run and a subprocess give the same numbers."""
    threads = torch.get_num_threads()
    monkeypatch.setenv("NLIVIS_TRAIN_THREADS", "1")
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_a_run_killed_mid_epoch_and_resumed_records_the_same_dynamics(tmp_path, cache_dir, one_thread):
    epochs = 6  # 30 steps: it is frozen and looked at after every few, so killed at step 11-14 whatever the load
    straight = tmp_path / "a" / "run"
    train_tiny(straight, cache_dir, epochs=epochs)

    killed = tmp_path / "b" / "run"
    command = [sys.executable, "-m", "nlivis", "train", "--config", str(TINY_CONFIG), "--dataset", "snli",
               "--data-dir", str(FIXTURE_DIR), "--out", str(killed), "--device", "cpu", "--epochs", str(epochs),
               "--cache-dir", str(cache_dir)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "NLIVIS_TRAIN_THREADS": "1"})
    state = killed / "state" / "state.json"
    try:
        while process.poll() is None:
            process.send_signal(signal.SIGSTOP)  # frozen, so the state read is the one it will be killed with
            try:
                step = json.loads(state.read_text())["training"]["step"]
            except (OSError, ValueError, KeyError):
                step = 0
            if step >= 9 and step % 5:  # saved mid-epoch (5 batches per epoch)
                break
            process.send_signal(signal.SIGCONT)
            time.sleep(0.005)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert not (killed / "COMPLETE").exists(), "the run finished before it could be killed"
    saved = load_training_state(killed)
    assert 0 < saved.state.batch_in_epoch < 5, "the state is mid-epoch"
    assert saved.dynamics is not None and saved.dynamics.epochs == saved.state.epoch + 1
    partial = saved.dynamics.seen()[-1]
    assert 0 < partial.sum() < 40, "the unfinished epoch's records are in the state"

    train_tiny(killed, cache_dir, epochs=epochs, resume=True)
    a, b = read_dynamics(straight), read_dynamics(killed)
    assert a.epochs == b.epochs == epochs and a.ids == b.ids
    assert np.array_equal(a.records, b.records)
    weights_a, weights_b = load_file(str(straight / "model.safetensors")), load_file(str(killed / "model.safetensors"))
    assert all(torch.equal(weights_a[k], weights_b[k]) for k in weights_a)

"""A pair's reading kept on disk (`workflows.reading.read_pair_kept`): read back equal to the computed one without
loading the checkpoint, keyed by the checkpoint's weights and config, and read again when the kept file is absent,
damaged or not a reading."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nlivis.models.trace import Alignment
from nlivis.store.files import write_sealed
from nlivis.workflows import reading
from tests.fixtures.app_checkpoints import train_variant

PREMISE, HYPOTHESIS = "A man is playing a guitar on a stage .", "A person is making music ."


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    return train_variant(tmp_path_factory.mktemp("reading") / "checkpoints", "gcnn")


@pytest.fixture
def checkpoint(trained, tmp_path, monkeypatch) -> Path:
    """A copy of the tiny GCNN (with the shared embeddings beside it) this test may change, with spaCy's kept
    analyses under tmp_path."""
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    return Path(shutil.copytree(trained.parent, tmp_path / "checkpoints")) / trained.name


class Loads:
    """The `load` a kept reading is given: the checkpoint loaded once here, each call counted."""

    def __init__(self, folder: Path) -> None:
        from nlivis.inference import load_checkpoint

        self.loaded = load_checkpoint(folder)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return self.loaded


def assert_same_reading(kept: reading.PairReading, computed: reading.PairReading) -> None:
    assert (kept.model, kept.premise, kept.hypothesis) == (computed.model, computed.premise, computed.hypothesis)
    assert (kept.premise_tokens, kept.hypothesis_tokens) == (computed.premise_tokens, computed.hypothesis_tokens)
    assert (kept.labels, kept.probs, kept.notices) == (computed.labels, computed.probs, computed.notices)
    assert list(kept.trace) == list(computed.trace)
    for name, entry in computed.trace.items():
        other = kept.trace[name]
        assert type(other) is type(entry)
        for field, value in vars(entry).items():
            if isinstance(value, np.ndarray):
                assert value.dtype == np.float32 and np.array_equal(vars(other)[field], value), (name, field)
            else:
                assert vars(other)[field] == value, (name, field)


def test_a_kept_reading_is_read_back_equal_without_loading_the_checkpoint(checkpoint, tmp_path):
    loads, cache = Loads(checkpoint), tmp_path / "kept"
    computed = reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    assert loads.calls == 1 and reading.kept_reading_path(checkpoint, PREMISE, HYPOTHESIS, cache).is_file()
    assert computed.trace.of_type(Alignment), "the trace kept has alignments to draw"
    kept = reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    assert loads.calls == 1, "read back from disk: the checkpoint is not asked for"
    assert_same_reading(kept, computed)
    declared = reading.declared_types(loads, checkpoint, cache)
    assert loads.calls == 1 and declared == loads.loaded.model.trace_types()


def test_a_changed_checkpoint_is_read_again(checkpoint, tmp_path):
    loads, cache = Loads(checkpoint), tmp_path / "kept"
    reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    before = reading.kept_reading_path(checkpoint, PREMISE, HYPOTHESIS, cache)
    config = json.loads((checkpoint / "config.json").read_text())
    (checkpoint / "config.json").write_text(json.dumps({**config, "note": "retrained"}))
    assert reading.kept_reading_path(checkpoint, PREMISE, HYPOTHESIS, cache) != before
    reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    assert loads.calls == 2
    weights = checkpoint / "model.safetensors"
    weights.write_bytes(weights.read_bytes() + b" ")
    reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    assert loads.calls == 3


@pytest.mark.parametrize("damage", ["bytes changed", "sealed, not an npz", "sealed npz, not a reading", "removed"])
def test_a_damaged_kept_reading_is_read_again(checkpoint, tmp_path, damage):
    loads, cache = Loads(checkpoint), tmp_path / "kept"
    computed = reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    path = reading.kept_reading_path(checkpoint, PREMISE, HYPOTHESIS, cache)
    if damage == "bytes changed":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif damage == "sealed, not an npz":
        write_sealed(path, b"not an npz")
    elif damage == "sealed npz, not a reading":
        import io

        buffer = io.BytesIO()
        np.savez(buffer, reading=np.array(json.dumps({"entries": [["x", "NoSuchEntry", {}]]})))
        write_sealed(path, buffer.getvalue())
    else:
        path.unlink()
    again = reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    assert loads.calls == 2
    assert_same_reading(again, computed)
    assert_same_reading(reading.kept_reading(path, "gcnn", PREMISE, HYPOTHESIS), computed)  # and kept again


def test_damaged_declared_types_are_asked_of_the_model(checkpoint, tmp_path):
    loads, cache = Loads(checkpoint), tmp_path / "kept"
    reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, HYPOTHESIS, cache)
    for kept in (cache / reading.KEPT_FOLDER).glob("*.json"):
        write_sealed(kept, b'["NoSuchEntry"]')
    assert reading.declared_types(loads, checkpoint, cache) == loads.loaded.model.trace_types()
    assert loads.calls == 2
    assert reading.declared_types(loads, checkpoint, cache) == loads.loaded.model.trace_types()
    assert loads.calls == 2, "kept again"


def test_the_oldest_kept_readings_go_first(checkpoint, tmp_path, monkeypatch):
    loads, cache = Loads(checkpoint), tmp_path / "kept"
    monkeypatch.setattr(reading, "READINGS_KEPT", 2)
    hypotheses = ["A person is making music .", "Nobody is playing .", "A man plays ."]
    for hypothesis in hypotheses:
        reading.read_pair_kept(loads, checkpoint, "gcnn", PREMISE, hypothesis, cache)
    kept = [reading.kept_reading_path(checkpoint, PREMISE, hypothesis, cache).is_file() for hypothesis in hypotheses]
    assert kept == [False, True, True] and len(list((cache / reading.KEPT_FOLDER).glob(".*.seal"))) == 3  # 2 + types

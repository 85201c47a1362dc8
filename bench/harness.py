"""What every bench script shares: the `--out` option, a report printed as it is measured and written to `--out`
when the script ends, the lines that head and close a table (the command to rerun it, the load average), the
five shipped families, an earlier commit's models, and a Trainer's step timer.

A bench script imports it by name (`from harness import …`): `python bench/x.py` puts bench/ first on sys.path.
Importing it also puts the checkout's root on sys.path, so `import nlivis` finds this checkout's package.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))

from nlivis.models.families import SHIPPED_FAMILIES  # noqa: E402  (torch-free; importable once ROOT is on the path)

SHIPPED = SHIPPED_FAMILIES
"""The five families shipped as snli-small checkpoints (checkpoints/FAMILY-snli-small), in the app's order
(`nlivis.models.families`, the one place that declares them)."""


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

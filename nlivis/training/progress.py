"""Training progress: on stderr, a live bar on a terminal or a plain line every few percent anywhere else; and
for the app, the run's phases as JSON events in its progress file (`ProgressLog`, read by `read_progress`).

A bar redraws itself with carriage returns many times a second; written into a log file (a terminal run's
`2> train.log`, the app's worker log) those frames add up to hundreds of kilobytes that a reader sees as
one unreadable line. When stderr is not a terminal the run prints one line per `PLAIN_LINE_PERCENT` of its
steps instead, with the same numbers.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

from tqdm import tqdm

from nlivis.store.files import atomic_write_text
from nlivis.store.metrics_log import append_json_line, read_metrics_log

PLAIN_LINE_PERCENT = 5
"""A plain progress line every this many percent of the run's steps (and at its last step)."""


def is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def format_duration(seconds: float) -> str:
    """`1:02:03` or `2:03`."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class Progress:
    """Steps done out of `total`, with the latest training numbers (`describe`) and dev score (`postfix`)."""

    def __init__(self, total: int, initial: int, enabled: bool, stream: IO[str] | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.total, self.done, self.initial = total, initial, initial
        self.enabled = enabled
        self.description = ""
        self.postfix_text = ""
        self.started = time.perf_counter()
        self.bar = None
        if enabled and is_terminal(self.stream):
            self.bar = tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True, file=self.stream)
        self.next_line = self._next_mark(initial)

    def _next_mark(self, done: int) -> int:
        """The first step count after `done` at which a plain line is due."""
        every = max(1, self.total * PLAIN_LINE_PERCENT // 100)
        return min(self.total, (done // every + 1) * every)

    def update(self, steps: int = 1) -> None:
        self.done += steps
        if self.bar is not None:
            self.bar.update(steps)
        elif self.enabled and self.done >= self.next_line:
            self._write_line()
            self.next_line = self._next_mark(self.done)

    def describe(self, text: str) -> None:
        """The training window's numbers (loss, accuracy, speed)."""
        self.description = text
        if self.bar is not None:
            self.bar.set_description_str(text, refresh=False)

    def postfix(self, text: str) -> None:
        """The latest select-split score."""
        self.postfix_text = text
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def _write_line(self) -> None:
        elapsed = time.perf_counter() - self.started
        made = self.done - self.initial
        left = elapsed / made * (self.total - self.done) if made > 0 else 0.0
        parts = [f"step {self.done}/{self.total} ({100 * self.done / max(1, self.total):.0f}%)",
                 self.description, self.postfix_text,
                 f"{format_duration(elapsed)} elapsed" + (f", ~{format_duration(left)} left" if self.done < self.total else "")]
        print(" · ".join(part for part in parts if part), file=self.stream, flush=True)


# ------------------------------------------------------------------------------------------ the progress file

PROGRESS_FILE = "progress.jsonl"
"""`<checkpoint root>/.runs/<run name>/progress.jsonl`: what the run is doing, one JSON event a line, for the
Train page (beside the app's run record and worker log, not in the run's own folder, which the finished
checkpoint replaces and whose manifest covers every file)."""
PHASES = ("reading", "training", "evaluating", "saving", "finished", "stopped", "failed")
"""The phases a run passes through, in the order they come; the last three end it."""
ENDED = ("finished", "stopped", "failed")
STEP_EVENT_S = 1.0
"""A training event at most this often (and at the last step): enough for a live page and its ETA."""


class ProgressLog:
    """Appends the run's events to its progress file: `{"time", "phase", …}` with `step` and `total` while
    training, `split` while reading, `error` when failed. A new run starts the file afresh; a resumed one
    appends (marked `"resumed": true`), so the page measures speed over the steps of this process only."""

    def __init__(self, path: Path, fresh: bool, clock: Callable[[], float] = time.time):
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fresh:
            atomic_write_text(self.path, "")
        self.last_step_event = float("-inf")

    def phase(self, phase: str, **fields: Any) -> None:
        """An event of `phase`, written at once."""
        if phase not in PHASES:
            raise ValueError(f"unknown training phase {phase!r}; known: {', '.join(PHASES)}")
        append_json_line(self.path, {"time": self.clock(), "phase": phase, **fields})
        if phase == "training":
            self.last_step_event = self.clock()

    def step(self, done: int, total: int) -> None:
        """A training event for step `done` of `total`, unless one was written less than `STEP_EVENT_S` ago."""
        if done >= total or self.clock() - self.last_step_event >= STEP_EVENT_S:
            self.phase("training", step=done, total=total)


@dataclass(frozen=True)
class RunProgress:
    """Where a run stands, read from its progress file: the latest phase and its event, and the speed of the
    steps this process has made (for the time left)."""

    phase: str
    since: float
    """When the latest phase began (a training phase begins at its first step event)."""
    step: int | None
    total: int | None
    steps_per_s: float | None
    event: dict[str, Any]

    @property
    def fraction(self) -> float:
        return min(1.0, self.step / self.total) if self.step is not None and self.total else 0.0

    def seconds_left(self) -> float | None:
        """The remaining steps at this process's speed; None before two step events."""
        if self.steps_per_s is None or self.step is None or self.total is None:
            return None
        return max(0, self.total - self.step) / self.steps_per_s

    def describe(self, now: float) -> str:
        """"training: step 16 of 30, about 0:12 left" · "evaluating on the select split (0:04)" …"""
        for_how_long = f" ({format_duration(now - self.since)})"
        if self.phase == "reading":
            split = self.event.get("split")
            return "reading the data" + (f": {split}" if split else "") + for_how_long
        if self.phase == "training" and self.step is not None:
            left = self.seconds_left()
            of = f" of {self.total:,}" if self.total is not None else ""  # a hand-edited or foreign event
            return (f"training: step {self.step:,}{of}"
                    + (f", about {format_duration(left)} left" if left is not None and self.step < (self.total or 0)
                       else ""))
        if self.phase == "evaluating":
            return f"evaluating on the select split at step {self.event.get('step', '?')}" + for_how_long
        if self.phase == "saving":
            return str(self.event.get("what", "saving")) + for_how_long
        if self.phase == "stopped":
            return f"stopped at step {self.event.get('step', '?')}"
        if self.phase == "failed":
            return f"failed: {self.event.get('error', 'see its log')}"
        return self.phase


def read_progress(path: Path) -> RunProgress | None:
    """The run's progress from its progress file (half-written last line skipped), or None before any event."""
    events = [event for event in read_metrics_log(path) if event.get("phase") in PHASES
              and isinstance(event.get("time"), (int, float))]
    if not events:
        return None
    last = events[-1]
    start = max((i for i, event in enumerate(events) if event.get("resumed")), default=0)
    steps = [event for event in events[start:] if event.get("phase") == "training"
             and isinstance(event.get("step"), int) and isinstance(event.get("total"), int)]
    speed = None
    if len(steps) >= 2 and steps[-1]["time"] > steps[0]["time"] and steps[-1]["step"] > steps[0]["step"]:
        speed = (steps[-1]["step"] - steps[0]["step"]) / (steps[-1]["time"] - steps[0]["time"])
    since = last["time"]
    for event in reversed(events):  # the first event of the trailing run of this phase (and split)
        if (event.get("phase"), event.get("split")) != (last["phase"], last.get("split")):
            break
        since = event["time"]
    latest_step = steps[-1] if steps else None
    step = last.get("step") if isinstance(last.get("step"), int) else (latest_step or {}).get("step")
    total = last.get("total") if isinstance(last.get("total"), int) else (latest_step or {}).get("total")
    return RunProgress(str(last["phase"]), float(since), step, total, speed, last)

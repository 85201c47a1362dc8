"""Training progress on stderr: a live bar on a terminal, a plain line every few percent anywhere else.

A bar redraws itself with carriage returns many times a second; written into a log file (a terminal run's
`2> train.log`, the app's worker log) those frames add up to hundreds of kilobytes that a reader sees as
one unreadable line. When stderr is not a terminal the run prints one line per `PLAIN_LINE_PERCENT` of its
steps instead, with the same numbers.
"""
from __future__ import annotations

import sys
import time
from typing import IO

from tqdm import tqdm

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

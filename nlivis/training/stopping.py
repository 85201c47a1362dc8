"""Asking a training run to stop: SIGTERM / Ctrl-C, the app's stop event, or a file `<out>/STOP`. The run
finishes its step, saves its state and raises `TrainingStopped`; `--resume` continues it."""
from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

from nlivis.store.checkpoints import STATE_FOLDER
from nlivis.training.run_folder import STOP_FILE


class StopRequested(Exception):
    """Raised inside the step loop to leave it for the save-and-stop path."""


class TrainingStopped(Exception):
    """Training was asked to stop; its state is saved and `resume=True` continues it."""

    def __init__(self, out_dir: Path, step: int):
        super().__init__(f"training stopped at step {step}; state saved in {out_dir / STATE_FOLDER} "
                         f"(continue with --resume)")
        self.out_dir = out_dir
        self.step = step


class StopRequests:
    """Collects stop requests: SIGTERM / Ctrl-C, the app's event (anything with `is_set()`), `<out>/STOP`."""

    def __init__(self, out_dir: Path, stop_event: Any = None):
        self.stop_file = out_dir / STOP_FILE
        self.stop_event = stop_event
        self.signalled = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "StopRequests":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.signalled = True

    def requested(self) -> bool:
        return (self.signalled or self.stop_file.exists()
                or (self.stop_event is not None and bool(self.stop_event.is_set())))

    def clear_file(self) -> None:
        self.stop_file.unlink(missing_ok=True)

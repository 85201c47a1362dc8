"""`<out>/metrics.jsonl`: the live training log the Train page draws curves from, one JSON line per event."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from nlivis.store.files import atomic_write_text


class MetricsLog:
    """`<out>/metrics.jsonl`: one JSON object per line (step, epoch, loss, train_acc, pairs_per_s, lr,
    dev_acc when evaluated, time). Each line is flushed at once so the app can follow a live run."""

    def __init__(self, path: Path, resume_from_step: int | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume_from_step is None:
            self.path.write_text("", encoding="utf-8")
        else:
            self._truncate_after(resume_from_step)

    def _truncate_after(self, step: int) -> None:
        """Drop lines written after the state a resumed run starts from, so the curve has no duplicates."""
        kept = [record for record in read_metrics_log(self.path) if record.get("step", 0) <= step]
        atomic_write_text(self.path, "".join(json.dumps(record) + "\n" for record in kept))

    def write(self, **record: Any) -> None:
        record.setdefault("time", time.time())
        append_json_line(self.path, record)


def append_json_line(path: Path, record: dict[str, Any]) -> None:
    """One JSON line appended and flushed at once, so a reader following the file (the metrics log, a run's
    progress file) sees each record whole or, for the line being written, not at all (`read_metrics_log`
    skips a half-written last line)."""
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
        handle.flush()


def read_metrics_log(path: Path) -> list[dict[str, Any]]:
    """Lines of a metrics log; a half-written last line (a live run) is skipped."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records

"""Scores from gold and predicted labels, and the live metrics log the app draws curves from."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence


@dataclass(frozen=True)
class LabelScores:
    label: str
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True)
class ClassificationReport:
    """Accuracy, per-label precision/recall/F1 and the confusion matrix (rows gold, columns predicted)."""

    labels: tuple[str, ...]
    accuracy: float
    count: int
    per_label: tuple[LabelScores, ...]
    confusion: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": list(self.labels),
            "accuracy": self.accuracy,
            "count": self.count,
            "per_label": {s.label: {"precision": s.precision, "recall": s.recall, "f1": s.f1, "support": s.support}
                          for s in self.per_label},
            "confusion": {"rows": "gold", "columns": "predicted", "matrix": [list(r) for r in self.confusion]},
        }

    def format_table(self) -> str:
        """Plain-text tables for the terminal."""
        width = max(len(label) for label in self.labels) + 2
        lines = [f"accuracy: {self.accuracy:.4f} ({self.count} pairs)", "",
                 f"{'label':<{width}}{'precision':>10}{'recall':>10}{'f1':>10}{'support':>9}"]
        for s in self.per_label:
            lines.append(f"{s.label:<{width}}{s.precision:>10.4f}{s.recall:>10.4f}{s.f1:>10.4f}{s.support:>9}")
        lines += ["", "confusion matrix (rows gold, columns predicted):",
                  " " * width + "".join(f"{label:>15}" for label in self.labels)]
        for label, row in zip(self.labels, self.confusion):
            lines.append(f"{label:<{width}}" + "".join(f"{n:>15}" for n in row))
        return "\n".join(lines)


def classification_report(gold: Sequence[int], predicted: Sequence[int], labels: Sequence[str]) -> ClassificationReport:
    """Scores over label indices; a label never predicted (or never gold) scores 0 rather than failing."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    k = len(labels)
    confusion = [[0] * k for _ in range(k)]
    for g, p in zip(gold, predicted):
        confusion[g][p] += 1
    per_label = []
    for i, label in enumerate(labels):
        true_positive = confusion[i][i]
        predicted_i = sum(confusion[r][i] for r in range(k))
        support = sum(confusion[i])
        precision = true_positive / predicted_i if predicted_i else 0.0
        recall = true_positive / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_label.append(LabelScores(label, precision, recall, f1, support))
    correct = sum(confusion[i][i] for i in range(k))
    return ClassificationReport(tuple(labels), correct / len(gold) if gold else 0.0, len(gold), tuple(per_label),
                                tuple(tuple(r) for r in confusion))


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
        text = "".join(json.dumps(record) + "\n" for record in kept)
        self.path.write_text(text, encoding="utf-8")

    def write(self, **record: Any) -> None:
        record.setdefault("time", time.time())
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.flush()


def read_metrics_log(path: Path) -> list[dict[str, Any]]:
    """Lines of a metrics log; a half-written last line (a live run) is skipped."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records

"""Scores from gold and predicted labels: accuracy, per-label precision/recall/F1, the confusion matrix."""
from __future__ import annotations

from dataclasses import dataclass
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



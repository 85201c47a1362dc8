"""One pair read by one model: the tokens as it saw them, its class probabilities and its typed trace — what
the explorer, the model views and the pair comparisons draw."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlivis.inference import LoadedCheckpoint
    from nlivis.models.trace import Trace


@dataclass
class PairReading:
    """One model's reading of one pair: tokens as it saw them, class probabilities and its typed trace."""

    model: str
    premise: str
    hypothesis: str
    premise_tokens: list[str]
    hypothesis_tokens: list[str]
    labels: list[str]
    probs: list[float]
    trace: Trace
    notices: list[str] = field(default_factory=list)
    """What the user should know about how the pair was read (cut-offs, unknown words)."""

    @property
    def predicted(self) -> str:
        return self.labels[max(range(len(self.probs)), key=self.probs.__getitem__)]


def read_pair(loaded: LoadedCheckpoint, name: str, premise: str, hypothesis: str) -> PairReading:
    """How the loaded checkpoint `name` reads the pair (a ValueError when it cannot, e.g. an empty sentence)."""
    from nlivis.inference import predict_pair  # runs the model: torch loads here, not with the reading's type

    prediction = predict_pair(loaded, premise, hypothesis, trace=True)
    labels = list(loaded.labels)
    return PairReading(name, premise, hypothesis, list(prediction.premise_tokens), list(prediction.hypothesis_tokens),
                       labels, [float(prediction.probabilities[label]) for label in labels], prediction.trace.detach(),
                       list(prediction.notices))

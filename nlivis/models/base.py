"""What every model shares: its config's common fields and the forward/trace/loss contract."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import torch
from torch import nn

from nlivis.features.batch import Batch
from nlivis.models.families import Family
from nlivis.models.trace import OutputDistribution, Representation, Trace


@dataclass
class ModelConfig:
    """Fields every model has. `vocab_size`, `char_vocab_size`, `word_dim` and `num_classes` are
    filled in by training from the vocabulary, the embedding source and the dataset."""

    vocab_size: int = 100
    """Rows of the word embedding (PAD = 0, UNK = 1)."""
    word_dim: int = 300
    """Width of a word vector (300 for GloVe, 384 for MiniLM word pieces)."""
    freeze_word_embeddings: bool = True
    """Keep pretrained word vectors fixed (lets checkpoints share one embedding file)."""
    char_vocab_size: int = 100
    """Rows of the char embedding (PAD = 0, UNK = 1)."""
    num_classes: int = 3
    """3 for NLI (entailment, neutral, contradiction), 2 for Quora."""
    dropout: float = 0.1
    """Dropout rate; schedules (DIIN's decaying keep-rate) change it during training."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class MatchingModel(nn.Module):
    """Base of every sentence-matching model.

    Subclasses implement `match(batch, trace) -> logits [B, K]` and add typed entries to `trace`
    when it is not None. `forward(batch)` returns logits; `forward(batch, trace=True)` returns
    `(logits, Trace)`; the trace always ends with the output distribution.
    """

    name: ClassVar[str] = ""
    family: ClassVar[Family]
    """Its family's label, order, colour and paper (set by `registry.register` from `families.FAMILIES`)."""
    config_class: ClassVar[type[ModelConfig]] = ModelConfig
    output_kind: ClassVar[str] = "softmax"
    max_inference_batch: ClassVar[int] = 0
    """Largest batch an evaluation forward pass should see (0 = no cap), chosen by measurement: on CPU
    larger batches were slower per pair (bench/eval_batch.py, bench/RESULTS.md)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config

    def trace_types(self) -> frozenset[type]:
        """The trace entry types this model, as configured, emits: what views can draw from it, known
        before any pair is run (LIT's specs). Every model emits its output distribution and a pooled
        representation; subclasses add the rest from their config (an ablation without gates has none)."""
        return frozenset({OutputDistribution, Representation})

    def match(self, batch: Batch, trace: Trace | None) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, batch: Batch, trace: bool = False):
        record = Trace() if trace else None
        logits = self.match(batch, record)
        if record is None:
            return logits
        record.add("output", OutputDistribution(self.probabilities(logits).detach(), kind=self.output_kind))
        return logits, record

    def probabilities(self, logits: torch.Tensor) -> torch.Tensor:
        """Class probabilities from logits (softmax unless the model says otherwise)."""
        return torch.softmax(logits, dim=-1)

    def loss(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Training loss for a batch (cross-entropy unless the model says otherwise)."""
        return nn.functional.cross_entropy(logits, labels)

    def regularization_terms(self) -> dict[str, torch.Tensor]:
        """Model-specific penalties the trainer adds with its own weights (e.g. DIIN's
        `encoder_difference`). Empty by default."""
        return {}

    @property
    def token_representation(self) -> nn.Module:
        """The module whose output is the whole per-token input representation (word vector, and the char
        vector, POS one-hot and exact-match flag where this model uses them), called once for the premise
        and then once for the hypothesis in every forward pass: attribution hooks its output. Every model's
        `features` is that module unless it concatenates more after it (GCNN's char composer)."""
        return self.features  # type: ignore[attr-defined]

    @property
    def word_embedding(self) -> nn.Embedding:
        """The vocabulary rows; every model keeps them at `self.features.word_embedding`."""
        return self.features.word_embedding  # type: ignore[attr-defined]

    def load_word_vectors(self, vectors: torch.Tensor) -> None:
        """Copy pretrained rows [vocab_size, word_dim] into the word embedding."""
        weight = self.word_embedding.weight
        if tuple(vectors.shape) != tuple(weight.shape):
            raise ValueError(f"word vectors have shape {tuple(vectors.shape)}, the model expects {tuple(weight.shape)}")
        with torch.no_grad():
            weight.copy_(vectors.to(weight.dtype))

    def count_parameters(self, include_word_embeddings: bool = False) -> int:
        """Trainable-architecture parameters; word embeddings excluded by default, as the papers count."""
        skip = self.word_embedding.weight
        return sum(p.numel() for p in self.parameters() if include_word_embeddings or p is not skip)

"""Typed trace entries: what a model declares it emits, so views can choose what they can draw.

Every tensor keeps the batch axis first (B). Token axes are named by which sentence they index
("premise" or "hypothesis"); views label them with `Batch.premise_tokens` / `hypothesis_tokens` and
must never reach into a model's attributes. A model that lacks an internal simply emits no entry of
that type, and the view says so.

Tracing is opt-in: models receive `trace: Trace | None` and guard every `trace.add(...)` with
`if trace is not None`, so with tracing off nothing is built or kept.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Literal, TypeVar, get_args

if TYPE_CHECKING:  # entries hold tensors, but a figure of stored numbers that names their types needs no torch
    import torch

Sentence = Literal["premise", "hypothesis"]


@dataclass
class Alignment:
    """Attention / alignment weights [B, R, C]; rows index `rows`, columns index `cols`.

    kind: "softmax" or "sparsemax" (rows sum to 1 over real columns, zero on padded columns) or
    "similarity" (raw scores, no normalisation). direction reads "p→h" when premise rows attend over
    hypothesis columns, "h→p" for the reverse, "p→p"/"h→h" for intra-sentence attention.
    """

    weights: torch.Tensor
    rows: Sentence
    cols: Sentence
    layer: int
    direction: str
    kind: Literal["softmax", "sparsemax", "similarity"] = "softmax"
    head: int | None = None
    """The attention head (counted from 1) of a multi-head layer (MiniLM), so a view can lay heads out as a
    layer × head grid; None for a layer with one alignment per direction."""


@dataclass
class Gate:
    """Gate activations [B, T, d] in [0, 1] (or a transform in [-1, 1] when `name` says so) for `tokens`."""

    values: torch.Tensor
    tokens: Sentence
    layer: int
    name: str


@dataclass
class FeatureMaps:
    """2-D maps over the premise×hypothesis grid [B, C, P', H'] (P', H' shrink after pooling).

    `stage` names where they were taken ("interaction", "scale_down", "dense_block_1", ...).
    `token_axes` is True while P', H' still index tokens (so axes can be labelled by words).
    """

    maps: torch.Tensor
    stage: str
    token_axes: bool = True


@dataclass
class MemoryKeys:
    """AMN memory addressing weights [B, T, S]: per time step (token) a distribution over S slots."""

    weights: torch.Tensor
    tokens: Sentence
    layer: int = 1
    """Encoder layer, counted from 1 as in every other entry (AMN's encoder has one)."""


@dataclass
class Representation:
    """A pooled vector per pair [B, d], e.g. the matching vector the projection view embeds."""

    vector: torch.Tensor
    name: str = "pair"


@dataclass
class OutputDistribution:
    """Class probabilities [B, K] and how they were normalised ("softmax" or "sparsemax")."""

    probs: torch.Tensor
    kind: Literal["softmax", "sparsemax"] = "softmax"


TraceEntry = Alignment | Gate | FeatureMaps | MemoryKeys | Representation | OutputDistribution
E = TypeVar("E", Alignment, Gate, FeatureMaps, MemoryKeys, Representation, OutputDistribution)
ENTRY_TYPES: dict[str, type] = {kind.__name__: kind for kind in get_args(TraceEntry)}
"""Each entry type by its name: how a trace written as plain data (`workflows.reading`'s kept readings) and a
model's declared types are named on disk."""


class Trace:
    """An ordered mapping name → typed entry, in the order the model computed them."""

    def __init__(self) -> None:
        self._entries: "OrderedDict[str, TraceEntry]" = OrderedDict()

    def add(self, name: str, entry: TraceEntry) -> None:
        if name in self._entries:
            raise KeyError(f"trace entry {name!r} written twice")
        self._entries[name] = entry

    def __getitem__(self, name: str) -> TraceEntry:
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self):
        return self._entries.items()

    def of_type(self, kind: type[E]) -> "OrderedDict[str, E]":
        """Entries of one type, in computation order."""
        return OrderedDict((n, e) for n, e in self._entries.items() if isinstance(e, kind))

    def detach(self) -> "Trace":
        """A copy with every tensor detached and on the CPU, safe to keep between app runs."""
        import torch  # deferred (see the imports): a trace to detach was made by a model, so torch is loaded

        out = Trace()
        for name, entry in self._entries.items():
            values = {k: (v.detach().float().cpu() if isinstance(v, torch.Tensor) else v)
                      for k, v in vars(entry).items()}
            out.add(name, type(entry)(**values))
        return out

    def as_arrays(self) -> "Trace":
        """A copy with every tensor as a float32 numpy array: what a pair's reading keeps between app runs and on
        disk (`workflows.reading`), so whatever draws or reads it back needs no torch."""
        import torch  # deferred (see the imports): a trace of tensors was made by a model, so torch is loaded

        out = Trace()
        for name, entry in self._entries.items():
            values = {k: (v.detach().float().cpu().numpy() if isinstance(v, torch.Tensor) else v)
                      for k, v in vars(entry).items()}
            out.add(name, type(entry)(**values))
        return out

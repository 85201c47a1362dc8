"""What a checkpoint's config.json says without its weights, and without torch: the feature settings its pairs
were made with (cut-offs and what they cut) and `DescribedCheckpoint` — its listing entry, label order and feature
settings — so a page that shows only recorded predictions (Error analysis) names, colours and labels the models and
counts what their cut-offs shorten without loading them. `inference.load_checkpoint` reads the same facts through
`described_checkpoint`, the one reading of them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Mapping, Sized

from nlivis.features.chars import DEFAULT_MAX_CHARS
from nlivis.features.exact_match import EXACT_MATCH_RULES
from nlivis.store.checkpoints import (CheckpointError, CheckpointInfo, check_files, check_inside_root, checkpoint_info,
                                      read_json)

MAX_CUTOFF_TOKENS = 10_000
"""Largest token cut-off: with `pad_to_cutoff` every batch is that wide (and a char tensor
`max_chars` times wider), so a cut-off of 10**12 in a config would fail at the first batch, not at the
check. The papers cut at 24 to 70 tokens; MultiNLI's longest premise has about 200."""
MAX_WORD_CHARS = 100
"""Largest `max_chars`: every token is padded to it (BERT's word pieces stop at 100 characters too)."""

MAX_WORD_PIECES = 16
"""Most word pieces kept per word: every word is padded to that many (BERT splits few words into more than 8)."""


@dataclass(frozen=True)
class FeatureSettings:
    """How pairs become tensors; saved with every checkpoint (`to_dict` / `from_dict`).

    max_premise_len / max_hypothesis_len: hard cut-offs in tokens (defaults: DIIN's 48; each config in
        configs/ sets its paper's values, with the source in a comment).
    max_chars: characters kept per word (default 16, DIIN and ESAN).
    exact_match_rule: "form_or_lemma" (default, the DIIN paper's definition) or "form".
    pad_to_cutoff: pad every batch to the cut-offs instead of its longest sentence (default False;
        True for models whose layer sizes depend on the sentence length).
    word_pieces: BERT word pieces kept per word in `Batch.premise_pieces` / `hypothesis_pieces` (0, the
        default: none are made; models that read word pieces, MiniLM, set it; see `features.wordpieces`).
    """

    max_premise_len: int = 48
    max_hypothesis_len: int = 48
    max_chars: int = DEFAULT_MAX_CHARS
    exact_match_rule: str = "form_or_lemma"
    pad_to_cutoff: bool = False
    word_pieces: int = 0

    def __post_init__(self) -> None:
        for name, most in (("max_premise_len", MAX_CUTOFF_TOKENS), ("max_hypothesis_len", MAX_CUTOFF_TOKENS),
                           ("max_chars", MAX_WORD_CHARS)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise ValueError(f"feature setting {name} must be an integer from 1 to {most:,}; got {value!r}")
        if self.exact_match_rule not in EXACT_MATCH_RULES:
            raise ValueError(f"feature setting exact_match_rule must be one of {EXACT_MATCH_RULES}; "
                             f"got {self.exact_match_rule!r}")
        if (not isinstance(self.word_pieces, int) or isinstance(self.word_pieces, bool)
                or not 0 <= self.word_pieces <= MAX_WORD_PIECES):
            raise ValueError(f"feature setting word_pieces must be an integer from 0 to {MAX_WORD_PIECES}; "
                             f"got {self.word_pieces!r}")
        if not isinstance(self.pad_to_cutoff, bool):
            raise ValueError(f"feature setting pad_to_cutoff must be true or false; got {self.pad_to_cutoff!r}")

    def truncation(self, premise: Sized, hypothesis: Sized) -> "Truncation":
        """Tokens before and after the cut-offs for one pair (its analyses, or just their tokens)."""
        return Truncation(len(premise), min(len(premise), self.max_premise_len),
                          len(hypothesis), min(len(hypothesis), self.max_hypothesis_len))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "FeatureSettings":
        """Rebuild from `to_dict` output; unknown keys are an error naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown feature settings {unknown}; known: {sorted(known)}")
        return cls(**data)


@dataclass(frozen=True)
class Truncation:
    """Token counts before and after the cut-offs for one pair."""

    premise_tokens: int
    premise_kept: int
    hypothesis_tokens: int
    hypothesis_kept: int

    @property
    def any(self) -> bool:
        return self.premise_kept < self.premise_tokens or self.hypothesis_kept < self.hypothesis_tokens

    def describe(self) -> str:
        """A sentence for the user, e.g. "premise cut from 60 to 48 tokens"; "" when nothing was cut."""
        parts = [f"{name} cut from {total} to {kept} tokens"
                 for name, total, kept in (("premise", self.premise_tokens, self.premise_kept),
                                           ("hypothesis", self.hypothesis_tokens, self.hypothesis_kept))
                 if kept < total]
        return "; ".join(parts)


@dataclass(frozen=True)
class DescribedCheckpoint:
    """A checkpoint as its config.json and metrics.json describe it: the listing entry (family, protocol …), the
    order of its labels (its logits') and its feature settings."""

    info: CheckpointInfo
    labels: tuple[str, ...]
    settings: FeatureSettings


def described_checkpoint(folder: Path, config: Mapping[str, Any], metrics: Mapping[str, Any]) -> DescribedCheckpoint:
    """The description of the checkpoint in `folder` from its parsed config.json and metrics.json; a config that
    lacks its labels (a list of distinct names) or feature settings, or has wrong ones, is a `CheckpointError`."""
    info = checkpoint_info(folder, config, metrics)
    labels = config.get("labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(label, str) for label in labels) \
            or len(set(labels)) != len(labels):
        raise CheckpointError(folder, f"config.json 'labels' must be a list of distinct label names, got {labels!r:.200}")
    try:
        return DescribedCheckpoint(info, tuple(labels), FeatureSettings(**config["features"]["featurizer"]))
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(folder, f"config.json cannot rebuild the model or featurizer ({type(error).__name__}: "
                                      f"{error})") from error


def describe_checkpoint(folder: str | Path) -> DescribedCheckpoint:
    """The description of a checkpoint folder after the listing's cheap checks (files there with their sizes,
    JSON that parses); its weights are neither read nor hashed."""
    folder = Path(folder)
    check_inside_root(folder)
    check_files(folder, verify_hashes=False)
    return described_checkpoint(folder, read_json(folder, "config.json"), read_json(folder, "metrics.json"))

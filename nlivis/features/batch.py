"""The tensor batch every model consumes.

Shapes (B batch, P premise length, H hypothesis length, C characters per word):
    premise_ids / hypothesis_ids              long  [B, P] / [B, H]   word ids, 0 = PAD, 1 = UNK
    premise_mask / hypothesis_mask            bool  [B, P] / [B, H]   True on real tokens
    premise_chars / hypothesis_chars          long  [B, P, C] / [B, H, C]  char ids, 0 = PAD
    premise_pos / hypothesis_pos              long  [B, P] / [B, H]   index into features.pos.PTB_TAGS (0 = pad/unknown)
    premise_exact_match / hypothesis_exact_match  float [B, P] / [B, H]  1.0 where the token also occurs in the other sentence
    labels                                    long  [B] or None
    premise_pieces / hypothesis_pieces        long  [B, P, K] / [B, H, K] or None  BERT word-piece ids of each
                                              word (0 = PAD; K = `FeatureSettings.word_pieces`), for models
                                              that read word pieces (MiniLM); None where none were asked for
Padding is always on the right. `premise_tokens`/`hypothesis_tokens` keep the (cut) token strings so
views can label axes; `ids` are the pair ids.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import torch


@dataclass
class Batch:
    premise_ids: torch.Tensor
    hypothesis_ids: torch.Tensor
    premise_mask: torch.Tensor
    hypothesis_mask: torch.Tensor
    premise_chars: torch.Tensor
    hypothesis_chars: torch.Tensor
    premise_pos: torch.Tensor
    hypothesis_pos: torch.Tensor
    premise_exact_match: torch.Tensor
    hypothesis_exact_match: torch.Tensor
    labels: torch.Tensor | None = None
    ids: list[str] = field(default_factory=list)
    premise_tokens: list[list[str]] = field(default_factory=list)
    hypothesis_tokens: list[list[str]] = field(default_factory=list)
    premise_pieces: torch.Tensor | None = None
    hypothesis_pieces: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> "Batch":
        """A copy with every tensor on `device` (lists stay as they are)."""
        moved = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, torch.Tensor):
                moved[f.name] = value.to(device, non_blocking=True)
        return replace(self, **moved)

    def __len__(self) -> int:
        return int(self.premise_ids.shape[0])

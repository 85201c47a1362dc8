"""Masked normalisation and pooling shared by every model.

Masks are bool tensors, True on real tokens. A fully masked row (an empty sentence cannot reach a
model, but padded batch rows of size zero can in tests) yields zeros rather than NaN.
"""
from __future__ import annotations

import torch

NEG_INF = float("-inf")


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax over `dim` where masked-out positions get exactly zero weight.

    `mask` broadcasts against `scores` (e.g. [B, 1, H] for a [B, P, H] score matrix).
    """
    scores = scores.masked_fill(~mask, NEG_INF)
    weights = torch.softmax(scores, dim=dim)
    return torch.nan_to_num(weights, nan=0.0)


def masked_max(values: torch.Tensor, mask: torch.Tensor, dim: int = 1) -> torch.Tensor:
    """Max over the token axis `dim` of [B, T, d] ignoring padding (mask [B, T])."""
    filled = values.masked_fill(~mask.unsqueeze(-1), NEG_INF)
    out = filled.max(dim=dim).values
    return torch.where(torch.isinf(out), torch.zeros_like(out), out)


def masked_mean(values: torch.Tensor, mask: torch.Tensor, dim: int = 1) -> torch.Tensor:
    """Mean over the token axis `dim` of [B, T, d] counting only real tokens (mask [B, T])."""
    m = mask.unsqueeze(-1).to(values.dtype)
    return (values * m).sum(dim) / m.sum(dim).clamp(min=1.0)


def zero_padding(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Set padded positions of [B, T, d] to zero so convolutions over them see no stale values."""
    return values * mask.unsqueeze(-1).to(values.dtype)

"""Step- and epoch-dependent settings, as pure functions of the step so a resumed run recomputes them.

DIIN (Gong et al. 2018, papers/001 §4.2) trains with three schedules that the other papers do not use:
- a dropout keep-rate that starts at `1 - dropout` and decays exponentially by 0.977 every 10,000 steps
  (`tf.train.exponential_decay`, staircase=False, so the decay is smooth between the 10k marks);
- an L2 penalty over the weight matrices whose weight ramps up along a sigmoid:
  `L2Ratio_t = sigmoid((t - L2FullStep/2) * 8 / (L2FullStep/2)) * L2FullRatio` (eq. 8), i.e. half the full
  weight at the midpoint and about the full weight at the midpoint + ramp steps;
- an SGD fallback (lr 3e-4) once Adadelta stops improving the best dev accuracy.
Every model may use the per-epoch exponential learning-rate decay.
"""
from __future__ import annotations

import math

import torch
from torch import nn


def dropout_keep_rate(step: int, initial_keep_rate: float, decay_rate: float, decay_steps: int) -> float:
    """Keep-rate after `step` optimizer steps: `initial * decay_rate ** (step / decay_steps)` (smooth)."""
    if decay_steps <= 0:
        raise ValueError(f"dropout_keep_decay_steps must be positive, got {decay_steps}")
    return initial_keep_rate * decay_rate ** (step / decay_steps)


def set_dropout_rate(model: nn.Module, rate: float) -> None:
    """Set `p` of every `nn.Dropout` (and its 1d/2d/3d variants) in `model`."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout rate must lie in [0, 1), got {rate}")
    for module in model.modules():
        if isinstance(module, nn.modules.dropout._DropoutNd):
            module.p = rate


def sigmoid_ramp_weight(step: int, full_weight: float, midpoint_step: int, ramp_steps: int) -> float:
    """DIIN's eq. 8: `full_weight * sigmoid((step - midpoint) * 8 / ramp_steps)`; half at the midpoint."""
    if ramp_steps <= 0:
        raise ValueError(f"l2_ramp_steps must be positive, got {ramp_steps}")
    x = (step - midpoint_step) * 8.0 / ramp_steps
    return full_weight / (1.0 + math.exp(-x)) if x > -700 else 0.0


def weight_matrices(model: nn.Module) -> list[torch.Tensor]:
    """Trainable parameters of two or more dimensions (kernels), embedding tables excluded."""
    embedding_weights = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    return [p for p in model.parameters() if p.requires_grad and p.dim() >= 2 and id(p) not in embedding_weights]


def l2_penalty(model: nn.Module) -> torch.Tensor:
    """Sum of `tf.nn.l2_loss` (= sum of squares / 2) over the model's weight matrices."""
    matrices = weight_matrices(model)
    if not matrices:
        return torch.zeros(())
    return sum(0.5 * (w.float() ** 2).sum() for w in matrices)  # type: ignore[return-value]


def warmup_factor(step: int, warmup_steps: int) -> float:
    """BERT's linear warm-up: the share of the learning rate optimizer step `step` (0-based) uses, `(step + 1) /
    warmup_steps` until it reaches 1 (always 1 without warm-up)."""
    return min(1.0, (step + 1) / warmup_steps) if warmup_steps > 0 else 1.0


def learning_rate_for_epoch(base_lr: float, decay_per_epoch: float, epoch: int) -> float:
    """Exponential decay per finished epoch: `base_lr * decay_per_epoch ** epoch` (1.0 = constant)."""
    return base_lr * decay_per_epoch ** epoch

"""The papers' optimizers by name, and DIIN's SGD fallback."""
from __future__ import annotations

import torch
from torch import nn

from nlivis.training.config import TrainingSettings


def make_optimizer(name: str, parameters: list[nn.Parameter], settings: TrainingSettings) -> torch.optim.Optimizer:
    """One of adam | adadelta | adagrad | rmsprop | sgd with the [training] lr / weight decay / eps."""
    lr, decay, eps = settings.lr, settings.weight_decay, settings.eps
    if name == "adam":
        return torch.optim.Adam(parameters, lr=lr, weight_decay=decay, eps=eps)
    if name == "adadelta":
        return torch.optim.Adadelta(parameters, lr=lr, rho=settings.adadelta_rho, eps=eps, weight_decay=decay)
    if name == "adagrad":
        return torch.optim.Adagrad(parameters, lr=lr, weight_decay=decay, eps=eps)
    if name == "rmsprop":
        return torch.optim.RMSprop(parameters, lr=lr, weight_decay=decay, eps=eps)
    if name == "sgd":
        return torch.optim.SGD(parameters, lr=lr, weight_decay=decay)
    raise ValueError(f"optimizer {name!r} unknown")


def sgd_fallback(parameters: list[nn.Parameter], settings: TrainingSettings) -> torch.optim.Optimizer:
    return torch.optim.SGD(parameters, lr=settings.sgd_fallback_lr, weight_decay=settings.weight_decay)

"""Seeding, and saving and restoring every random generator a training run draws from (for --resume)."""
from __future__ import annotations

import random
from typing import Any, Mapping

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's generators (numpy takes the seed modulo 2^32)."""
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    torch.manual_seed(seed)


def rng_snapshot() -> tuple[dict[str, torch.Tensor], Any, dict[str, Any]]:
    """(tensors for safetensors, python state as JSON, numpy state as JSON + tensor)."""
    tensors = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        tensors["cuda"] = torch.stack(torch.cuda.get_rng_state_all())
    kind, keys, position, has_gauss, cached = np.random.get_state()
    tensors["numpy_keys"] = torch.from_numpy(np.asarray(keys, dtype=np.int64))
    version, internal, gauss_next = random.getstate()
    return tensors, [version, list(internal), gauss_next], {"kind": kind, "position": int(position),
                                                            "has_gauss": int(has_gauss), "cached": float(cached)}


def rng_restore(tensors: Mapping[str, torch.Tensor], python_state: Any, numpy_state: Mapping[str, Any]) -> None:
    """Put back what `rng_snapshot` saved, so a resumed run draws the numbers an uninterrupted one would."""
    torch.set_rng_state(tensors["torch"].to(torch.uint8))
    if "cuda" in tensors and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(list(tensors["cuda"].to(torch.uint8)))
    np.random.set_state((numpy_state["kind"], tensors["numpy_keys"].numpy().astype(np.uint32),
                         numpy_state["position"], numpy_state["has_gauss"], numpy_state["cached"]))
    version, internal, gauss_next = python_state
    random.setstate((version, tuple(internal), gauss_next))

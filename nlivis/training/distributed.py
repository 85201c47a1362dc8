"""Multi-GPU (or multi-process CPU) training with DistributedDataParallel, under `torchrun`.

The same entry point trains on one device or many:

    python -m nlivis train --config diin --dataset snli-small --data-dir ../shared/data --out checkpoints/diin
    torchrun --standalone --nproc_per_node 4 -m nlivis train --config diin --dataset snli-small \
        --data-dir ../shared/data --out checkpoints/diin --device cuda

`torchrun` sets RANK, WORLD_SIZE and LOCAL_RANK; `DistributedContext.from_environment` reads them and
`setup` joins the process group (NCCL on CUDA, gloo on CPU). Each process builds the same length-bucketed
batch list from the same seed and takes every `world_size`-th batch (`shard_batches`), so one step
consumes `world_size × batch_size` pairs and all processes take the same number of steps. DDP averages the
gradients; only rank 0 evaluates on the select split, writes metrics, training state and the checkpoint,
and broadcasts the dev accuracy so every rank makes the same schedule decisions (SGD fallback). Dropout
draws differ per rank (seed + rank). A resumed multi-process run restores rank 0's RNG state on every rank
(offset by rank), so it continues correctly but is not bit-identical to an uninterrupted one; a
single-process resumed run is bit-identical.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence, TypeVar

import torch
import torch.distributed as dist
from torch import nn

T = TypeVar("T")


@dataclass(frozen=True)
class DistributedContext:
    """This process's place in the job; a plain single-process run is rank 0 of 1."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0 alone evaluates and writes files."""
        return self.rank == 0

    @classmethod
    def from_environment(cls) -> "DistributedContext":
        """Read torchrun's RANK / WORLD_SIZE / LOCAL_RANK (absent: a single process)."""
        try:
            world_size = int(os.environ.get("WORLD_SIZE", "1"))
            rank = int(os.environ.get("RANK", "0"))
            local_rank = int(os.environ.get("LOCAL_RANK", str(rank)))
        except ValueError as error:
            raise ValueError(f"torchrun environment variables are not integers ({error})") from error
        if world_size > 1 and not 0 <= rank < world_size:
            raise ValueError(f"RANK {rank} is outside WORLD_SIZE {world_size}")
        return cls(rank, world_size, local_rank)


def resolve_device(request: str, context: DistributedContext) -> torch.device:
    """auto → CUDA when available, else CPU; under torchrun each process gets cuda:LOCAL_RANK."""
    if request not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device {request!r} unknown; choose auto, cpu or cuda")
    use_cuda = request == "cuda" or (request == "auto" and torch.cuda.is_available())
    if use_cuda and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was asked for, but torch sees no CUDA device")
    if not use_cuda:
        return torch.device("cpu")
    index = context.local_rank if context.enabled else 0
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


def setup(context: DistributedContext, device: torch.device) -> None:
    """Join the process group (NCCL for CUDA, gloo for CPU) when running under torchrun."""
    if context.enabled and not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo",
                                rank=context.rank, world_size=context.world_size)


def teardown(context: DistributedContext) -> None:
    if context.enabled and dist.is_initialized():
        dist.destroy_process_group()


def shard_batches(batches: Sequence[T], context: DistributedContext) -> list[T]:
    """Every `world_size`-th batch starting at `rank`, cut so that all ranks get the same count."""
    per_rank = len(batches) // context.world_size if context.enabled else len(batches)
    if context.enabled and per_rank == 0:
        raise ValueError(f"{len(batches)} batches cannot feed {context.world_size} processes; use a smaller batch size")
    return list(batches[context.rank::context.world_size][:per_rank])


def wrap_model(model: nn.Module, context: DistributedContext, device: torch.device) -> nn.Module:
    """DDP around `model` when distributed (frozen word embeddings are simply not synchronised)."""
    if not context.enabled:
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(model, device_ids=device_ids, find_unused_parameters=True)


def broadcast_value(value: float, context: DistributedContext, device: torch.device) -> float:
    """Rank 0's `value` on every rank."""
    if not context.enabled:
        return value
    tensor = torch.tensor([value], dtype=torch.float64, device=device)
    dist.broadcast(tensor, src=0)
    return float(tensor.item())


def any_rank(flag: bool, context: DistributedContext, device: torch.device) -> bool:
    """True on every rank when any rank's flag is True (a stop request seen by one stops all)."""
    if not context.enabled:
        return flag
    tensor = torch.tensor([1 if flag else 0], dtype=torch.int32, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return bool(tensor.item())


def barrier(context: DistributedContext) -> None:
    if context.enabled:
        dist.barrier()

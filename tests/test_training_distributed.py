"""DistributedDataParallel code path: two CPU processes (gloo) train the tiny model; rank 0 writes."""
from __future__ import annotations

import json
import os
import socket

import pytest
import torch.multiprocessing as mp

from nlivis.inference import load_checkpoint
from nlivis.store.dynamics import read_dynamics
from nlivis.training.distributed import DistributedContext, shard_batches
from tests.fixtures.training.helpers import FIXTURE_DIR, train_tiny


def test_shards_are_disjoint_and_equal_in_size():
    batches = [[i] for i in range(11)]
    shards = [shard_batches(batches, DistributedContext(rank, 3, rank)) for rank in range(3)]
    assert [len(s) for s in shards] == [3, 3, 3]
    seen = [b[0] for s in shards for b in s]
    assert len(seen) == len(set(seen))
    assert shard_batches(batches, DistributedContext()) == batches


def test_context_reads_torchrun_variables(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("LOCAL_RANK", "0")
    context = DistributedContext.from_environment()
    assert (context.rank, context.world_size, context.local_rank, context.enabled, context.is_main) == (2, 4, 0, True, False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _worker(rank: int, world_size: int, port: int, out_dir: str, cache_dir: str) -> None:
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
    train_tiny(out_dir, cache_dir)


@pytest.mark.slow
def test_two_gloo_processes_train_and_only_rank_0_writes(tmp_path):
    from nlivis.data.protocols import SplitRef
    from nlivis.features.dataset import load_split_analysed

    cache = tmp_path / "cache"
    for split in ("train", "dev", "test"):  # fill the analysis cache once, before the workers read it
        load_split_analysed(SplitRef("snli", split), FIXTURE_DIR, cache)
    out = tmp_path / "root" / "ddp"
    mp.spawn(_worker, args=(2, _free_port(), str(out), str(cache)), nprocs=2, join=True)
    loaded = load_checkpoint(out)
    config = json.loads((out / "config.json").read_text())
    # 40 pairs / batch 8 = 5 batches per epoch, 2 per rank (the odd one dropped) → 2 steps × 2 epochs
    assert config["steps"] == 4 and config["pairs_seen"] == 4 * 2 * 8
    assert loaded.metrics["best_dev_accuracy"] is not None
    # both ranks' training dynamics gathered: per epoch the 32 pairs of the 4 batches trained on, the odd
    # batch's 8 pairs recorded as not trained on
    dynamics = read_dynamics(out)
    assert dynamics.epochs == 2 and dynamics.seen().sum(axis=1).tolist() == [32, 32]
    assert ((dynamics.probabilities()[dynamics.seen()] >= 0) & (dynamics.probabilities()[dynamics.seen()] <= 1)).all()
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []

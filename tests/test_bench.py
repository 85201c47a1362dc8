"""The benchmark's own logic: synthetic batches look like data, and a measured row is complete.

Speeds are never asserted (they belong in bench/RESULTS.md, not in tests)."""
import torch

from nlivis.bench import BenchRow, bench_config, bench_model, format_table, synthetic_batch


def test_synthetic_batch_respects_cut_offs_and_masks():
    batch = synthetic_batch(32, max_premise=12, max_hypothesis=6, seed=0)
    assert batch.premise_ids.shape[0] == 32 and batch.premise_ids.shape[1] <= 12
    assert batch.hypothesis_ids.shape[1] <= 6
    assert torch.equal(batch.premise_ids != 0, batch.premise_mask.bool())
    assert (batch.premise_mask.sum(1) >= 3).all()


def test_fixed_length_gives_every_sentence_that_length():
    batch = synthetic_batch(8, 48, 48, seed=1, fixed_length=20)
    assert batch.premise_mask.sum(1).tolist() == [20] * 8
    assert batch.hypothesis_mask.sum(1).tolist() == [20] * 8


def test_shipped_config_is_smaller_than_paper():
    assert bench_config("gcnn", "shipped")["model"]["hidden_size"] < bench_config("gcnn", "paper")["model"]["hidden_size"]


def test_bench_model_measures_a_complete_row():
    row = bench_model("gcnn", "shipped", torch.device("cpu"), repeats=1, warmup=0,
                      infer_batch_size=16, train_batch_size=8)
    assert isinstance(row, BenchRow)
    assert row.params > 0 and row.train_pairs_per_s > 0 and row.latency_traced_ms > 0
    assert row.gflops_per_pair > 0 and row.peak_mem_mb > 0
    table = format_table([row])
    assert "| gcnn | shipped |" in table

"""The benchmark's own logic: synthetic batches look like data, and a measured row is complete.

Speeds are never asserted (they belong in bench/RESULTS.md, not in tests)."""
import argparse
import statistics

import torch

from nlivis.cli import bench as bench_cli
from nlivis.workflows import bench
from nlivis.workflows.bench import (BenchRow, bench_config, bench_model, format_table, length_bucketed_batches, paper_epoch_minutes, reference_lines, sample_lengths, synthetic_batch)
from nlivis.models import build


def test_synthetic_batch_respects_cut_offs_and_masks():
    batch = synthetic_batch(32, max_premise=12, max_hypothesis=6, seed=0)
    assert batch.premise_ids.shape[0] == 32 and batch.premise_ids.shape[1] <= 12
    assert batch.hypothesis_ids.shape[1] <= 6
    assert torch.equal(batch.premise_ids != 0, batch.premise_mask.bool())
    assert (batch.premise_mask.sum(1) >= 3).all()
    chars_on_words = (batch.premise_chars != 0).any(-1)
    assert torch.equal(chars_on_words, batch.premise_mask)  # every word has characters, padding none


def test_fixed_length_gives_every_sentence_that_length():
    batch = synthetic_batch(8, 48, 48, seed=1, fixed_length=20)
    assert batch.premise_mask.sum(1).tolist() == [20] * 8
    assert batch.hypothesis_mask.sum(1).tolist() == [20] * 8


def test_lengths_look_like_multinli():
    premise, hypothesis = sample_lengths(4000, 200, 200, seed=0)
    assert 17 <= statistics.median(premise) <= 22 and 10 <= statistics.median(hypothesis) <= 14
    assert statistics.mean(premise) > statistics.median(premise)  # long right tail
    cut_p, cut_h = sample_lengths(4000, 32, 16, seed=0)
    assert max(cut_p) == 32 and max(cut_h) == 16 and min(cut_p) >= 3


def test_bucketed_batches_span_the_length_range_with_little_padding():
    batches = length_bucketed_batches(16, 60, 30, count=5, seed=0)
    assert len(batches) == 5 and all(len(b) == 16 for b in batches)
    padded = [max(b.premise_ids.shape[1], b.hypothesis_ids.shape[1]) for b in batches]
    assert padded == sorted(padded) and padded[0] < padded[-1]
    for b in batches:  # sorted by max(premise, hypothesis) like training: the longest side is tight
        longest = torch.maximum(b.premise_mask.sum(1), b.hypothesis_mask.sum(1))
        assert int(longest.max()) - int(longest.min()) <= 6


def test_shipped_config_is_smaller_than_paper():
    assert bench_config("gcnn", "shipped")["model"]["hidden_size"] < bench_config("gcnn", "paper")["model"]["hidden_size"]


def test_bench_model_measures_a_complete_row():
    row = bench_model("gcnn", "shipped", torch.device("cpu"), repeats=1, warmup=0,
                      infer_batch_size=16, train_batch_size=8, train_batches=2, infer_batches=1)
    assert isinstance(row, BenchRow)
    assert row.params > 0 and row.train_pairs_per_s > 0 and row.latency_traced_ms > 0
    assert row.gflops_per_pair > 0 and row.peak_mem_mb > 0
    assert row.cutoffs == "32/32" and row.paper_epoch_minutes is None
    assert abs(row.epoch_minutes - 392_702 / row.train_pairs_per_s / 60) < 1e-6
    table = format_table([row])
    assert "| gcnn | shipped |" in table


def test_table_has_one_line_per_row_and_the_paper_epoch_for_gcnn():
    row = BenchRow(model="gcnn", size="paper", params=2_500_000, train_batch=64, cutoffs="60/30",
                   train_pairs_per_s=100.0, epoch_minutes=65.45, infer_pairs_per_s=900.0, latency_ms=10.0,
                   latency_traced_ms=12.5, peak_mem_mb=700.0, gflops_per_pair=1.0, achieved_gflops=100.0,
                   paper_epoch_minutes=paper_epoch_minutes("gcnn", "paper"))
    assert row.paper_epoch_minutes == 2412 / 60  # GCNN Table 1: 2412 s per MultiNLI epoch
    lines = format_table([row, row]).splitlines()
    assert len(lines) == 4 and lines[0].count("|") == lines[2].count("|")
    assert "| 65.5 min | 40.2 min |" in lines[2] and "+25%" in lines[2]
    assert paper_epoch_minutes("gcnn", "shipped") is None and paper_epoch_minutes("esan", "paper") is None


def test_matmul_rate_column_reads_each_row_against_its_dtype():
    import torch

    from nlivis.workflows.bench import matmul_rate_gflops

    assert matmul_rate_gflops(torch.device("cpu"), size=64, repeats=2) > 0
    common = dict(model="esan", params=1, train_batch=8, cutoffs="20/20", train_pairs_per_s=1.0, epoch_minutes=1.0,
                  infer_pairs_per_s=1.0, latency_ms=1.0, latency_traced_ms=1.0, peak_mem_mb=1.0, gflops_per_pair=1.0)
    rows = [BenchRow(size="paper", achieved_gflops=50.0, **common), BenchRow(size="paper+bf16", achieved_gflops=300.0, **common)]
    lines = format_table(rows, ceiling_gflops={"float32": 200.0, "bfloat16": 1000.0}).splitlines()
    assert lines[0].endswith("| of kernel ceiling |") and lines[1].count("---") == 16
    assert lines[2].endswith("| 50.0 | 25% |") and lines[3].endswith("| 300.0 | 30% |")
    assert format_table(rows[:1], ceiling_gflops={"float32": 200.0}).splitlines()[0].count("|") == lines[0].count("|")


def test_kernel_ceiling_is_the_faster_of_matmul_and_convolution():
    from nlivis.workflows.bench import conv_rate_gflops, kernel_ceiling_gflops

    assert conv_rate_gflops(torch.device("cpu"), shape=(1, 8, 8), repeats=1) > 0
    ceiling, rates = kernel_ceiling_gflops(torch.device("cpu"), repeats=1)
    assert set(rates) == {"matmul", "conv3x3"} and ceiling == max(rates.values())


def test_shipped_rows_use_the_shipped_word_width():
    """Shipped configs read 384-d MiniLM word pieces, paper configs 300-d GloVe (AttentiveConvNet's shipped
    model has 1.79M parameters with them, 1.16M with 300-d vectors)."""
    assert bench_config("attentive_conv", "shipped")["model"]["word_dim"] == 384
    assert bench_config("attentive_conv", "paper")["model"]["word_dim"] == 300
    model = build(bench_config("attentive_conv", "shipped")["model"])
    assert round(model.count_parameters() / 1e6, 2) == 1.79


def test_flops_count_every_batch_and_the_fused_lstm():
    from nlivis.workflows.bench import flops_per_pair, make_batch

    model = build({"name": "esim", "hidden_size": 4, "word_dim": 6, "vocab_size": 30, "char_vocab_size": 10,
                   "dropout": 0.0})
    short, long = make_batch([3, 3], [2, 2], seed=0, vocab=30), make_batch([9, 9], [7, 7], seed=1, vocab=30)
    one, other = flops_per_pair(model, [short]), flops_per_pair(model, [long])
    assert flops_per_pair(model, [short, long]) == (one + other) / 2 and one < other
    # the fused LSTM layers, counted by the bench's formulas: premise and hypothesis stacked and padded
    # to 3 steps (4 rows × 3 = 12 tokens per layer and direction), 4 gates of width 4, encoder input 6,
    # composition input 4; forward 2·tokens·(|W_ih| + |W_hh|) per direction, backward twice that
    from torch.utils.flop_counter import FlopCounterMode

    plain = FlopCounterMode(display=False)
    with plain:
        model.loss(model(short), short.labels).backward()
    per_direction = [2 * 12 * (16 * d_in + 16 * 4) for d_in in (6, 4)]
    assert one * 2 - plain.get_total_flops() == 3 * 2 * sum(per_direction)


def test_reference_lines_quote_the_papers():
    text = "\n".join(reference_lines())
    assert "GTX 1080" in text and "GCNN 2412 s" in text
    assert "ESAN 0.04 s" in text and "1.79" in text


def test_bench_command_prints_a_table(monkeypatch, tmp_path, capsys):
    calls = []

    def fake_row(family, size, device, repeats, warmup, **kwargs):
        calls.append((family, size))
        return BenchRow(model=family, size=size, params=1, train_batch=2, cutoffs="3/3", train_pairs_per_s=1.0,
                        epoch_minutes=1.0, infer_pairs_per_s=1.0, latency_ms=1.0, latency_traced_ms=1.0,
                        peak_mem_mb=1.0, gflops_per_pair=1.0, achieved_gflops=1.0)

    monkeypatch.setattr(bench, "bench_model", fake_row)
    out = tmp_path / "table.md"
    args = argparse.Namespace(quick=True, device="cpu", out=str(out), models="gcnn,amn", sizes=None, threads=None,
                              checkpoints=None, skip_app=True, skip_transformers=True)
    assert bench_cli.run(args) == 0
    assert calls == [("gcnn", "shipped"), ("amn", "shipped")]
    printed = capsys.readouterr().out
    assert "| gcnn | shipped |" in printed and "| amn | shipped |" in printed and "Machine: CPU" in printed
    assert out.read_text().startswith("Machine: ")

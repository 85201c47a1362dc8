"""Read a dataset or protocol, run spaCy over every split found, cache the features, print counts.

    python -m nlivis prepare --dataset snli-small --data-dir ../shared/data

Splits missing under the folder are listed, not an error unless none exists.
"""
from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Sequence

from nlivis.data.protocols import all_protocol_refs, find_split_file, get_protocol, split_key
from nlivis.features.cache import AnalysisCache
from nlivis.features.dataset import load_split_analysed_reported


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True,
                        help="dataset (snli, mnli, quora, xnli_en, mnli_hard) or protocol (snli-small, mnli-small, quora-small)")
    parser.add_argument("--data-dir", required=True,
                        help="folder holding the dataset's files (for a protocol: the data root, e.g. ../shared/data)")
    parser.add_argument("--cache-dir", default=None,
                        help="feature cache folder (default: $NLIVIS_CACHE_DIR or ~/.cache/nlivis)")


def run(args: argparse.Namespace) -> int:
    """Prints split / pairs / dropped '-' / labels / genres / tokens per second / cached or built."""
    protocol = get_protocol(args.dataset)
    data_root = Path(args.data_dir)
    if not data_root.is_dir():
        raise FileNotFoundError(f"--data-dir {data_root}: no such folder")
    rows: list[tuple[str, ...]] = []
    missing: list[str] = []
    for ref in all_protocol_refs(protocol):
        if find_split_file(ref, data_root) is None:
            missing.append(split_key(ref))
            continue
        items, result, report = load_split_analysed_reported(ref, data_root, args.cache_dir)
        pairs = result.pairs
        rows.append((
            split_key(ref), str(len(pairs)), str(result.dropped_no_gold),
            _counts([p.label for p in pairs]), _counts([p.genre for p in pairs]),
            f"{report.tokens_per_second:,.0f}", "cached" if report.cached else "built",
        ))
    if not rows:
        raise FileNotFoundError(
            f"{data_root}: none of {protocol.name}'s splits found ({', '.join(missing)}); for a protocol "
            "pass the data root (e.g. ../shared/data), for a dataset its own folder"
        )
    header = ("split", "pairs", "dropped '-'", "labels", "genres", "tokens/s", "cache")
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print("tokens/s: spaCy speed for built splits, cache reading speed for cached ones")
    if missing:
        print(f"not found under {data_root} (skipped): {', '.join(missing)}")
    print(f"cache: {AnalysisCache(args.cache_dir).root}")
    return 0


def _counts(values: Sequence[str | None]) -> str:
    counts = Counter(v for v in values if v is not None)
    return " ".join(f"{name}:{n}" for name, n in sorted(counts.items())) or "-"

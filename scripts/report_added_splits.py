"""Evaluate finished checkpoints on report splits their protocol names but they have not recorded.

    python scripts/report_added_splits.py [--checkpoints checkpoints] [--data-dir ../shared/data]
                                          [--only NAME ...] [--dry-run]

When a protocol gains a report split (mnli-small now also reports on the full MultiNLI dev matched and
mismatched sets, never trained on), the checkpoints trained under it lack that split's predictions and
accuracy. This predicts each missing split with the stored weights and records the predictions and a
`metrics.json` report entry (accuracy, count, and the share of tokens outside the checkpoint's
vocabulary) through `rewrite_checkpoint`, atomically; nothing already recorded changes. config.json's
dataset record gets the protocol's current report list and description, and `report_added_later`
names the splits added this way. Run it niced, one checkpoint at a time (it is sequential).
"""
from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from nlivis.data.protocols import get_protocol, split_key  # noqa: E402
from nlivis.features.chars import PAD_ID, UNK_ID  # noqa: E402
from nlivis.features.dataset import load_split_analysed
from nlivis.inference import LoadedCheckpoint, load_checkpoint
from nlivis.store.weights import rewrite_checkpoint
from nlivis.inference import accuracy_of, predict_probabilities, prediction_rows

CPU = torch.device("cpu")


def unknown_token_share(loaded: LoadedCheckpoint, items: list) -> float:
    """Share of the tokens the model reads (after its length cut-offs) that map to the unknown row."""
    unknown = total = 0
    for start in range(0, len(items), 256):
        batch = loaded.featurizer.encode(items[start:start + 256])
        for ids in (batch.premise_ids, batch.hypothesis_ids):
            real = ids != PAD_ID
            unknown += int(((ids == UNK_ID) & real).sum())
            total += int(real.sum())
    return unknown / total if total else 0.0


def missing_report_splits(loaded: LoadedCheckpoint) -> list:
    protocol = get_protocol(loaded.config["dataset"]["protocol"])
    recorded = loaded.metrics.get("report", {})
    return [ref for ref in protocol.report if split_key(ref) not in recorded]


def add_report_splits(folder: Path, data_dir: Path, cache_dir: Path | None, dry_run: bool) -> list[str]:
    loaded = load_checkpoint(folder)
    refs = missing_report_splits(loaded)
    if not refs:
        return []
    protocol = get_protocol(loaded.config["dataset"]["protocol"])
    batch_size = int(loaded.config["training"].get("eval_batch_size", 128))
    metrics = copy.deepcopy(loaded.metrics)
    config = copy.deepcopy(loaded.config)
    predictions, lines = {}, []
    for ref in refs:
        key = split_key(ref)
        items, result = load_split_analysed(ref, data_dir, cache_dir)
        start = time.perf_counter()
        probabilities = predict_probabilities(loaded.model, loaded.featurizer, items, batch_size, CPU)
        accuracy = accuracy_of(items, probabilities, loaded.labels)
        unknown = unknown_token_share(loaded, items)
        metrics.setdefault("report", {})[key] = {
            "accuracy": accuracy, "count": len(items), "dropped_no_gold": result.dropped_no_gold,
            "unknown_token_share": round(unknown, 4), "added_after_training": True}
        predictions[key] = prediction_rows(items, probabilities, loaded.labels)
        lines.append(f"{folder.name} {key}: {100 * accuracy:.1f}% of {len(items)} pairs "
                     f"({result.dropped_no_gold} without gold dropped; {100 * unknown:.1f}% of tokens unknown; "
                     f"{time.perf_counter() - start:.0f} s)")
    # metrics' report in the protocol's order: the select split first, then the report splits.
    order = [split_key(protocol.select), *(split_key(ref) for ref in protocol.report)]
    report = metrics["report"]
    metrics["report"] = {key: report[key] for key in sorted(report, key=lambda k: order.index(k) if k in order else len(order))}
    dataset = config["dataset"]
    dataset["report"] = [split_key(ref) for ref in protocol.report]
    dataset["description"], dataset["note"] = protocol.description, protocol.note
    dataset["report_added_later"] = sorted({*dataset.get("report_added_later", []), *predictions})
    if not dry_run:
        rewrite_checkpoint(folder, config=config, metrics=metrics, predictions=predictions)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", default=str(ROOT / "checkpoints"))
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--cache-dir", default=None, help="spaCy analysis cache (default: nlivis's)")
    parser.add_argument("--only", nargs="*", default=None, help="checkpoint folder names (default: all complete ones)")
    parser.add_argument("--dry-run", action="store_true", help="evaluate and print, write nothing")
    args = parser.parse_args()
    torch.set_num_threads(1)
    folders = [p for p in sorted(Path(args.checkpoints).iterdir()) if (p / "COMPLETE").is_file()
               and (args.only is None or p.name in args.only)]
    for folder in folders:
        for line in add_report_splits(folder, Path(args.data_dir), Path(args.cache_dir) if args.cache_dir else None,
                                      args.dry_run):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Make checkpoints lean without changing what they claim.

    python scripts/compact_checkpoints.py [--checkpoints checkpoints] [--data-dir ../shared/data]
                                          [--dry-run] [--only NAME ...]

1. Predictions stored as plain `.jsonl` are rewritten as `.jsonl.gz` (the same rows; no data needed).
2. A shared fp32 word-embedding file (checkpoints/embeddings/) is re-stored in fp16 when, for every
   complete checkpoint that loads it, the rounded rows pass the fp16 rule on its select split.
3. fp32 weights are re-stored in fp16 when the rounded weights pass the same rule.
4. A shared word-vector file that holds at most a quarter rows of its own beside another shared file's rows
   is re-stored as an extension of that base (`nlivis.store.embedding_rows`): the same bits, so nothing the
   checkpoints claim changes; each user is loaded from the extension and compared with the full table before the
   full file is removed. Bases are files no extension extends; the file with fewer users becomes the extension.

The fp16 rule is the trainer's (`nlivis.training.fp16.fp16_verdict`): select-split accuracy moves by
at most 0.05 points and at most 0.2% of labels flip, each judged against the checkpoint as it was
before this script touched it. Whenever rounding is applied, every recorded prediction and accuracy of
the checkpoint is re-computed from what is now stored, and config.json's `fp16_check` keeps the fp32
and fp16 select accuracies, so `nlivis evaluate` keeps reproducing metrics.json. Steps 2 and 3 read
the checkpoints' splits from --data-dir; a checkpoint whose splits are missing is left as it is.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from nlivis.store.predictions import PLAIN_SUFFIX, find_prediction_files, read_predictions
from nlivis.data.protocols import get_protocol, split_key  # noqa: E402
from nlivis.features.dataset import load_split_analysed
from nlivis.store.checkpoints import EMBEDDING_TENSOR
from nlivis.store.embedding_rows import EXTRA_ROWS_TENSOR, rows_against_base
from nlivis.inference import LoadedCheckpoint, load_checkpoint
from nlivis.store.weights import rewrite_checkpoint, save_tensors
from nlivis.store.files import sha256_file
from nlivis.inference import accuracy_of, predict_probabilities, prediction_rows
from nlivis.training.fp16 import fp16_verdict, rounded_to_fp16

CPU = torch.device("cpu")


class Splits:
    """Analysed items of every split a checkpoint has predictions for, read once per split."""

    def __init__(self, data_dir: Path, cache_dir: Path | None):
        self.data_dir, self.cache_dir = data_dir, cache_dir
        self.items: dict[str, list] = {}

    def of(self, loaded: LoadedCheckpoint) -> dict[str, list]:
        """split key → items, select split first; raises FileNotFoundError-like errors when data is missing."""
        protocol = get_protocol(loaded.config["dataset"]["protocol"])
        recorded = find_prediction_files(loaded.path)
        found = {}
        for ref in (protocol.select, *protocol.report):
            key = split_key(ref)
            if key in recorded and key not in found:
                if key not in self.items:
                    self.items[key], _ = load_split_analysed(ref, self.data_dir, self.cache_dir)
                found[key] = self.items[key]
        return found


def predict(loaded: LoadedCheckpoint, items: list) -> torch.Tensor:
    batch_size = int(loaded.config["training"].get("eval_batch_size", 128))
    return predict_probabilities(loaded.model, loaded.featurizer, items, batch_size, CPU)


def rerecord(folder: Path, loaded: LoadedCheckpoint, splits: dict[str, list], select_probabilities: torch.Tensor,
             weights: tuple[dict, torch.dtype] | None = None, config: dict | None = None) -> None:
    """Re-compute every recorded prediction with `loaded.model` as it now is (its select-split
    probabilities already computed for the fp16 verdict) and rewrite the folder; writing the gzip
    predictions retires any plain file of the same split."""
    labels = loaded.labels
    select = loaded.metrics["select_split"]
    probabilities = {key: select_probabilities if key == select else predict(loaded, items)
                     for key, items in splits.items()}
    metrics = copy.deepcopy(loaded.metrics)
    metrics.setdefault("best_dev_accuracy_in_training", metrics["best_dev_accuracy"])
    metrics["best_dev_accuracy"] = accuracy_of(splits[select], probabilities[select], labels)
    for key, report in metrics.get("report", {}).items():
        if key in probabilities:
            report["accuracy"] = accuracy_of(splits[key], probabilities[key], labels)
    config = copy.deepcopy(config if config is not None else loaded.config)
    rewrite_checkpoint(folder, config=config, metrics=metrics, weights=weights,
                       predictions={key: prediction_rows(splits[key], p, labels) for key, p in probabilities.items()})


def compress_predictions(folder: Path, dry_run: bool) -> int:
    """Step 1: plain predictions files → gzip; returns bytes saved."""
    plain = {key: p for key, p in find_prediction_files(folder).items() if p.name.endswith(PLAIN_SUFFIX)}
    if not plain or dry_run:
        return 0
    before = sum(p.stat().st_size for p in plain.values())
    rewrite_checkpoint(folder, predictions={key: read_predictions(p) for key, p in plain.items()})
    after = sum(p.stat().st_size for key, p in find_prediction_files(folder).items() if key in plain)
    return before - after


def shared_configs(complete: list[Path]) -> dict[Path, dict]:
    """Checkpoint folder → its config.json's `embeddings` table, for the checkpoints that share their rows."""
    tables = {folder: json.loads((folder / "config.json").read_text(encoding="utf-8")).get("embeddings", {})
              for folder in complete}
    return {folder: table for folder, table in tables.items() if table.get("shared")}


def extension_bases(complete: list[Path]) -> set[Path]:
    """Every shared file some checkpoint's extension file extends."""
    return {(folder / table["base"]["file"]).resolve() for folder, table in shared_configs(complete).items()
            if "base" in table}


def extend_shared_files(complete: list[Path], folders: list[Path], dry_run: bool) -> None:
    """Step 4 (see the module docstring): full shared files, fewest users first, each re-stored against the base
    among the other full files that leaves it the fewest rows of its own."""
    users: dict[Path, list[Path]] = {}
    for folder, table in shared_configs(complete).items():
        if "base" not in table:
            users.setdefault((folder / table["file"]).resolve(), []).append(folder)
    bases = extension_bases(complete)
    tables = {path: load_file(str(path))[EMBEDDING_TENSOR] for path in users}
    for path in sorted(users, key=lambda p: (len(users[p]), p.name)):
        if path in bases or not all(folder in folders for folder in users[path]):
            continue
        rows = tables[path]
        options = {base: rows_against_base(rows, tables[base]) for base in users
                   if base != path and base in tables and tables[base].shape[1:] == rows.shape[1:]
                   and tables[base].dtype == rows.dtype}
        if not options:
            continue
        base = min(options, key=lambda b: (options[b][EXTRA_ROWS_TENSOR].shape[0], b.name))
        extension = options[base]
        own = extension[EXTRA_ROWS_TENSOR].shape[0]
        print(f"{path.name}: {own:,} of {rows.shape[0]:,} rows not in {base.name}")
        if own * 4 > rows.shape[0]:
            continue
        if not dry_run:
            restore_as_extension(path, base, extension, users[path])
        bases.add(base)
        del tables[path]


def write_or_reuse(target: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> str | None:
    """Write `tensors` to `target` ("written") unless a file is there: a shared file's name carries its rows' hash,
    and other checkpoints record its sha256, so one already there is never rewritten (writing the same tensors again
    may change its bytes) — "reused" when it holds exactly these tensors, None when it holds others."""
    if not target.is_file():
        save_tensors(tensors, target, metadata=metadata)
        return "written"
    existing = load_file(str(target))
    return "reused" if existing.keys() == tensors.keys() and all(torch.equal(existing[k], tensors[k])
                                                                 for k in tensors) else None


def restore_as_extension(path: Path, base: Path, extension: dict[str, torch.Tensor], group: list[Path]) -> None:
    """Write the extension of `base` beside it, point every checkpoint of `group` at it (each loaded and compared
    with the full rows first), then remove the full file."""
    full = load_file(str(path))[EMBEDDING_TENSOR]
    target = path.with_name(f"{path.stem}-on-{base.stem}.safetensors")
    outcome = write_or_reuse(target, extension, {"source": f"{path.name} as an extension of {base.name}",
                                                 "rows": str(full.shape[0])})
    if outcome is None:
        raise SystemExit(f"{target} exists with other rows than {path.name} against {base.name}; nothing was changed")
    if outcome == "reused":
        print(f"{target.name} already holds these rows: reused")
    for folder in group:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        config["embeddings"].update({"file": str(Path("..") / target.parent.name / target.name),
                                     "sha256": sha256_file(target),
                                     "base": {"file": str(Path("..") / base.parent.name / base.name),
                                              "sha256": sha256_file(base)}})
        rewrite_checkpoint(folder, config=config)
        loaded = load_checkpoint(folder).model.word_embedding.weight
        if not torch.equal(loaded.detach().to(full.dtype), full):
            raise SystemExit(f"{folder.name}: the rows read through {target.name} differ from {path.name}; "
                             "nothing was removed")
    path.unlink()
    print(f"{path.name} → {target.name} on {base.name}: {target.stat().st_size / 1e6:.1f} MB, "
          f"{len(group)} checkpoint(s) updated")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", default=str(ROOT / "checkpoints"))
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--cache-dir", default=None, help="spaCy analysis cache (default: nlivis's)")
    parser.add_argument("--dry-run", action="store_true", help="check and report, write nothing")
    parser.add_argument("--only", nargs="*", default=None, help="checkpoint folder names to consider (default: all)")
    args = parser.parse_args()
    root = Path(args.checkpoints)
    complete = [p for p in sorted(root.iterdir()) if (p / "COMPLETE").is_file()]
    folders = [p for p in complete if args.only is None or p.name in args.only]

    saved = sum(compress_predictions(folder, args.dry_run) for folder in folders)
    print(f"step 1: predictions compressed, {saved / 1e6:.1f} MB saved")

    splits = Splits(Path(args.data_dir), Path(args.cache_dir) if args.cache_dir else None)
    originals: dict[str, tuple[dict[str, list], torch.Tensor]] = {}

    def original(folder: Path) -> tuple[dict[str, list], torch.Tensor] | None:
        """(splits, select probabilities) of the checkpoint as it was before this run."""
        if folder.name not in originals:
            loaded = load_checkpoint(folder)
            try:
                items = splits.of(loaded)
            except (OSError, ValueError) as error:
                print(f"{folder.name}: splits unavailable, left as it is ({error})")
                return None
            originals[folder.name] = (items, predict(loaded, items[loaded.metrics["select_split"]]))
        return originals[folder.name]

    # step 2: shared fp32 embedding files
    users: dict[Path, list[Path]] = {}  # every checkpoint that loads a file, selected or not
    for folder in complete:
        embeddings = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("embeddings", {})
        if embeddings.get("shared") and "base" not in embeddings:  # an extension's rows are its base's business
            users.setdefault((folder / embeddings["file"]).resolve(), []).append(folder)
    for path, group in users.items():
        if not any(folder in folders for folder in group):
            continue
        if path in extension_bases(complete):
            print(f"{path.name}: the base of an extension, kept as it is")
            continue
        rows = load_file(str(path))[EMBEDDING_TENSOR]
        if rows.dtype != torch.float32:
            continue
        unselected = [folder.name for folder in group if folder not in folders]
        if unselected:
            print(f"{path.name}: also used by {unselected} (not selected), kept in fp32")
            continue
        half = rows.to(torch.float16)
        verdicts, rounded_select = {}, {}
        for folder in group:
            before = original(folder)
            if before is None:
                break
            items, reference = before
            loaded = load_checkpoint(folder)
            with torch.no_grad():
                loaded.model.word_embedding.weight.copy_(half.to(loaded.model.word_embedding.weight.dtype))
            select = loaded.metrics["select_split"]
            rounded_select[folder.name] = predict(loaded, items[select])
            verdicts[folder.name] = fp16_verdict(items[select], reference, rounded_select[folder.name], loaded.labels)
            print(f"{path.name}  {folder.name}: {verdicts[folder.name]}")
        if len(verdicts) < len(group) or not all(v["use_fp16"] for v in verdicts.values()) or args.dry_run:
            print(f"{path.name}: kept in fp32" + (" (dry run)" if args.dry_run else ""))
            continue
        target = path.with_name(path.stem + "-fp16.safetensors")
        outcome = write_or_reuse(target, {EMBEDDING_TENSOR: half.contiguous()},
                                 {"source": "fp16 rounding of " + path.name, "rows": str(half.shape[0])})
        if outcome is None:
            print(f"{target.name} exists with other rows than the rounding of {path.name}: kept in fp32")
            continue
        if outcome == "reused":
            print(f"{target.name} already holds these rows in fp16: reused")
        digest = sha256_file(target)
        for folder in group:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            config["embeddings"].update({"file": str(Path("..") / target.parent.name / target.name),
                                         "sha256": digest, "dtype": "float16"})
            config["embeddings"]["fp16_check"] = {k: v for k, v in verdicts[folder.name].items() if k != "use_fp16"}
            rewrite_checkpoint(folder, config=config)
            if verdicts[folder.name]["predictions_changed_by_fp16"]:  # labels moved: re-record from the rows as stored
                rerecord(folder, load_checkpoint(folder), originals[folder.name][0], rounded_select[folder.name])
        path.unlink()
        print(f"{path.name} → {target.name}: fp16, {len(group)} checkpoint(s) updated")

    # step 3: fp32 weights
    for folder in folders:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if config.get("weights", {}).get("dtype") != "float32":
            continue
        before = original(folder)
        if before is None:
            continue
        items, reference = before
        loaded = load_checkpoint(folder)
        excluded = tuple(config["weights"].get("excluded_keys", []))  # shared rows: step 2's business
        loaded.model = rounded_to_fp16(loaded.model, keep=excluded).eval()
        select = loaded.metrics["select_split"]
        probabilities = predict(loaded, items[select])
        verdict = fp16_verdict(items[select], reference, probabilities, loaded.labels)
        print(f"{folder.name} weights: {verdict}")
        if not verdict["use_fp16"] or args.dry_run:
            continue
        state = {k: v for k, v in loaded.model.state_dict().items() if k not in excluded}
        config["weights"]["dtype"] = "float16"
        config["fp16_check"] = {"stored_as": "float16", **{k: v for k, v in verdict.items() if k != "use_fp16"}}
        rerecord(folder, loaded, items, probabilities, weights=(state, torch.float16), config=config)
        print(f"{folder.name}: weights now fp16, select accuracy {verdict['fp32_accuracy']:.4f} → {verdict['fp16_accuracy']:.4f}")

    extend_shared_files(complete, folders, args.dry_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Store a shared embedding file in fp16 where that changes no recorded prediction of any checkpoint using it.

    python scripts/compact_embeddings.py [--checkpoints checkpoints] [--data-dir ../shared/data] [--dry-run]
                                         [--files NAME ...]

Frozen word vectors are shared by every checkpoint trained on one vocabulary (checkpoints/embeddings/).
For each fp32 file, every complete checkpoint that uses it predicts its select split again with the rows
rounded to fp16; only when no predicted label changes anywhere is the file rewritten in fp16 (half the
bytes), and each user's config.json records the check. A file whose users cannot all be checked (data
missing) stays as it is.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

from nlivis.data.protocols import get_protocol, split_key  # noqa: E402
from nlivis.features.dataset import load_split_analyzed  # noqa: E402
from nlivis.training.checkpoint import (EMBEDDING_TENSOR, load_checkpoint, rewrite_config,  # noqa: E402
                                        save_tensors, sha256_file)
from nlivis.training.trainer import predict_probabilities  # noqa: E402


def users_by_file(root: Path) -> dict[Path, list[Path]]:
    """Shared embedding file → the complete checkpoint folders that load it."""
    users: dict[Path, list[Path]] = {}
    for folder in sorted(p for p in root.iterdir() if (p / "COMPLETE").is_file()):
        embeddings = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("embeddings", {})
        if embeddings.get("shared"):
            users.setdefault((folder / embeddings["file"]).resolve(), []).append(folder)
    return users


def changed_predictions(folder: Path, rows: torch.Tensor, data_dir: Path) -> tuple[int, int]:
    """(labels changed, pairs checked) on the checkpoint's select split with `rows` as its word vectors."""
    loaded = load_checkpoint(folder)
    ref = get_protocol(loaded.config["dataset"]["protocol"]).select
    items, _ = load_split_analyzed(ref, data_dir, None)
    with torch.no_grad():
        loaded.model.word_embedding.weight.copy_(rows.to(loaded.model.word_embedding.weight.dtype))
    batch_size = int(loaded.config["training"].get("eval_batch_size", 128))
    probabilities = predict_probabilities(loaded.model, loaded.featurizer, items, batch_size, torch.device("cpu"))
    recorded = {}
    for line in (folder / f"predictions_{split_key(ref)}.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        recorded[row["id"]] = row["predicted"]
    labels = loaded.labels
    changed = sum(labels[int(p)] != recorded[item.pair.id] for item, p in zip(items, probabilities.argmax(-1)))
    return changed, len(items)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", default=str(ROOT / "checkpoints"))
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--dry-run", action="store_true", help="check and report, write nothing")
    parser.add_argument("--files", nargs="*", default=None, help="embedding file names to consider (default: all)")
    args = parser.parse_args()
    for path, folders in users_by_file(Path(args.checkpoints)).items():
        if args.files is not None and path.name not in args.files:
            continue
        rows = load_file(str(path))[EMBEDDING_TENSOR]
        if rows.dtype != torch.float32:
            print(f"{path.name}: already {rows.dtype}, skipped")
            continue
        half = rows.to(torch.float16)
        checks = {folder.name: changed_predictions(folder, half, Path(args.data_dir)) for folder in folders}
        for name, (changed, total) in checks.items():
            print(f"{path.name}  {name}: {changed} of {total} select-split labels change with fp16 rows")
        if any(changed for changed, _ in checks.values()) or args.dry_run:
            print(f"{path.name}: kept in fp32" + (" (dry run)" if args.dry_run else ""))
            continue
        target = path.with_name(path.stem + "-fp16.safetensors")
        save_tensors({EMBEDDING_TENSOR: half.contiguous()}, target,
                     metadata={"source": "fp16 rounding of " + path.name, "rows": str(half.shape[0])})
        digest = sha256_file(target)
        for folder in folders:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            changed, total = checks[folder.name]
            config["embeddings"].update({"file": str(Path("..") / target.parent.name / target.name), "sha256": digest,
                                         "dtype": "float16",
                                         "fp16_check": {"pairs_checked": total, "predictions_changed_by_fp16": changed}})
            rewrite_config(folder, config)
        path.unlink()
        print(f"{path.name} → {target.name}: fp16, {len(folders)} checkpoint(s) updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())

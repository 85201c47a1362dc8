"""Copy a finished training run (a trial folder outside checkpoints/) into checkpoints/ under its shipped name.

    python scripts/ship_trial.py TRIAL NAME [--control CONTROL] [--checkpoints checkpoints]

The folder is copied without its saved evaluations and training state, its shared word-vector file (and the base
that file extends, if any) is copied into `<checkpoints>/embeddings/` unless a file of that name is there (then
the two must be the same bytes), and config.json gets the new `name`; with `--control`, an augmented run's
`augmentation` also records its compute-matched control's name and its steps, as issue 29 asks. An existing
checkpoint of that name is never replaced. Then `scripts/compact_checkpoints.py` rounds and shares the rows.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.store.checkpoints import check_files  # noqa: E402
from nlivis.store.files import sha256_file  # noqa: E402
from nlivis.store.weights import rewrite_checkpoint  # noqa: E402


def copy_shared_file(trial: Path, entry: dict, embeddings: Path) -> None:
    """Copy the shared file config.json's `entry` names beside the checkpoints, checked by its sha256."""
    source = (trial / entry["file"]).resolve()
    if sha256_file(source) != entry["sha256"]:
        raise SystemExit(f"{source}: does not match the sha256 in {trial / 'config.json'}")
    target = embeddings / source.name
    if target.is_file():
        if sha256_file(target) != entry["sha256"]:
            raise SystemExit(f"{target} exists with other bytes than {source}; nothing was copied")
        return
    embeddings.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trial", type=Path)
    parser.add_argument("name")
    parser.add_argument("--control", default=None, help="the compute-matched control's checkpoint name")
    parser.add_argument("--checkpoints", type=Path, default=ROOT / "checkpoints")
    args = parser.parse_args()
    trial, target = args.trial.resolve(), args.checkpoints / args.name
    if target.exists():
        raise SystemExit(f"{target} exists; remove it first if it is to be replaced")
    check_files(trial, verify_hashes=True)
    config = json.loads((trial / "config.json").read_text(encoding="utf-8"))
    if args.control is not None:
        if "augmentation" not in config:
            raise SystemExit(f"{trial}: --control is for an augmented run, and config.json records no augmentation")
        config["augmentation"].update({"control": args.control, "steps": config["steps"]})
    embeddings = config.get("embeddings", {})
    if embeddings.get("shared"):
        for entry in (embeddings, embeddings.get("base")):
            if entry is not None:
                copy_shared_file(trial, entry, args.checkpoints / "embeddings")
    config["name"] = args.name
    shutil.copytree(trial, target, ignore=shutil.ignore_patterns("evaluations", "state", "STOP"))
    rewrite_checkpoint(target, config=config)
    print(f"{trial} → {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

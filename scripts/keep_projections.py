"""Keep the Projection page's default view beside checkpoints: for each checkpoint, the page's first layout — a
fixed sample of 1,000 pairs (seed 0) of the split it opens on, UMAP with seed 0 — computed through the page's own
calls and copied into `<checkpoint>/projections/<split>-sample<size>/` (`workflows.projection.keep_beside_checkpoint`),
so that first view reads a file on any machine instead of running the model and fitting UMAP.

    OMP_NUM_THREADS=1 python scripts/keep_projections.py [--split snli_dev] [--size 1000] [CHECKPOINT ...]

Default checkpoints: the five shipped snli-small models. The layout depends on the data folder's split (the app's
`../shared/data`): a kept layout is used only for the same pair ids.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="*", type=Path)
    parser.add_argument("--split", default="snli_dev")
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from nlivis.app.cache import samples
    from nlivis.inference import load_checkpoint
    from nlivis.models.families import SHIPPED_FAMILIES
    from nlivis.workflows.projection import ProjectionOptions, keep_beside_checkpoint, project_sample

    folders = args.checkpoints or [ROOT / "checkpoints" / f"{family}-snli-small" for family in SHIPPED_FAMILIES]
    items, error = samples.analysed_sample(args.split, args.size)
    if error:
        sys.exit(error)
    sample = f"{args.split}-sample{args.size}"
    for folder in folders:
        started = time.perf_counter()
        project_sample(load_checkpoint(folder), items, ProjectionOptions(sample, "umap"))
        kept = keep_beside_checkpoint(folder, sample, "umap")
        size = sum(file.stat().st_size for file in kept.iterdir())
        print(f"{folder.name}: {kept.relative_to(folder)} ({size / 1000:.0f} kB, {time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()

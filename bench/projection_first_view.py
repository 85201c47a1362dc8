"""How long the Projection page's first view of a shipped checkpoint's split takes on a cold projection cache: in
one process with what a running app already holds (the checkpoint loaded, the split's sample analysed), the
page's own call (`workflows.projection.project_sample` of the page's default sample, 1,000 pairs of snli_dev,
UMAP) timed into a fresh projection cache — one model pass for the pooled vectors and probabilities, then the
layout — and again from that cache (the view after the first).

    OMP_NUM_THREADS=1 python bench/projection_first_view.py [--checkpoint checkpoints/gcnn-snli-small] [--method umap]
        [--without-kept]

A layout kept in the checkpoint's folder (`scripts/keep_projections.py`) is read first, as the page reads it;
`--without-kept` times a copy of the checkpoint without it (the model pass and the fit).

UMAP's compiled code comes from numba's on-disk cache under the user cache (`cache_umap_compilation`); the first
fit on a machine compiles it (printed as "numba cache empty" when that folder had no entries). Prints the times and
the load average.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "checkpoints" / "gcnn-snli-small")
    parser.add_argument("--method", default="umap", choices=("umap", "pca"))
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--without-kept", action="store_true", help="time a copy of the checkpoint without its kept layouts")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    from nlivis.app.cache import samples
    from nlivis.inference import load_checkpoint
    from nlivis.workflows.projection import BESIDE, ProjectionOptions, default_numba_cache_dir, project_sample

    scratch = tempfile.TemporaryDirectory(prefix="projection-first-view-checkpoint-")
    folder = args.checkpoint
    if args.without_kept:
        folder = Path(scratch.name) / args.checkpoint.name
        shutil.copytree(args.checkpoint, folder, ignore=shutil.ignore_patterns(BESIDE))
        shutil.copytree(args.checkpoint.parent / "embeddings", folder.parent / "embeddings")
    loaded = load_checkpoint(folder)
    items, error = samples.analysed_sample("snli_dev", args.size)
    if error:
        sys.exit(error)
    numba = default_numba_cache_dir()
    compiled = numba.is_dir() and any(numba.iterdir())
    with tempfile.TemporaryDirectory(prefix="projection-first-view-") as cache:
        options = ProjectionOptions(f"snli_dev-sample{args.size}", args.method, cache_dir=cache)
        times = []
        for _ in range(2):
            started = time.perf_counter()
            project_sample(loaded, items, options)
            times.append(time.perf_counter() - started)
    print(f"{args.checkpoint.name} · snli_dev sample of {len(items)} · {args.method.upper()} · first view (cold "
          f"projection cache) {times[0]:.1f} s · again (cached) {times[1]:.2f} s · numba cache "
          f"{'filled' if compiled else 'empty'} · kept layout {'ignored' if args.without_kept else 'read if there'} · "
          f"load {os.getloadavg()[0]:.1f}")
    scratch.cleanup()


if __name__ == "__main__":
    main()

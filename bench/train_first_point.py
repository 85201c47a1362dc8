"""How long the Train page's tiny run takes from Start to its first curve point: the run started as the page starts
it (`training.runs.start_run` of `train_command`, a worker process with its run record, so it writes the progress
file), timed from the Start until each phase event of its progress file and until the first line of its
metrics.jsonl (the first point of the page's curves). The tiny run: the page's default config (gcnn, shipped
size, snli-small) with random word vectors and --max-steps 3, as tests/test_browser_train.py starts it.

    OMP_NUM_THREADS=1 python bench/train_first_point.py [--cache-dir DIR] [--repeats N]

`--cache-dir` a fresh folder: a new user's first run (every split analysed by spaCy); the default, the user cache
(`NLIVIS_CACHE_DIR` or ~/.cache/nlivis): a run after others. Prints one line per run and the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.store.files import CACHE_ENV  # noqa: E402
from nlivis.training import runs as training_runs  # noqa: E402
from nlivis.training.progress import PROGRESS_FILE  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def first_point(out: Path, data: Path, steps: int) -> dict[str, float]:
    """Seconds from Start to each phase's first event and to the first metrics line; waits for the run's end."""
    command = training_runs.train_command("gcnn", "snli-small", data, out, embeddings="random", max_steps=steps)
    started = time.time()
    run = training_runs.start_run(command, out)
    progress, metrics = training_runs.run_record_folder(out) / PROGRESS_FILE, out / "metrics.jsonl"
    seen: dict[str, float] = {}
    while training_runs.read_run(out).running or "first curve point" not in seen:
        now = time.time() - started
        if "first curve point" not in seen and metrics.is_file() and metrics.read_text(encoding="utf-8").strip():
            seen["first curve point"] = now
        if not training_runs.read_run(out).running and "first curve point" not in seen:
            break
        time.sleep(0.05)
    for line in progress.read_text(encoding="utf-8").splitlines() if progress.is_file() else []:
        event = json.loads(line)
        label = event["phase"] + (f" {event['split']}" if "split" in event else "")
        seen.setdefault(label, event["time"] - started)
    seen["worker ended"] = time.time() - started
    del run
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", type=Path, help="the feature cache the worker uses (a fresh one: a first run)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    if args.cache_dir is not None:
        os.environ[CACHE_ENV] = str(args.cache_dir.resolve())  # the worker inherits it
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="train-first-point-") as scratch:
            seen = first_point(Path(scratch) / "runs" / "gcnn-snli-small", args.data_dir, args.steps)
        order = sorted(seen.items(), key=lambda item: item[1])
        print(f"run {repeat + 1}: " + " · ".join(f"{label} {seconds:.1f} s" for label, seconds in order)
              + f" · load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()

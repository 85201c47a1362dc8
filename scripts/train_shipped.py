"""Train the shipped checkpoints: every job is one `python -m nlivis train` command line.

    python scripts/train_shipped.py --data-dir ../shared/data [--jobs 2] [--only gcnn-snli-small ...] [--list]

Jobs run in priority order (full models on each protocol first, then ablations, then second seeds, then
DIIN's Table 5 variants),
`--jobs` at a time with one torch thread each; a job whose checkpoint folder is already complete is
skipped, and an interrupted job resumes from its last periodic state. The command of each job is what
the README's results table cites.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Job:
    config: str
    protocol: str
    seed: int = 1

    @property
    def name(self) -> str:
        suffix = "" if self.seed == 1 else f"-seed{self.seed}"
        return f"{self.config}-{self.protocol}{suffix}"

    def command(self, data_dir: str, epochs: float | None) -> list[str]:
        cmd = ["python", "-m", "nlivis", "train", "--config", self.config, "--dataset", self.protocol,
               "--data-dir", data_dir, "--size", "shipped", "--embeddings", "minilm",
               "--seed", str(self.seed), "--out", f"checkpoints/{self.name}"]
        if epochs is not None:
            cmd += ["--epochs", str(epochs)]
        return cmd


FULL_MODELS = ("gcnn", "diin", "attentive_conv", "esan", "amn")
ABLATIONS = (
    "gcnn-cnn", "gcnn-glu", "gcnn-no_forget_gate", "gcnn-no_output_gate", "gcnn-char", "gcnn-pos",
    "attentive_conv-light", "attentive_conv-advanced_intra", "attentive_conv-no_tri", "attentive_conv-no_uni",
    "attentive_conv-no_gate",
    "esan-no_augmentation", "esan-no_word_features", "esan-no_contextual_features", "esan-simple_augmentation",
    "amn-lstm", "amn-softmax", "amn-lstm_softmax",
)
DIIN_ABLATIONS = (  # Table 5 rows 2–7, at the reduced shipped size (no GPU was lent to train them at paper size)
    "diin-no_conv", "diin-no_encoding", "diin-no_self_attention", "diin-no_fuse_gate", "diin-addition_fuse",
    "diin-similarity",
)

JOBS: tuple[Job, ...] = (
    *(Job(m, "snli-small") for m in FULL_MODELS),
    *(Job(m, "mnli-small") for m in FULL_MODELS),
    *(Job(m, "quora-small") for m in ("gcnn", "diin", "esan")),
    *(Job(a, "snli-small") for a in ABLATIONS),
    *(Job(m, "snli-small", seed=2) for m in FULL_MODELS),
    *(Job(a, "snli-small") for a in DIIN_ABLATIONS),
)


def is_complete(job: Job) -> bool:
    return (ROOT / "checkpoints" / job.name / "metrics.json").is_file()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--jobs", type=int, default=2, help="jobs at once (one torch thread each)")
    parser.add_argument("--epochs", type=float, default=None, help="override every config's epochs")
    parser.add_argument("--only", nargs="*", default=None, help="job names to run (default: all)")
    parser.add_argument("--list", action="store_true", help="print the commands and exit")
    args = parser.parse_args()

    jobs = [j for j in JOBS if args.only is None or j.name in args.only]
    if args.list:
        for job in jobs:
            print(" ".join(job.command("../shared/data", args.epochs)))
        return 0
    pending = [j for j in jobs if not is_complete(j)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    logs = ROOT / "runs" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    running: dict[str, subprocess.Popen] = {}
    failed: list[str] = []
    while pending or running:
        while pending and len(running) < args.jobs:
            job = pending.pop(0)
            command = job.command(args.data_dir, args.epochs)
            if (ROOT / "checkpoints" / job.name / "state").is_dir():
                command.append("--resume")
            print(f"start {job.name}: {' '.join(command)}", flush=True)
            log = open(logs / f"{job.name}.log", "w")
            running[job.name] = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        time.sleep(5)
        for name, process in list(running.items()):
            if process.poll() is not None:
                del running[name]
                status = "done" if process.returncode == 0 else f"FAILED ({process.returncode})"
                if process.returncode != 0:
                    failed.append(name)
                print(f"{status} {name}", flush=True)
    if failed:
        print(f"failed jobs: {failed} (logs in {logs})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

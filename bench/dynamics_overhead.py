"""What recording training dynamics costs (issue 23: at most 3% of training time, 2 bytes per pair per epoch).

    OMP_NUM_THREADS=1 python bench/dynamics_overhead.py [--models gcnn,diin,attentive_conv,esan,amn]
                                                        [--data-dir ../shared/data] [--steps 40] [--rounds 3] [--out FILE]

Each model is set up at its shipped size on snli-small (the shipped checkpoints' protocol and word vectors) and
trains `--steps` optimizer steps with a state save every 10 steps, no evaluation: once as the trainer runs
(recording on) and once with the recorder's `record` and `gather` replaced by no-ops, alternating which goes
first in each round. The table gives the median seconds per step of both, their ratio (sensitive to the
machine's load) and, from the recording runs, the time spent in the recorder itself — `record` after every
step, `gather`, writing the records into each state save — as a share of the training loop (the number the
3% target is about, and one that load swings do not distort), and the bytes the records take per pair and epoch
in `dynamics.safetensors` at the end of one epoch.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from harness import ROOT, SHIPPED, Report, add_out_option, command_line, load_average, step_seconds
from nlivis.store import training_state
from nlivis.store.dynamics import write_dynamics
from nlivis.training import dynamics as dynamics_module
from nlivis.training.config import deep_merge, load_config
from nlivis.training.request import TrainRequest
from nlivis.training.trainer import Trainer

STATE_EVERY = 10
WARM_UP_STEPS = 2
"""Steps left out of the seconds per step (first calls allocate and warm caches)."""


class Clock:
    """Seconds accumulated inside wrapped functions."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return timed


def one_run(family: str, data_dir: Path, steps: int, record: bool, embeddings: str) -> tuple[float, float, int, int, int]:
    """(seconds per step after the warm-up steps, the recorder's share of all steps' time, pairs, bytes of a
    records file holding one epoch, bytes each further epoch adds)."""
    config = deep_merge(load_config(family), {"shipped": {"training": {"eval_every_steps": 0,
                                                                        "checkpoint_every_steps": STATE_EVERY}}})
    recorder = dynamics_module.DynamicsRecorder
    clock = Clock()
    originals = {name: getattr(recorder, name) for name in ("record", "gather")}
    original_write = training_state.write_dynamics
    try:
        for name, function in originals.items():
            setattr(recorder, name, clock.wrap(function) if record else (lambda *a, **k: None))
        training_state.write_dynamics = clock.wrap(original_write)
        with tempfile.TemporaryDirectory() as folder:
            request = TrainRequest(config, "snli-small", data_dir, Path(folder) / "run", device="cpu", seed=1,
                                   max_steps=steps, size="shipped", embeddings=embeddings, progress=False)
            trainer = Trainer(request)
            durations = step_seconds(trainer)
            trainer.run_epoch()  # `steps` is less than an epoch: the loop stops at max_steps
            pairs = len(trainer.train_items)
            records = trainer.dynamics.dynamics()  # one row: the size of a full epoch's records
            write_dynamics(Path(folder) / "one.safetensors", records)
            records.records = records.records.repeat(2, axis=0)
            write_dynamics(Path(folder) / "two.safetensors", records)
            one, two = ((Path(folder) / f"{n}.safetensors").stat().st_size for n in ("one", "two"))
    finally:
        for name, function in originals.items():
            setattr(recorder, name, function)
        training_state.write_dynamics = original_write
    warm = durations[WARM_UP_STEPS:]
    return sum(warm) / len(warm), clock.seconds / sum(durations), pairs, one, two - one


def overhead_row(family: str, args: argparse.Namespace) -> str:
    """One model's row: `args.rounds` rounds of (recording, not recording) runs, alternating which goes first."""
    on, off, shares = [], [], []
    per_epoch = once = 0.0
    for round_ in range(args.rounds):
        for record in ((True, False) if round_ % 2 == 0 else (False, True)):
            per_step, recorder, pairs, one, added = one_run(family, Path(args.data_dir), args.steps, record,
                                                            args.embeddings)
            if record:
                on.append(per_step)
                shares.append(recorder)
                per_epoch, once = added / pairs, (one - added) / pairs
            else:
                off.append(per_step)
    with_, without = statistics.median(on), statistics.median(off)
    return (f"| {family} | {with_:.4f} | {without:.4f} | {with_ / without - 1:+.1%} | {statistics.median(shares):.2%} "
            f"| {per_epoch:.2f} | {once:.1f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(SHIPPED), help="config names (shipped size)")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"), help="data root with snli/")
    parser.add_argument("--steps", type=int, default=40, help="optimizer steps per run (less than an epoch)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (recording, not recording) runs")
    parser.add_argument("--embeddings", default="minilm", help="word vectors, as the shipped checkpoints use")
    add_out_option(parser)
    args = parser.parse_args()
    with Report(args.out) as report:
        report.print(command_line(f"torch threads {torch.get_num_threads()}, median of {args.rounds} alternating "
                                  f"rounds, state saved every {STATE_EVERY} steps"), load_average("start") + "\n",
                     "| model (shipped) | s/step recording | s/step not recording | ratio | recorder time / loop time | "
                     "bytes per pair and epoch | ids and metadata, bytes per pair (once) |", "|---|---|---|---|---|---|---|")
        for family in args.models.split(","):
            report.print(overhead_row(family, args))
        report.print("\n" + load_average("end"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Recording training dynamics while training: for every training pair, in every epoch, the probability the
model gives its gold label and whether it predicts it, taken from the logits of the very training step that
trains on the pair (train mode, dropout on: what Swayamdipta et al. log), so recording costs no extra pass.

Every process records the pairs of its own batches; `gather` combines the ranks' records (each pair is in
one rank's batch per epoch, the others hold `MISSING`, the largest value: an element-wise minimum keeps the
real record). The records so far, the unfinished epoch's included, go into the resumable state, so a resumed
run ends with the records an uninterrupted one would have. File format: `nlivis.store.dynamics`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.distributed as dist

from nlivis.store.dynamics import MISSING, TrainingDynamics, encode
from nlivis.training.distributed import DistributedContext


class DynamicsRecorder:
    """Records of one run: `record` after each step, `gather` before they are saved or written."""

    def __init__(self, ids: Sequence[str], gold: Sequence[int], labels: Sequence[str], sources: list[dict]):
        self.ids = list(ids)
        self.gold = np.asarray(gold, dtype=np.uint8)
        self.labels = list(labels)
        self.sources = sources
        self.rows: list[np.ndarray] = []
        """One uint16 row per epoch begun, `MISSING` where the pair has not been trained on (yet)."""
        self.gathered = 0
        """Rows before this one are complete on every rank (an epoch ended and its row was gathered)."""

    def restore(self, saved: TrainingDynamics, complete_epochs: int) -> None:
        """Continue from a resumed state's records (which must describe the same pairs); rows from
        `complete_epochs` on belong to the epoch the run resumes in."""
        if saved.ids != self.ids or saved.labels != self.labels or not np.array_equal(saved.gold, self.gold):
            raise ValueError("the saved training dynamics describe other training pairs than this run reads: "
                             "the data changed since the run was started; resume with the same data")
        self.rows = [row.copy() for row in saved.records]
        self.gathered = min(complete_epochs, len(self.rows))

    def record(self, epoch: int, indices: Sequence[int], probabilities: torch.Tensor, labels: torch.Tensor) -> None:
        """The step's records: `probabilities` [B, K] of the pairs at `indices` (columns), gold `labels` [B]."""
        with torch.no_grad():
            gold_probability = probabilities.gather(1, labels.view(-1, 1)).squeeze(1)
            correct = probabilities.argmax(dim=-1) == labels
        while len(self.rows) <= epoch:
            self.rows.append(np.full(len(self.ids), MISSING, dtype=np.uint16))
        self.rows[epoch][np.asarray(indices)] = encode(gold_probability.cpu().numpy(), correct.cpu().numpy())

    def gather(self, context: DistributedContext, device: torch.device, epoch_complete: bool = False) -> None:
        """Combine the ranks' records of the rows not yet gathered (a no-op on one process). Every rank calls
        it at the same point; `epoch_complete` marks the rows gathered for good."""
        if context.enabled:
            for index in range(self.gathered, len(self.rows)):
                combined = torch.from_numpy(self.rows[index].astype(np.int32)).to(device)
                dist.all_reduce(combined, op=dist.ReduceOp.MIN)
                self.rows[index] = combined.cpu().numpy().astype(np.uint16)
        if epoch_complete:
            self.gathered = len(self.rows)

    def dynamics(self) -> TrainingDynamics:
        """The records so far, as stored (`gather` first when distributed)."""
        records = np.stack(self.rows) if self.rows else np.zeros((0, len(self.ids)), dtype=np.uint16)
        return TrainingDynamics(ids=self.ids, gold=self.gold, labels=self.labels, records=records,
                                sources=self.sources)

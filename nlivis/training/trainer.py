"""Train one model under one protocol and write its checkpoint folder.

`train(TrainRequest(...))` is what `python -m nlivis train`, the app's Train page (whose worker runs that
command), the tests and the scripts call. It takes the output folder's lock and runs a `Trainer`, whose
phases are:
- set-up: protocol → read and analyse the train / select / report splits (spaCy, cached) → vocabulary
  (training words; when the word vectors are pretrained and frozen, the select/report words get rows too,
  as one does with GloVe) → char vocabulary → word vectors → featurizer → the augmented pairs of `--augment`
  (label-fixed edits of the training pairs, drawn once, trained on in every epoch: `nlivis.training.augment`)
  → model → optimizer (or the saved state of `--resume`);
- `run`: epochs until the budget (epochs or max_steps) is spent;
- `run_epoch`: the epoch's length-bucketed batches (deterministic given the seed), one `step` each;
- `step`: one optimizer step, its training dynamics recorded (each pair's gold-label probability and
  correctness, from the step's own logits: `nlivis.training.dynamics`), then what is due: a log line, an
  `evaluate` on the select split every `eval_every_steps` (and at each epoch's end), a `save_state` every
  `checkpoint_every_steps`;
- `write_checkpoint`: the best select-split weights, the report splits predicted (never used to choose
  anything), fp16 or fp32, the training dynamics, the folder written atomically.

Progress goes to stderr (a bar on a terminal, a plain line every 5% of the steps in a log:
`nlivis.training.progress`) and, line by line, to `<out>/metrics.jsonl`. When the run is asked to stop
(Ctrl-C, SIGTERM, the app's stop event, or a file `<out>/STOP`) it saves its state to `<out>/state/`;
`resume=True` continues from it and, on one process, reaches the same weights as an uninterrupted run.
"""
from __future__ import annotations

import math
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
from torch import nn

from nlivis.data.protocols import get_protocol, split_key
from nlivis.features.buckets import bucket_batches
from nlivis.features.embeddings import check_embedding_source
from nlivis.features.featurize import Featurizer
from nlivis.features.settings import FeatureSettings
from nlivis.inference import accuracy_of, autocast_for, pair_lengths, predict_probabilities, prediction_rows
from nlivis.models import build
from nlivis.store.checkpoints import (
    DYNAMICS_FILE,
    STATE_FOLDER,
    CheckpointError,
    CheckpointInfo,
    read_checkpoint_info,
    read_json,
)
from nlivis.store.dynamics import AUGMENTED_SPLIT, pair_digest
from nlivis.store.metrics_log import MetricsLog
from nlivis.store.training_state import (
    TrainingState,
    load_training_state,
    read_training_state,
    save_training_state,
)
from nlivis.store.weights import write_checkpoint
from nlivis.training import distributed, schedules
from nlivis.training.augment import augment_training, stderr_progress
from nlivis.training.config import TrainingSettings
from nlivis.training.dynamics import DynamicsRecorder
from nlivis.training.fp16 import choose_weights_dtype
from nlivis.training.optimizers import make_optimizer, sgd_fallback
from nlivis.training.prepared import prepare_data
from nlivis.training.progress import PROGRESS_FILE, Progress, ProgressLog, is_terminal
from nlivis.training.provenance import git_commit, library_versions
from nlivis.training.request import TrainRequest, checkpoint_identity, identity_differences, split_feature_table
from nlivis.training.rng import rng_restore, rng_snapshot, seed_everything
from nlivis.training.run_folder import (
    CoreShare,
    RunFolderError,
    finish_interrupted_save,
    foreign_entries,
    open_run_folder,
)
from nlivis.training.runs import RUN_RECORD_FILE, run_record_folder
from nlivis.training.stopping import StopRequested, StopRequests, TrainingStopped

REGULARIZATION_WEIGHTS = {"encoder_difference": "encoder_difference_weight"}
"""Model regularization term → the [training] key that weights it."""


def train(request: TrainRequest) -> CheckpointInfo:
    """Train and write a checkpoint folder at `request.out_dir`; return its listing entry.

    Raises `TrainingStopped` when asked to stop (its state is saved; `resume=True` continues it). The output
    folder must be new, empty, or this run's own (nlivis.training.run_folder); the run holds its lock from
    before its first write until it ends, so a second run into the same folder is refused. When the run
    writing this folder was killed between the last renames of its checkpoint save, the save is finished
    and, if that run is this request's, its checkpoint returned without training again.
    """
    if not distributed.DistributedContext.from_environment().is_main:
        return Trainer(request).run()  # rank 0 holds the folder for the whole group
    if finish_interrupted_save(request.out_dir):
        return finished_checkpoint(request)
    with open_run_folder(request.out_dir, request.resume), CoreShare():
        # the progress file is started afresh only once this process holds the folder: never another run's;
        # only a run the app started (its record beside the folder) has one: a terminal run adds no .runs folder
        records = run_record_folder(request.out_dir)
        events = (ProgressLog(records / PROGRESS_FILE, fresh=not request.resume)
                  if (records / RUN_RECORD_FILE).is_file() else None)
        try:
            return Trainer(request, events).run()
        except TrainingStopped:
            raise
        except BaseException as error:
            if events is not None:
                events.phase("failed", error=(str(error).splitlines() or [type(error).__name__])[0])
            raise


def finished_checkpoint(request: TrainRequest) -> CheckpointInfo:
    """The checkpoint an interrupted save left at `request.out_dir` (now complete), when it is this request's run."""
    out_dir = request.out_dir
    info = read_checkpoint_info(out_dir)
    recorded = checkpoint_identity(read_json(out_dir, "config.json"))
    differences = (identity_differences(recorded, request.identity(request.resolved_config()))
                   if recorded is not None else ["its config.json does not record the run's settings"])
    if differences:
        raise RunFolderError(f"{out_dir}: finished saving the checkpoint that a run killed between its last renames "
                             f"had written; it is another run's ({'; '.join(differences)}), so nothing was trained: "
                             "choose another --out")
    print(f"note: {out_dir}: finished saving the checkpoint of this run, which was killed between the last renames "
          "of its save; the checkpoint is complete, nothing is left to train", file=sys.stderr)
    return info


@dataclass
class LogWindow:
    """Training loss and accuracy summed since the last log line."""

    loss: float = 0.0
    correct: int = 0
    pairs: int = 0
    start: float = field(default_factory=time.perf_counter)

    def add(self, loss: float, correct: int, pairs: int) -> None:
        self.loss += loss * pairs
        self.correct += correct
        self.pairs += pairs

    def reset(self) -> None:
        self.loss, self.correct, self.pairs, self.start = 0.0, 0, 0, time.perf_counter()


class Trainer:
    """One training run in its (locked) output folder: built from a `TrainRequest`, then `run()`."""

    def __init__(self, request: TrainRequest, events: ProgressLog | None = None):
        self.request = request
        self.events = events
        """The run's progress file (rank 0 of a `train()` call); None on other ranks."""
        self.started = time.time()
        self.context = distributed.DistributedContext.from_environment()
        self.device = distributed.resolve_device(request.device, self.context)
        distributed.setup(self.context, self.device)
        self.out_dir = request.out_dir
        self._configure()
        self._prepare_data()
        self._build_model()
        self._start_or_resume()
        self._plan()

    # ------------------------------------------------------------------------------------------ set-up

    def _configure(self) -> None:
        """The resolved config and its settings, checked before any data is read."""
        request = self.request
        self.resolved = request.resolved_config()
        self.settings = TrainingSettings.from_dict(self.resolved.get("training", {}))
        self.options, self.featurizer_settings = split_feature_table(self.resolved.get("features", {}))
        self.protocol = get_protocol(request.dataset)
        if request.max_steps is not None and request.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {request.max_steps}")
        check_out_dir(self.out_dir, request.resume)
        check_embedding_source(self.options.embeddings)  # a missing GloVe file is said before minutes of spaCy
        self.identity = request.identity(self.resolved)
        if request.resume:
            check_resume_matches(self.out_dir, self.identity)
        self.model_config = dict(self.resolved["model"])
        self.frozen = bool(self.model_config.get("freeze_word_embeddings", True))

    def _prepare_data(self) -> None:
        """Splits, vocabularies and word vectors (seeded: unknown words get random rows); the featurizer; the
        training pairs and their dynamics recorder."""
        request = self.request
        seed_everything(request.seed)
        terminal = is_terminal(sys.stderr)
        if request.progress and self.context.is_main and not terminal:
            print("reading the splits (spaCy analyses each split once; later runs read them from the cache)",
                  file=sys.stderr, flush=True)
        self.event("reading")
        self.data = prepare_data(self.protocol, request.data_dir, self.options, self.frozen,
                                 int(self.model_config.get("word_dim", 300)), request.seed, request.cache_dir,
                                 request.progress and self.context.is_main and terminal,
                                 self.settings.snli_fraction_with_mnli,
                                 on_split=lambda split: self.event("reading", split=split), plan=self._short_run_plan())
        check_finite_vectors(self.data.vectors, self.data.vocab, self.options.embeddings)
        self.model_config.update(vocab_size=len(self.data.vocab), char_vocab_size=len(self.data.char_vocab),
                                 word_dim=int(self.data.vectors.shape[1]), num_classes=len(self.protocol.labels))
        self.featurizer = Featurizer(self.data.vocab, self.data.char_vocab, FeatureSettings(**self.featurizer_settings),
                                     self.protocol.labels)
        self.augmentation = self._augment()
        self.train_items = (self.data.train_items + (self.data.mix_in.items if self.data.mix_in else [])
                            + (self.augmentation.items if self.augmentation else []))
        """Every training pair, then the mix-in pool, then the augmented pairs: batches hold indices into this
        list."""
        self.dynamics = self._dynamics_recorder()

    def _short_run_plan(self) -> Callable[[Sequence], list[int]] | None:
        """For a fresh run on one process without augmentation that `max_steps` may end within its first epoch:
        the training pairs its steps use (its first batches, as `epoch_batches` draws them), so that only those
        wait for spaCy on a cold feature cache (`prepared.planned_training_items`) — the Train page's short runs
        reached their first step after the whole training split's analysis. None otherwise."""
        request = self.request
        if request.max_steps is None or request.resume or request.augment or self.context.enabled:
            return None

        def plan(items: Sequence) -> list[int]:
            batches = bucket_batches(pair_lengths(items, self.featurizer_settings), self.settings.batch_size,
                                     seed=epoch_seed(request.seed, 0), shuffle=True)
            steps = min(math.ceil(self.settings.epochs * len(batches)), request.max_steps)
            return [index for batch in batches[:steps] for index in batch]

        return plan

    def _augment(self):
        """The run's augmented pairs (`--augment`): label-fixed edits of the training pairs, drawn once with the
        seed (`nlivis.training.augment`); None without augmentation."""
        request = self.request
        if not request.augment:
            return None

        report = request.progress and self.context.is_main
        self.event("reading", split="the augmented pairs (--augment)")
        return augment_training(self.data.train_items, self.protocol.labels, request.augment, request.augment_ratio,
                                request.seed, request.cache_dir, stderr_progress if report else lambda message: None,
                                negated_share=request.augment_negated_share,
                                exclusive_twins=request.augment_exclusive_twins)

    def _build_model(self) -> None:
        """The model from the resolved config, seeded, with the word vectors in (frozen or not)."""
        seed_everything(self.request.seed)
        self.model = build(self.model_config)
        self.model.load_word_vectors(self.data.vectors)
        self.model.word_embedding.weight.requires_grad_(not self.frozen)
        self.initial_dropout = float(self.model_config.get("dropout", getattr(self.model.config, "dropout", 0.0)))
        self.model.to(self.device)
        self.trainable = [p for p in self.model.parameters() if p.requires_grad]

    def _start_or_resume(self) -> None:
        """Counters, optimizer and best weights: fresh, or from `<out>/state/`; the live log; DDP."""
        request = self.request
        self.state = TrainingState(optimizer_name=self.settings.optimizer, identity=self.identity)
        self.optimizer = make_optimizer(self.settings.optimizer, self.trainable, self.settings)
        self.best_weights: dict[str, torch.Tensor] | None = None
        self.best_select_probabilities: torch.Tensor | None = None
        """The select split's predictions at the best step (saves one pass at the end; None after a resume)."""
        if request.resume:
            self._restore_state()
        elif self.context.enabled:
            torch.manual_seed(request.seed + self.context.rank)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.log = (MetricsLog(self.out_dir / "metrics.jsonl", resume_from_step=self.state.step if request.resume else None)
                    if self.context.is_main else None)
        self.train_model = distributed.wrap_model(self.model, self.context, self.device)

    def _plan(self) -> None:
        """Steps per epoch and in all (epochs or max_steps, whichever ends first); stop requests; progress."""
        self.lengths = pair_lengths(self.train_items, self.featurizer_settings)
        self.batches_per_epoch = len(self.epoch_batches(0))
        self.total_steps = math.ceil(self.settings.epochs * self.batches_per_epoch)
        if self.request.max_steps is not None:
            self.total_steps = min(self.total_steps, self.request.max_steps)
        self.regularization_weights = {term: getattr(self.settings, key) for term, key in REGULARIZATION_WEIGHTS.items()}
        self.stops = StopRequests(self.out_dir, self.request.stop_event)
        self.window = LogWindow()
        self.last_evaluated_step = -1
        self.progress = Progress(self.total_steps, self.state.step, self.request.progress and self.context.is_main)
        self.elapsed_before = self.state.elapsed_s
        self.trained_seconds = 0.0
        """Wall time when training ended (set by `write_checkpoint`; recorded in config.json)."""

    def _restore_state(self) -> None:
        """Counters, weights, optimizer, best weights and random generators from `<out>/state/`."""
        saved = load_training_state(self.out_dir)
        self.state = saved.state
        self.state.identity = self.identity  # (states saved before identities were recorded get one now)
        self.model.load_state_dict(saved.model_state)
        if self.state.optimizer_name != self.settings.optimizer:
            self.optimizer = sgd_fallback(self.trainable, self.settings)
        self.optimizer.load_state_dict(saved.optimizer_state)
        self.best_weights = saved.best_model_state
        if saved.dynamics is not None:
            self.dynamics.restore(saved.dynamics, complete_epochs=self.state.epoch)
        elif self.context.is_main:
            print(f"note: {self.out_dir / STATE_FOLDER} was saved before training dynamics were recorded: the epochs "
                  "before this resume have none", file=sys.stderr)
        rng_restore(saved.rng_tensors, self.state.python_rng, self.state.numpy_rng)
        if self.context.enabled:
            torch.manual_seed(int(torch.randint(0, 2 ** 31, (1,)).item()) + self.context.rank)

    def _dynamics_recorder(self) -> DynamicsRecorder:
        """Columns: `train_items` (the training splits, then the mix-in pool) by pair id and gold label."""
        sources, start = [], 0
        mix_in = self.data.mix_in
        for split, count in [*self.data.train_sources, *([(mix_in.split, len(mix_in.items))] if mix_in else [])]:
            sources.append({"split": split, "start": start, "count": count})
            start += count
        if self.augmentation is not None:
            sources.append(augmented_source(start, self.augmentation))
        return DynamicsRecorder(ids=[item.pair.id for item in self.train_items],
                                gold=[self.featurizer.label_index[item.pair.label] for item in self.train_items],
                                labels=self.protocol.labels, sources=sources)

    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """Batches of indices into `train_items`: every training pair, plus this epoch's mix-in sample; this
        process's share of them under torchrun."""
        seed, mix_in = self.request.seed, self.data.mix_in
        if mix_in is None:
            chosen = list(range(len(self.lengths)))
        else:
            pool = torch.randperm(len(mix_in.items), generator=torch.Generator().manual_seed(epoch_seed(seed, epoch)))
            first = len(self.data.train_items)
            augmented = range(first + len(mix_in.items), len(self.lengths))
            chosen = [*range(first), *(first + pool[:mix_in.per_epoch]).tolist(), *augmented]
        batches = bucket_batches([self.lengths[i] for i in chosen], self.settings.batch_size,
                                 seed=epoch_seed(seed, epoch), shuffle=True)
        return distributed.shard_batches([[chosen[j] for j in batch] for batch in batches], self.context)

    # ------------------------------------------------------------------------------------------ phases

    def run(self) -> CheckpointInfo:
        """Train until the budget is spent, then write the checkpoint (rank 0) and return its entry. A model may
        keep what its frozen part computes for the pairs evaluated again and again (`reusing_frozen_outputs`)."""
        with getattr(self.model, "reusing_frozen_outputs", nullcontext)():
            return self._run()

    def _run(self) -> CheckpointInfo:
        with self.stops:
            self.event("training", step=self.state.step, total=self.total_steps,
                       **({"resumed": True} if self.request.resume else {}))
            try:
                while self.state.step < self.total_steps:
                    self.run_epoch()
                if self.last_evaluated_step != self.state.step:
                    self.evaluate("end")
                self.dynamics.gather(self.context, self.device)
            except StopRequested:
                self.event("saving", what="saving the training state (Resume continues from it)")
                self.save_state()
                self.stops.clear_file()
                self.event("stopped", step=self.state.step, total=self.total_steps)
                self.progress.close()
                distributed.barrier(self.context)
                distributed.teardown(self.context)
                raise TrainingStopped(self.out_dir, self.state.step) from None
        self.progress.close()
        info = self.write_checkpoint() if self.context.is_main else None
        distributed.barrier(self.context)
        distributed.teardown(self.context)
        return info if info is not None else read_checkpoint_info(self.out_dir)

    def run_epoch(self) -> None:
        """The current epoch's remaining batches (all of them, unless resumed mid-epoch or the budget ends
        first); at its end an evaluation and the move to the next epoch."""
        batches = self.epoch_batches(self.state.epoch)
        if self.state.optimizer_name == self.settings.optimizer:
            for group in self.optimizer.param_groups:
                group["lr"] = schedules.learning_rate_for_epoch(self.settings.lr, self.settings.lr_decay_per_epoch,
                                                                self.state.epoch)
        while self.state.batch_in_epoch < len(batches) and self.state.step < self.total_steps:
            if distributed.any_rank(self.stops.requested(), self.context, self.device):
                raise StopRequested
            self.step(batches[self.state.batch_in_epoch])
        if self.state.batch_in_epoch >= len(batches):
            self.dynamics.gather(self.context, self.device, epoch_complete=True)
            if self.last_evaluated_step != self.state.step:
                self.evaluate("epoch_end")
            self.state.epoch += 1
            self.state.batch_in_epoch = 0

    def step(self, indices: list[int]) -> None:
        """One optimizer step on the training pairs at `indices`, then the log line, evaluation and state
        save that are due."""
        loss, logits, labels = self._optimize(self.featurizer.encode([self.train_items[i] for i in indices]))
        correct = int((logits.argmax(dim=-1) == labels).sum().item())
        self.dynamics.record(self.state.epoch, indices, self.model.probabilities(logits.float()), labels)
        state, settings = self.state, self.settings
        state.step += 1
        state.batch_in_epoch += 1
        state.pairs_seen += len(indices) * self.context.world_size
        self.window.add(loss, correct, len(indices))
        if state.step % settings.log_every_steps == 0 or state.step == self.total_steps:
            self._log_window()
        if settings.eval_every_steps and state.step % settings.eval_every_steps == 0:
            self.evaluate("every_steps")
        if settings.checkpoint_every_steps and state.step % settings.checkpoint_every_steps == 0:
            self.save_state()
        self.progress.update(1)
        if self.events is not None:
            self.events.step(state.step, self.total_steps)

    def evaluate(self, reason: str) -> None:
        """Select-split accuracy (rank 0 computes, every rank gets it); keep the weights when it is the best
        so far; DIIN's SGD fallback when it has stalled."""
        accuracy, probabilities = 0.0, None
        if self.context.is_main:
            select_items = self.data.select_items  # analysed now the first time (a "reading" event)
            self.event("evaluating", step=self.state.step, total=self.total_steps)
            probabilities = predict_probabilities(self.model, self.featurizer, select_items,
                                                  self.settings.eval_batch_size, self.device)
            accuracy = accuracy_of(select_items, probabilities, self.protocol.labels)
        accuracy = distributed.broadcast_value(accuracy, self.context, self.device)
        state = self.state
        self.last_evaluated_step = state.step
        if state.best_dev_accuracy is None or accuracy > state.best_dev_accuracy:
            state.best_dev_accuracy, state.best_step = accuracy, state.step
            if self.context.is_main:
                self.best_weights = {k: v.detach().to("cpu").clone() for k, v in self.model.state_dict().items()}
                self.best_select_probabilities = probabilities
        state.curve.append({"step": state.step, "epoch": self.epochs_done(), "dev_acc": accuracy, "reason": reason})
        if self.log is not None:
            self.log.write(step=state.step, epoch=round(self.epochs_done(), 4), dev_acc=accuracy,
                           best_dev_acc=state.best_dev_accuracy, lr=self.current_lr())
        self.progress.postfix(f"dev {accuracy:.3f} (best {state.best_dev_accuracy:.3f})")
        self.event("training", step=state.step, total=self.total_steps, dev_acc=accuracy)
        self._fall_back_to_sgd_if_stalled()

    def save_state(self) -> None:
        """Write the resumable state to `<out>/state/` (rank 0; every rank takes part in gathering the
        training dynamics)."""
        self.dynamics.gather(self.context, self.device)
        if self.context.is_main:
            self._write_state()

    def _write_state(self) -> None:
        tensors, python_state, numpy_state = rng_snapshot()
        self.state.python_rng, self.state.numpy_rng = python_state, numpy_state
        self.state.elapsed_s = self.wall_time()
        save_training_state(self.out_dir, self.state, self.model.state_dict(), self.optimizer.state_dict(),
                            self.best_weights, tensors, self.dynamics.dynamics())

    def write_checkpoint(self) -> CheckpointInfo:
        """The best weights, the select and report splits predicted with them (fp16 when that costs nothing),
        written as one checkpoint folder. A failed write (e.g. a full disk) keeps the finished training
        resumable: `--resume` then writes the checkpoint without training again."""
        assert self.best_weights is not None
        self.trained_seconds = self.wall_time()
        self.model.load_state_dict(self.best_weights)
        self.event("saving", what="predicting the report splits and writing the checkpoint")
        try:
            info = self._write_checkpoint()
            self.event("finished", step=self.state.step, total=self.total_steps)
            return info
        except CheckpointError as error:
            self._write_state()
            raise CheckpointError(self.out_dir, f"{error.problem}; the finished training is saved in {STATE_FOLDER}/: "
                                                "once there is room, --resume writes the checkpoint without training "
                                                "again") from error

    # ----------------------------------------------------------------------------------------- helpers

    def event(self, phase: str, **fields: Any) -> None:
        """A progress event for the Train page (`nlivis.training.progress.ProgressLog`); rank 0 only."""
        if self.events is not None:
            self.events.phase(phase, **fields)

    def epochs_done(self) -> float:
        return self.state.epoch + self.state.batch_in_epoch / max(1, self.batches_per_epoch)

    def current_lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def wall_time(self) -> float:
        """Seconds this run has trained, across resumes."""
        return self.elapsed_before + time.time() - self.started

    def _optimize(self, batch) -> tuple[float, torch.Tensor, torch.Tensor]:
        """One optimizer step on `batch`; returns (classification loss, the step's logits [B, K] detached,
        gold labels [B])."""
        model, settings, step = self.model, self.settings, self.state.step
        if settings.dropout_keep_decay_rate != 1.0:
            keep = schedules.dropout_keep_rate(step, 1.0 - self.initial_dropout, settings.dropout_keep_decay_rate,
                                               settings.dropout_keep_decay_steps)
            schedules.set_dropout_rate(model, 1.0 - keep)
        model.train()
        batch = batch.to(self.device)
        with autocast_for(self.device):
            logits = self.train_model(batch)
            loss = model.loss(logits.float(), batch.labels)
        total = loss
        for term, value in model.regularization_terms().items():
            if term not in self.regularization_weights:
                raise ValueError(f"model {model.name!r} returns a regularization term {term!r} that training does not "
                                 f"know how to weight (known: {sorted(self.regularization_weights)})")
            if self.regularization_weights[term]:
                total = total + self.regularization_weights[term] * value
        if settings.l2_schedule == "sigmoid_ramp" and settings.l2_full_weight:
            weight = schedules.sigmoid_ramp_weight(step, settings.l2_full_weight, settings.l2_ramp_midpoint_step,
                                                   settings.l2_ramp_steps)
            total = total + weight * schedules.l2_penalty(model)
        self.optimizer.zero_grad(set_to_none=True)
        total.backward()
        if settings.warmup_steps and self.state.optimizer_name == settings.optimizer:
            for group in self.optimizer.param_groups:
                group["lr"] = schedules.warmup_factor(step, settings.warmup_steps) * schedules.learning_rate_for_epoch(
                    settings.lr, settings.lr_decay_per_epoch, self.state.epoch)
        if settings.max_grad_norm:
            nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], settings.max_grad_norm)
        self.optimizer.step()
        return float(loss.detach().item()), logits.detach(), batch.labels

    def _log_window(self) -> None:
        """The training loss, accuracy and speed since the last log line, to the progress report and metrics.jsonl."""
        window = self.window
        if window.pairs == 0:
            return
        seconds = max(time.perf_counter() - window.start, 1e-9)
        loss, accuracy = window.loss / window.pairs, window.correct / window.pairs
        speed = window.pairs * self.context.world_size / seconds
        self.progress.describe(f"epoch {self.epochs_done():.2f} loss {loss:.3f} acc {accuracy:.3f} {speed:.0f} pairs/s")
        if self.log is not None:
            self.log.write(step=self.state.step, epoch=round(self.epochs_done(), 4), loss=loss, train_acc=accuracy,
                           pairs_per_s=speed, lr=self.current_lr())
        window.reset()

    def _fall_back_to_sgd_if_stalled(self) -> None:
        """DIIN §4.2: switch to SGD once `sgd_fallback_after_steps` optimizer steps have passed without a
        better select-split score (checked at every evaluation, as the paper's 30,000-step rule)."""
        settings, state = self.settings, self.state
        if (settings.sgd_fallback_after_steps and state.optimizer_name != "sgd"
                and state.step - (state.best_step or 0) >= settings.sgd_fallback_after_steps):
            self.optimizer = sgd_fallback(self.trainable, settings)
            state.optimizer_name = "sgd"

    def _write_checkpoint(self) -> CheckpointInfo:
        """Predict the select and report splits with the best weights, decide fp16 vs fp32, write the folder."""
        data, labels = self.data, self.protocol.labels
        select_probabilities = self.best_select_probabilities
        if select_probabilities is None:
            select_probabilities = predict_probabilities(self.model, self.featurizer, data.select_items,
                                                         self.settings.eval_batch_size, self.device)
        weights_dtype, fp16_check, rounded = choose_weights_dtype(
            self.model, self.featurizer, data.select_items, select_probabilities, self.settings.eval_batch_size,
            self.device, labels, shared_embeddings=self.frozen)
        if rounded is not None:  # the stored weights are the fp16 ones: every recorded prediction comes from them
            self.model.load_state_dict(rounded[0].state_dict())
            select_probabilities = rounded[1]
        probabilities = {data.select_key: select_probabilities}
        items_by_key = {data.select_key: data.select_items, **data.report_items}
        for key, items in data.report_items.items():
            if key not in probabilities:
                probabilities[key] = predict_probabilities(self.model, self.featurizer, items,
                                                           self.settings.eval_batch_size, self.device)
        metrics = {
            "best_dev_accuracy": accuracy_of(data.select_items, probabilities[data.select_key], labels),
            "best_dev_accuracy_in_training": self.state.best_dev_accuracy,
            "best_step": self.state.best_step,
            "select_split": data.select_key,
            "curve": self.state.curve,
            "report": {key: {"accuracy": accuracy_of(items_by_key[key], probabilities[key], labels),
                             "count": len(items_by_key[key])} for key in probabilities},
            "log": "metrics.jsonl",
        }
        predictions = {key: prediction_rows(items_by_key[key], probabilities[key], labels) for key in probabilities}
        write_checkpoint(self.out_dir, model=self.model, vocab=data.vocab, char_vocab=data.char_vocab,
                         record=self._checkpoint_record(fp16_check), metrics=metrics, predictions=predictions,
                         weights_dtype=weights_dtype, share_embeddings=self.frozen, dynamics=self.dynamics.dynamics(),
                         extra_files=(self.out_dir / "metrics.jsonl",
                                      *(self.out_dir / name for name in foreign_entries(self.out_dir))))
        return read_checkpoint_info(self.out_dir)

    def _checkpoint_record(self, fp16_check: dict[str, Any]) -> dict[str, Any]:
        """config.json: what rebuilds the model and featurizer, and where the run came from."""
        data, protocol, request = self.data, self.protocol, self.request
        mix_in = data.mix_in
        return {
            "name": self.out_dir.name,
            "config_name": self.resolved.get("config_name", ""),
            "size": request.size,
            "model": self.model_config,
            "parameters": self.model.count_parameters(),
            "labels": list(protocol.labels),
            "dataset": {"name": request.dataset, "protocol": protocol.name,
                        "description": protocol.description + (f"; with {mix_in.fraction:.0%} of {mix_in.split} "
                                                               f"drawn anew each epoch" if mix_in else ""),
                        "note": protocol.note, "small": protocol.small,
                        "train": [split_key(r) for r in protocol.train], "select": data.select_key,
                        "report": [split_key(r) for r in protocol.report], "train_pairs": len(data.train_items),
                        **({"augmented_pairs": len(self.augmentation.items)} if self.augmentation else {}),
                        **({"mix_in": {"split": mix_in.split, "fraction": mix_in.fraction,
                                       "pairs_per_epoch": mix_in.per_epoch, "of": len(mix_in.items)}}
                           if mix_in else {})},
            "features": {"options": self.options.to_dict(), "featurizer": self.featurizer_settings},
            "vocabulary": data.vocabulary_record,
            "chars": {"size": len(data.char_vocab), "file": "chars.json"},
            "embeddings": {"source": self.options.embeddings, "frozen": self.frozen, "dim": int(data.vectors.shape[1]),
                           "stats": data.embedding_stats},
            "training": self.settings.to_dict(),
            "source_config": {k: v for k, v in self.resolved.items() if k != "size"},
            "fp16_check": fp16_check,
            "versions": library_versions(),
            "git_commit": git_commit(),
            "seed": request.seed,
            "device": str(self.device),
            "wall_time_s": round(self.trained_seconds, 1),
            "pairs_seen": self.state.pairs_seen,
            "steps": self.state.step,
            "epochs": round(self.epochs_done(), 4),
            "dynamics": {"file": DYNAMICS_FILE, "pairs": len(self.train_items), "epochs": len(self.dynamics.rows)},
            **({"augmentation": self.augmentation.record} if self.augmentation else {}),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }


def epoch_seed(seed: int, epoch: int) -> int:
    """The seed of an epoch's batches (and of its mix-in draw)."""
    return seed * 100_003 + epoch


def augmented_source(start: int, augmentation) -> dict[str, Any]:
    """The dynamics' source entry of the augmented columns: their kinds, the columns of their originals (so a data
    map can mark them and lead back to the pair each was made from) and the digests of their texts (so the text
    it makes again can be checked against the one trained on)."""
    return {"split": AUGMENTED_SPLIT, "start": start, "count": len(augmentation.items),
            "kinds": list(augmentation.kinds), "originals": [int(i) for i in augmentation.originals],
            "digests": [pair_digest(item.pair.premise, item.pair.hypothesis, item.pair.label)
                        for item in augmentation.items]}


def check_resume_matches(out_dir: Path, identity: dict[str, Any]) -> None:
    """A resume continues the saved run: same config, dataset, size and seed (the budget may change)."""
    saved, _ = read_training_state(out_dir)
    if not saved.identity:
        print(f"note: {out_dir / STATE_FOLDER} was saved before runs recorded their settings: this resume cannot check "
              "that its config, dataset, size and seed are the saved run's", file=sys.stderr)
        return
    differences = identity_differences(saved.identity, identity)
    if differences:
        raise ValueError(f"--resume continues the run saved in {out_dir / STATE_FOLDER}, but this command differs "
                         f"from it: {'; '.join(differences)}. Resume with that run's settings (only --epochs and "
                         "--max-steps may change), or start this run in another folder")


def check_finite_vectors(vectors: torch.Tensor, vocab, source: str) -> None:
    """Refuse word vectors holding NaN or infinity before the first step: training on them only yields NaN."""
    bad = ~torch.isfinite(vectors).all(dim=1)
    if bool(bad.any()):
        words = [vocab.symbols[i] for i in bad.nonzero().flatten()[:3].tolist()]
        raise ValueError(f"the word vectors ({source}) hold NaN or infinite values in {int(bad.sum())} of "
                         f"{len(bad)} rows (e.g. {', '.join(map(repr, words))}); nothing was trained: fix or replace "
                         "the vectors")


def check_out_dir(out_dir: Path, resume: bool) -> None:
    """A resume needs a saved state; a new run must not bury one."""
    if resume and not (out_dir / STATE_FOLDER / "state.json").is_file():
        raise ValueError(f"{out_dir} has no training state to resume ({out_dir / STATE_FOLDER} is missing)")
    if not resume and (out_dir / STATE_FOLDER).exists():
        raise ValueError(f"{out_dir} holds the state of an unfinished run; continue it with --resume or remove the folder")


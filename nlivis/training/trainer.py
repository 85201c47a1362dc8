"""Train one model under one protocol and write its checkpoint folder.

`train(...)` is what both `python -m nlivis train` and the app's Train page (in a worker process) call.
The flow: protocol → read and analyse the train / select / report splits (spaCy, cached) → vocabulary
(training words; when the word vectors are pretrained and frozen, the select/report words get rows too,
as one does with GloVe) → char vocabulary → word vectors → featurizer → model → optimizer and schedules
→ length-bucketed batches (deterministic given the seed) → steps, with evaluation on the select split
every `eval_every_steps` and at each epoch's end. The best select-split weights are kept; the report
splits are only predicted at the end, never used to choose anything.

Progress goes to a tqdm bar and, line by line, to `<out>/metrics.jsonl`. A periodic resumable state
goes to `<out>/state/` every `checkpoint_every_steps`, and when the run is stopped (Ctrl-C, SIGTERM, the
app's stop event, or a file `<out>/STOP`); `resume=True` continues from it and, on one process, reaches
the same weights as an uninterrupted run with the same seed.
"""
from __future__ import annotations

import copy
import math
import random
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from nlivis.inference import (
    accuracy_of,
    autocast_for,
    pair_lengths,
    predict_probabilities,
    prediction_rows,
)
from nlivis.store.checkpoints import (
    STATE_FOLDER,
    CheckpointError,
    CheckpointInfo,
    read_checkpoint_info,
)
from nlivis.store.metrics_log import MetricsLog
from nlivis.store.training_state import (
    TrainingState,
    load_training_state,
    save_training_state,
)
from nlivis.store.weights import word_embedding_key, write_checkpoint
from nlivis.training import distributed, schedules
from nlivis.training.config import FeatureOptions, TrainingSettings, apply_size
from nlivis.training.provenance import git_commit, library_versions
from nlivis.training.run_folder import (
    STOP_FILE,
    CoreShare,
    foreign_entries,
    open_run_folder,
)

FP16_MAX_ACCURACY_CHANGE = 0.0005
"""fp16 weights are kept when they move select-split accuracy by at most this (0.05 points: 5 pairs in
10k, a tenth of the seed-to-seed spread measured on snli-small)."""
FP16_MAX_LABELS_CHANGED = 0.002
"""… and flip at most this fraction of the select-split labels (near-ties only)."""
REGULARIZATION_WEIGHTS = {"encoder_difference": "encoder_difference_weight"}
"""Model regularization term → the [training] key that weights it."""


class _StopRequested(Exception):
    """Raised inside the step loop to leave it for the save-and-stop path."""


class TrainingStopped(Exception):
    """Training was asked to stop; its state is saved and `resume=True` continues it."""

    def __init__(self, out_dir: Path, step: int):
        super().__init__(f"training stopped at step {step}; state saved in {out_dir / STATE_FOLDER} "
                         f"(continue with --resume)")
        self.out_dir = out_dir
        self.step = step


# ------------------------------------------------------------------------------------------- settings

def split_feature_table(table: Mapping[str, Any]) -> tuple[FeatureOptions, dict[str, Any]]:
    """[features] → (vocabulary/embedding options, `FeatureSettings` keyword arguments).
    Keys of either are accepted; anything else is an error listing both."""
    from nlivis.features.featurize import FeatureSettings

    featurizer_keys = {f.name for f in fields(FeatureSettings)}
    option_keys = {f.name for f in fields(FeatureOptions)}
    unknown = sorted(set(table) - featurizer_keys - option_keys)
    if unknown:
        raise ValueError(f"[features]: unknown key(s) {unknown}; known keys: {sorted(featurizer_keys | option_keys)}")
    options = FeatureOptions.from_dict({k: v for k, v in table.items() if k in option_keys})
    featurizer = {k: getattr(options, k) for k in featurizer_keys & option_keys}
    featurizer.update({k: v for k, v in table.items() if k in featurizer_keys})
    FeatureSettings(**featurizer)  # validates now rather than after reading the data
    return options, featurizer


def resolve_config(config: Mapping[str, Any], size: str, embeddings: str | None, epochs: float | None,
                   model_name: str | None = None) -> dict[str, Any]:
    """The config a run uses: size applied, then command-line overrides."""
    resolved = apply_size(config, size) if "size" not in config else copy.deepcopy(dict(config))
    if "model" not in resolved or "name" not in resolved["model"]:
        raise ValueError("config has no [model] table with a name")
    if model_name is not None:
        resolved["model"]["name"] = model_name
    if embeddings is not None:
        resolved.setdefault("features", {})["embeddings"] = embeddings
    if epochs is not None:
        resolved.setdefault("training", {})["epochs"] = float(epochs)
    return resolved


# ------------------------------------------------------------------------------------------------ data

SNLI_MIX_IN_FOLDERS = ("snli_1.0", "")
"""Where under an `mnli` data root SNLI's training split is looked for (the official zip's folder first)."""


@dataclass
class MixIn:
    """Pairs drawn anew each epoch besides the protocol's training splits (DIIN's 15% of SNLI with MultiNLI)."""

    split: str
    fraction: float
    items: list

    @property
    def per_epoch(self) -> int:
        return round(self.fraction * len(self.items))


@dataclass
class PreparedData:
    protocol: Any
    train_items: list
    select_items: list
    report_items: dict[str, list]
    select_key: str
    vocab: Any
    char_vocab: Any
    vectors: torch.Tensor
    embedding_stats: dict[str, Any]
    vocabulary_record: dict[str, Any]
    mix_in: MixIn | None = None


def _token_lists(items: Sequence) -> list[Sequence[str]]:
    return [t for item in items for t in (item.premise.tokens, item.hypothesis.tokens)]


def build_vocabulary(train_items: Sequence, eval_items: Sequence, options: FeatureOptions, add_eval_words: bool):
    """Training words (min_freq); when `add_eval_words`, select/report words not among them are appended
    (most frequent first), so frozen pretrained vectors cover them. Returns the vocabulary and its record."""
    from nlivis.features.vocab import Vocabulary

    vocab = Vocabulary.build(_token_lists(train_items), min_freq=options.min_word_freq, lowercase=options.lowercase)
    added = 0
    if add_eval_words:
        counts: Counter = Counter(vocab.normalize(t) for tokens in _token_lists(eval_items) for t in tokens)
        extra = sorted((w for w in counts if w not in vocab.index), key=lambda w: (-counts[w], w))
        vocab = Vocabulary([*vocab.symbols, *extra], lowercase=vocab.lowercase)
        added = len(extra)
    record = {"size": len(vocab), "min_freq": options.min_word_freq, "lowercase": options.lowercase,
              "from_training_split": len(vocab) - added, "added_from_select_and_report_splits": added,
              "file": "vocab.json"}
    return vocab, record


def snli_mix_in_ref(data_dir: Path):
    """SNLI's training split under an `mnli` data root (snli_1.0/ first, then the root), or a clear error."""
    from nlivis.data.protocols import SplitRef, candidate_files, find_split_file

    refs = [SplitRef("snli", "train", folder) for folder in SNLI_MIX_IN_FOLDERS]
    for ref in refs:
        if find_split_file(ref, data_dir) is not None:
            return ref
    looked = ", ".join(str(path) for ref in refs for path in candidate_files(ref, data_dir) if path.suffix != ".gz")
    raise FileNotFoundError(f"[training] snli_fraction_with_mnli needs SNLI's training split beside MultiNLI; looked for "
                            f"{looked} (each also as .gz); put snli_1.0/ in {data_dir} or set the fraction to 0")


def prepare_data(protocol, data_dir: Path, options: FeatureOptions, frozen: bool, word_dim: int, seed: int,
                 cache_dir, progress: bool, snli_fraction: float = 0.0) -> PreparedData:
    """The protocol's splits, analysed; with `snli_fraction` under the `mnli` protocol, SNLI's training split
    too, as the pool each epoch's mix-in is drawn from (its words are training words)."""
    from nlivis.data.protocols import require_training_splits, split_key
    from nlivis.features.dataset import load_split_analyzed_reported
    from nlivis.features.embeddings import build_embeddings
    from nlivis.features.vocab import CharVocabulary

    require_training_splits(protocol, data_dir)
    loaded: dict[Any, list] = {}

    def items_of(ref) -> list:
        if ref not in loaded:
            loaded[ref] = load_split_analyzed_reported(ref, data_dir, cache_dir, progress=progress)[0]
        return loaded[ref]

    train_items = [item for ref in protocol.train for item in items_of(ref) if item.pair.label is not None]
    if not train_items:
        raise ValueError(f"protocol {protocol.name!r}: the training split(s) have no labelled pairs")
    select_items = items_of(protocol.select)
    report_items = {split_key(ref): items_of(ref) for ref in protocol.report}
    mix_in = None
    if snli_fraction > 0 and protocol.name == "mnli":
        ref = snli_mix_in_ref(data_dir)
        mix_in = MixIn(split_key(ref), snli_fraction, [i for i in items_of(ref) if i.pair.label is not None])
    vocabulary_items = train_items + (mix_in.items if mix_in else [])
    pretrained = options.embeddings != "random"
    eval_items = [*select_items, *(i for items in report_items.values() for i in items)]
    vocab, vocab_record = build_vocabulary(vocabulary_items, eval_items, options, add_eval_words=pretrained and frozen)
    char_vocab = CharVocabulary.build(_token_lists(vocabulary_items), max_chars=options.max_chars)
    vectors, stats = build_embeddings(options.embeddings, vocab, dim=None if pretrained else word_dim, seed=seed,
                                      oov_scale=options.unknown_word_scale or None, oov_init=options.unknown_word_init)
    return PreparedData(protocol, train_items, select_items, report_items, split_key(protocol.select), vocab,
                        char_vocab, vectors, dict(stats) if isinstance(stats, Mapping) else _as_dict(stats),
                        vocab_record, mix_in)


def _as_dict(value: Any) -> dict[str, Any]:
    if hasattr(value, "to_dict"):
        return dict(value.to_dict())
    if hasattr(value, "__dataclass_fields__"):
        return {f: getattr(value, f) for f in value.__dataclass_fields__}
    return {"value": str(value)}


# ----------------------------------------------------------------------------------------- evaluation


# ----------------------------------------------------------------------------------------- optimizers

def make_optimizer(name: str, parameters: list[nn.Parameter], settings: TrainingSettings) -> torch.optim.Optimizer:
    """One of adam | adadelta | adagrad | rmsprop | sgd with the [training] lr / weight decay / eps."""
    lr, decay, eps = settings.lr, settings.weight_decay, settings.eps
    if name == "adam":
        return torch.optim.Adam(parameters, lr=lr, weight_decay=decay, eps=eps)
    if name == "adadelta":
        return torch.optim.Adadelta(parameters, lr=lr, rho=settings.adadelta_rho, eps=eps, weight_decay=decay)
    if name == "adagrad":
        return torch.optim.Adagrad(parameters, lr=lr, weight_decay=decay, eps=eps)
    if name == "rmsprop":
        return torch.optim.RMSprop(parameters, lr=lr, weight_decay=decay, eps=eps)
    if name == "sgd":
        return torch.optim.SGD(parameters, lr=lr, weight_decay=decay)
    raise ValueError(f"optimizer {name!r} unknown")


def sgd_fallback(parameters: list[nn.Parameter], settings: TrainingSettings) -> torch.optim.Optimizer:
    return torch.optim.SGD(parameters, lr=settings.sgd_fallback_lr, weight_decay=settings.weight_decay)


# -------------------------------------------------------------------------------------- RNG and seeds

def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    torch.manual_seed(seed)


def rng_snapshot() -> tuple[dict[str, torch.Tensor], Any, dict[str, Any]]:
    """(tensors for safetensors, python state as JSON, numpy state as JSON + tensor)."""
    tensors = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        tensors["cuda"] = torch.stack(torch.cuda.get_rng_state_all())
    kind, keys, position, has_gauss, cached = np.random.get_state()
    tensors["numpy_keys"] = torch.from_numpy(np.asarray(keys, dtype=np.int64))
    version, internal, gauss_next = random.getstate()
    return tensors, [version, list(internal), gauss_next], {"kind": kind, "position": int(position),
                                                            "has_gauss": int(has_gauss), "cached": float(cached)}


def rng_restore(tensors: Mapping[str, torch.Tensor], python_state: Any, numpy_state: Mapping[str, Any]) -> None:
    torch.set_rng_state(tensors["torch"].to(torch.uint8))
    if "cuda" in tensors and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(list(tensors["cuda"].to(torch.uint8)))
    np.random.set_state((numpy_state["kind"], tensors["numpy_keys"].numpy().astype(np.uint32),
                         numpy_state["position"], numpy_state["has_gauss"], numpy_state["cached"]))
    version, internal, gauss_next = python_state
    random.setstate((version, tuple(internal), gauss_next))


# ------------------------------------------------------------------------------------------ provenance


# ------------------------------------------------------------------------------------------- stopping

class StopRequests:
    """Collects stop requests: SIGTERM / Ctrl-C, the app's event (anything with `is_set()`), `<out>/STOP`."""

    def __init__(self, out_dir: Path, stop_event: Any = None):
        self.stop_file = out_dir / STOP_FILE
        self.stop_event = stop_event
        self.signalled = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "StopRequests":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.signalled = True

    def requested(self) -> bool:
        return (self.signalled or self.stop_file.exists()
                or (self.stop_event is not None and bool(self.stop_event.is_set())))

    def clear_file(self) -> None:
        self.stop_file.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------- train

def train(
    config: Mapping[str, Any],
    dataset: str,
    data_dir: str | Path,
    out_dir: str | Path,
    device: str = "auto",
    seed: int = 1,
    max_steps: int | None = None,
    epochs: float | None = None,
    embeddings: str | None = None,
    resume: bool = False,
    size: str = "paper",
    cache_dir: str | Path | None = None,
    progress: bool = True,
    stop_event: Any = None,
    model_name: str | None = None,
) -> CheckpointInfo:
    """Train and write a checkpoint folder at `out_dir`; return its listing entry.

    config: a loaded config (`load_config`); size: "paper" or "shipped" (deep-merges [shipped]);
    embeddings / epochs / model_name: command-line overrides of the config; max_steps: stop after this
    many optimizer steps (whichever of epochs and max_steps comes first); resume: continue from
    `<out>/state/`; stop_event: anything with `is_set()` (e.g. a multiprocessing Event) that asks the run
    to save its state and stop, raising `TrainingStopped` (so does a file `<out>/STOP`, SIGTERM, Ctrl-C).

    The output folder must be new, empty, or this run's own (nlivis.training.run_folder); the run holds its
    lock from before its first write until it ends, so a second run into the same folder is refused.
    """
    options = dict(config=config, dataset=dataset, data_dir=data_dir, out_dir=Path(out_dir), device=device, seed=seed,
                   max_steps=max_steps, epochs=epochs, embeddings=embeddings, resume=resume, size=size,
                   cache_dir=cache_dir, progress=progress, stop_event=stop_event, model_name=model_name)
    if not distributed.DistributedContext.from_environment().is_main:
        return _train_in_folder(**options)  # rank 0 holds the folder for the whole group
    with open_run_folder(Path(out_dir), resume), CoreShare():
        return _train_in_folder(**options)


def _train_in_folder(
    config: Mapping[str, Any],
    dataset: str,
    data_dir: str | Path,
    out_dir: str | Path,
    device: str = "auto",
    seed: int = 1,
    max_steps: int | None = None,
    epochs: float | None = None,
    embeddings: str | None = None,
    resume: bool = False,
    size: str = "paper",
    cache_dir: str | Path | None = None,
    progress: bool = True,
    stop_event: Any = None,
    model_name: str | None = None,
) -> CheckpointInfo:
    """`train` once the output folder is checked and locked."""
    from nlivis.data.protocols import get_protocol
    from nlivis.features.buckets import bucket_batches
    from nlivis.features.featurize import FeatureSettings, Featurizer
    from nlivis.models import build

    started = time.time()
    context = distributed.DistributedContext.from_environment()
    run_device = distributed.resolve_device(device, context)
    distributed.setup(context, run_device)
    out_dir, data_dir = Path(out_dir), Path(data_dir)
    resolved = resolve_config(config, size, embeddings, epochs, model_name)
    settings = TrainingSettings.from_dict(resolved.get("training", {}))
    options, featurizer_settings = split_feature_table(resolved.get("features", {}))
    protocol = get_protocol(dataset)
    if max_steps is not None and max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}")
    _check_out_dir(out_dir, resume)

    seed_everything(seed)
    model_config = dict(resolved["model"])
    frozen = bool(model_config.get("freeze_word_embeddings", True))
    data = prepare_data(protocol, data_dir, options, frozen, int(model_config.get("word_dim", 300)), seed,
                        cache_dir, progress and context.is_main, settings.snli_fraction_with_mnli)
    model_config.update(vocab_size=len(data.vocab), char_vocab_size=len(data.char_vocab),
                        word_dim=int(data.vectors.shape[1]), num_classes=len(protocol.labels))
    featurizer = Featurizer(data.vocab, data.char_vocab, FeatureSettings(**featurizer_settings), protocol.labels)

    seed_everything(seed)
    model = build(model_config)
    model.load_word_vectors(data.vectors)
    model.word_embedding.weight.requires_grad_(not frozen)
    initial_dropout = float(model_config.get("dropout", getattr(model.config, "dropout", 0.0)))
    model.to(run_device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    state = TrainingState(optimizer_name=settings.optimizer)
    optimizer = make_optimizer(settings.optimizer, trainable, settings)
    best_weights: dict[str, torch.Tensor] | None = None
    best_select_probabilities: torch.Tensor | None = None
    """The select split's predictions at the best step (saves one pass at the end; None after a resume)."""

    metrics_path = out_dir / "metrics.jsonl"
    if resume:
        saved = load_training_state(out_dir)
        state = saved.state
        model.load_state_dict(saved.model_state)
        if state.optimizer_name != settings.optimizer:
            optimizer = sgd_fallback(trainable, settings)
        optimizer.load_state_dict(saved.optimizer_state)
        best_weights = saved.best_model_state
        rng_restore(saved.rng_tensors, state.python_rng, state.numpy_rng)
        if context.enabled:
            torch.manual_seed(int(torch.randint(0, 2 ** 31, (1,)).item()) + context.rank)
    elif context.enabled:
        torch.manual_seed(seed + context.rank)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = MetricsLog(metrics_path, resume_from_step=state.step if resume else None) if context.is_main else None
    train_model = distributed.wrap_model(model, context, run_device)

    train_items = data.train_items + (data.mix_in.items if data.mix_in else [])  # the mix-in pool after them
    lengths = pair_lengths(train_items, featurizer_settings)

    def epoch_batches(epoch: int) -> list[list[int]]:
        """Batches of indices into `train_items`: every training pair, plus this epoch's mix-in sample."""
        if data.mix_in is None:
            chosen = list(range(len(lengths)))
        else:
            pool = torch.randperm(len(data.mix_in.items), generator=torch.Generator().manual_seed(seed * 100_003 + epoch))
            chosen = [*range(len(data.train_items)), *(len(data.train_items) + pool[:data.mix_in.per_epoch]).tolist()]
        batches = bucket_batches([lengths[i] for i in chosen], settings.batch_size, seed=seed * 100_003 + epoch, shuffle=True)
        return distributed.shard_batches([[chosen[j] for j in batch] for batch in batches], context)

    batches_per_epoch = len(epoch_batches(0))
    total_steps = math.ceil(settings.epochs * batches_per_epoch)
    if max_steps is not None:
        total_steps = min(total_steps, max_steps)

    regularization_weights = {term: getattr(settings, key) for term, key in REGULARIZATION_WEIGHTS.items()}
    stops = StopRequests(out_dir, stop_event)
    window = {"loss": 0.0, "correct": 0, "pairs": 0, "start": time.perf_counter()}
    last_evaluated_step = -1
    bar = _progress_bar(total_steps, state.step, progress and context.is_main)

    def current_lr() -> float:
        return float(optimizer.param_groups[0]["lr"])

    def evaluate(reason: str) -> None:
        nonlocal best_weights, best_select_probabilities, last_evaluated_step
        accuracy, probabilities = 0.0, None
        if context.is_main:
            probabilities = predict_probabilities(model, featurizer, data.select_items, settings.eval_batch_size, run_device)
            accuracy = accuracy_of(data.select_items, probabilities, protocol.labels)
        accuracy = distributed.broadcast_value(accuracy, context, run_device)
        last_evaluated_step = state.step
        improved = state.best_dev_accuracy is None or accuracy > state.best_dev_accuracy
        if improved:
            state.best_dev_accuracy, state.best_step = accuracy, state.step
            if context.is_main:
                best_weights = {k: v.detach().to("cpu").clone() for k, v in model.state_dict().items()}
                best_select_probabilities = probabilities
        state.curve.append({"step": state.step, "epoch": state.epoch + state.batch_in_epoch / max(1, batches_per_epoch),
                            "dev_acc": accuracy, "reason": reason})
        if log is not None:
            log.write(step=state.step, epoch=round(state.epoch + state.batch_in_epoch / max(1, batches_per_epoch), 4),
                      dev_acc=accuracy, best_dev_acc=state.best_dev_accuracy, lr=current_lr())
        bar.set_postfix_str(f"dev {accuracy:.3f} (best {state.best_dev_accuracy:.3f})", refresh=False)
        fall_back_to_sgd_if_stalled()

    def fall_back_to_sgd_if_stalled() -> None:
        """DIIN §4.2: switch to SGD once `sgd_fallback_after_steps` optimizer steps have passed without a
        better select-split score (checked at every evaluation, as the paper's 30,000-step rule)."""
        nonlocal optimizer
        if (settings.sgd_fallback_after_steps and state.optimizer_name != "sgd"
                and state.step - (state.best_step or 0) >= settings.sgd_fallback_after_steps):
            optimizer = sgd_fallback(trainable, settings)
            state.optimizer_name = "sgd"

    def save_state() -> None:
        if not context.is_main:
            return
        tensors, python_state, numpy_state = rng_snapshot()
        state.python_rng, state.numpy_rng = python_state, numpy_state
        state.elapsed_s = elapsed_before + time.time() - started
        save_training_state(out_dir, state, model.state_dict(), optimizer.state_dict(), best_weights, tensors)

    elapsed_before = state.elapsed_s
    with stops:
        try:
            while state.step < total_steps:
                batches = epoch_batches(state.epoch)
                if state.optimizer_name == settings.optimizer:
                    for group in optimizer.param_groups:
                        group["lr"] = schedules.learning_rate_for_epoch(settings.lr, settings.lr_decay_per_epoch, state.epoch)
                while state.batch_in_epoch < len(batches) and state.step < total_steps:
                    if distributed.any_rank(stops.requested(), context, run_device):
                        raise _StopRequested
                    indices = batches[state.batch_in_epoch]
                    loss_value, correct = _train_step(
                        train_model, model, optimizer, featurizer.encode([train_items[i] for i in indices]),
                        settings, state.step, initial_dropout, regularization_weights, run_device)
                    state.step += 1
                    state.batch_in_epoch += 1
                    state.pairs_seen += len(indices) * context.world_size
                    window["loss"] += loss_value * len(indices)
                    window["correct"] += correct
                    window["pairs"] += len(indices)
                    bar.update(1)
                    if state.step % settings.log_every_steps == 0 or state.step == total_steps:
                        _log_window(log, bar, window, state, batches_per_epoch, current_lr(), context.world_size)
                    if settings.eval_every_steps and state.step % settings.eval_every_steps == 0:
                        evaluate("every_steps")
                    if settings.checkpoint_every_steps and state.step % settings.checkpoint_every_steps == 0:
                        save_state()
                if state.batch_in_epoch >= len(batches):
                    if last_evaluated_step != state.step:
                        evaluate("epoch_end")
                    state.epoch += 1
                    state.batch_in_epoch = 0
            if last_evaluated_step != state.step:
                evaluate("end")
        except _StopRequested:
            save_state()
            stops.clear_file()
            bar.close()
            distributed.barrier(context)
            distributed.teardown(context)
            raise TrainingStopped(out_dir, state.step) from None
    bar.close()

    info = None
    if context.is_main:
        assert best_weights is not None
        model.load_state_dict(best_weights)
        try:
            info = _write_final_checkpoint(
                out_dir, model, featurizer, data, resolved, model_config, featurizer_settings, options, settings,
                protocol, dataset, size, seed, run_device, elapsed_before + time.time() - started, state, frozen,
                epochs_done=state.epoch + state.batch_in_epoch / max(1, batches_per_epoch),
                select_probabilities=best_select_probabilities)
        except CheckpointError as error:  # e.g. a full disk: keep the finished training resumable
            save_state()
            raise CheckpointError(out_dir, f"{error.problem}; the finished training is saved in {STATE_FOLDER}/: "
                                           "once there is room, --resume writes the checkpoint without training again") from error
    distributed.barrier(context)
    distributed.teardown(context)
    return info if info is not None else read_checkpoint_info(out_dir)


def _check_out_dir(out_dir: Path, resume: bool) -> None:
    if resume and not (out_dir / STATE_FOLDER / "state.json").is_file():
        raise ValueError(f"{out_dir} has no training state to resume ({out_dir / STATE_FOLDER} is missing)")
    if not resume and (out_dir / STATE_FOLDER).exists():
        raise ValueError(f"{out_dir} holds the state of an unfinished run; continue it with --resume or remove the folder")


def _progress_bar(total: int, initial: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, disable=not enabled, unit="step", dynamic_ncols=True)


def _train_step(train_model: nn.Module, model: nn.Module, optimizer: torch.optim.Optimizer, batch,
                settings: TrainingSettings, step: int, initial_dropout: float,
                regularization_weights: Mapping[str, float], device: torch.device) -> tuple[float, int]:
    """One optimizer step; returns (classification loss, correct predictions)."""
    if settings.dropout_keep_decay_rate != 1.0:
        keep = schedules.dropout_keep_rate(step, 1.0 - initial_dropout, settings.dropout_keep_decay_rate,
                                           settings.dropout_keep_decay_steps)
        schedules.set_dropout_rate(model, 1.0 - keep)
    model.train()
    batch = batch.to(device)
    with autocast_for(device):
        logits = train_model(batch)
        loss = model.loss(logits.float(), batch.labels)
    total = loss
    for term, value in model.regularization_terms().items():
        if term not in regularization_weights:
            raise ValueError(f"model {model.name!r} returns a regularization term {term!r} that training does not "
                             f"know how to weight (known: {sorted(regularization_weights)})")
        if regularization_weights[term]:
            total = total + regularization_weights[term] * value
    if settings.l2_schedule == "sigmoid_ramp" and settings.l2_full_weight:
        weight = schedules.sigmoid_ramp_weight(step, settings.l2_full_weight, settings.l2_ramp_midpoint_step,
                                               settings.l2_ramp_steps)
        total = total + weight * schedules.l2_penalty(model)
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    if settings.max_grad_norm:
        nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], settings.max_grad_norm)
    optimizer.step()
    correct = int((logits.detach().argmax(dim=-1) == batch.labels).sum().item())
    return float(loss.detach().item()), correct


def _log_window(log: MetricsLog | None, bar, window: dict, state: TrainingState, batches_per_epoch: int,
                lr: float, world_size: int) -> None:
    pairs = window["pairs"]
    if pairs == 0:
        return
    seconds = max(time.perf_counter() - window["start"], 1e-9)
    loss, accuracy, speed = window["loss"] / pairs, window["correct"] / pairs, pairs * world_size / seconds
    bar.set_description_str(f"loss {loss:.3f} acc {accuracy:.3f} {speed:.0f} pairs/s", refresh=False)
    if log is not None:
        log.write(step=state.step, epoch=round(state.epoch + state.batch_in_epoch / max(1, batches_per_epoch), 4),
                  loss=loss, train_acc=accuracy, pairs_per_s=speed, lr=lr)
    window.update(loss=0.0, correct=0, pairs=0, start=time.perf_counter())


def _write_final_checkpoint(out_dir, model, featurizer, data: PreparedData, resolved, model_config,
                            featurizer_settings, options, settings, protocol, dataset, size, seed, device,
                            wall_time, state: TrainingState, frozen: bool, epochs_done: float,
                            select_probabilities: torch.Tensor | None) -> CheckpointInfo:
    """Predict the select and report splits with the best weights, decide fp16 vs fp32, write the folder."""
    from nlivis.data.protocols import split_key

    labels = protocol.labels
    if select_probabilities is None:
        select_probabilities = predict_probabilities(model, featurizer, data.select_items, settings.eval_batch_size, device)
    weights_dtype, fp16_check, rounded = _choose_weights_dtype(model, featurizer, data.select_items,
                                                               select_probabilities, settings, device, labels,
                                                               shared_embeddings=frozen)
    if rounded is not None:  # the stored weights are the fp16 ones: every recorded prediction comes from them
        model.load_state_dict(rounded[0].state_dict())
        select_probabilities = rounded[1]
    probabilities = {data.select_key: select_probabilities}
    items_by_key = {data.select_key: data.select_items, **data.report_items}
    for key, items in data.report_items.items():
        if key not in probabilities:
            probabilities[key] = predict_probabilities(model, featurizer, items, settings.eval_batch_size, device)
    record = {
        "name": out_dir.name,
        "config_name": resolved.get("config_name", ""),
        "size": size,
        "model": model_config,
        "parameters": model.count_parameters(),
        "labels": list(labels),
        "dataset": {"name": dataset, "protocol": protocol.name,
                    "description": protocol.description + (f"; with {data.mix_in.fraction:.0%} of {data.mix_in.split} drawn anew "
                                                           f"each epoch" if data.mix_in else ""),
                    "note": protocol.note, "small": protocol.small,
                    "train": [split_key(r) for r in protocol.train], "select": data.select_key,
                    "report": [split_key(r) for r in protocol.report], "train_pairs": len(data.train_items),
                    **({"mix_in": {"split": data.mix_in.split, "fraction": data.mix_in.fraction,
                                   "pairs_per_epoch": data.mix_in.per_epoch, "of": len(data.mix_in.items)}}
                       if data.mix_in else {})},
        "features": {"options": options.to_dict(), "featurizer": featurizer_settings},
        "vocabulary": data.vocabulary_record,
        "chars": {"size": len(data.char_vocab), "file": "chars.json"},
        "embeddings": {"source": options.embeddings, "frozen": frozen, "dim": int(data.vectors.shape[1]),
                       "stats": data.embedding_stats},
        "training": settings.to_dict(),
        "source_config": {k: v for k, v in resolved.items() if k != "size"},
        "fp16_check": fp16_check,
        "versions": library_versions(),
        "git_commit": git_commit(),
        "seed": seed,
        "device": str(device),
        "wall_time_s": round(wall_time, 1),
        "pairs_seen": state.pairs_seen,
        "steps": state.step,
        "epochs": round(epochs_done, 4),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    metrics = {
        "best_dev_accuracy": accuracy_of(data.select_items, probabilities[data.select_key], labels),
        "best_dev_accuracy_in_training": state.best_dev_accuracy,
        "best_step": state.best_step,
        "select_split": data.select_key,
        "curve": state.curve,
        "report": {key: {"accuracy": accuracy_of(items_by_key[key], probabilities[key], labels),
                         "count": len(items_by_key[key])} for key in probabilities},
        "log": "metrics.jsonl",
    }
    predictions = {key: prediction_rows(items_by_key[key], probabilities[key], labels) for key in probabilities}
    write_checkpoint(out_dir, model=model, vocab=data.vocab, char_vocab=data.char_vocab, record=record,
                     metrics=metrics, predictions=predictions, weights_dtype=weights_dtype, share_embeddings=frozen,
                     extra_files=(out_dir / "metrics.jsonl", *(out_dir / name for name in foreign_entries(out_dir))))
    return read_checkpoint_info(out_dir)


def rounded_to_fp16(model: nn.Module, keep: tuple[str, ...] = ()) -> nn.Module:
    """A copy of `model` whose floating weights are rounded to fp16 (kept in their dtype): what loading
    an fp16-stored checkpoint gives. `keep` names state-dict keys stored elsewhere at their own precision
    (the shared frozen word vectors), which stay as they are."""
    rounded = copy.deepcopy(model)
    with torch.no_grad():
        for name, tensor in rounded.state_dict().items():
            if tensor.is_floating_point() and name not in keep:
                tensor.copy_(tensor.to(torch.float16).to(tensor.dtype))
    return rounded


def fp16_verdict(items: Sequence, fp32: torch.Tensor, fp16: torch.Tensor, labels: Sequence[str]) -> dict[str, Any]:
    """Whether fp16 weights cost nothing on the select split: accuracy moves by at most
    `FP16_MAX_ACCURACY_CHANGE` and at most `FP16_MAX_LABELS_CHANGED` of the labels flip. Returns the
    check as recorded in config.json (`use_fp16` says the verdict)."""
    changed = int((fp16.argmax(-1) != fp32.argmax(-1)).sum().item())
    accuracy32, accuracy16 = accuracy_of(items, fp32, labels), accuracy_of(items, fp16, labels)
    use_fp16 = (abs(accuracy16 - accuracy32) <= FP16_MAX_ACCURACY_CHANGE
                and changed <= FP16_MAX_LABELS_CHANGED * max(1, len(items)))
    return {"use_fp16": use_fp16, "pairs_checked": len(items), "predictions_changed_by_fp16": changed,
            "fp32_accuracy": round(accuracy32, 6), "fp16_accuracy": round(accuracy16, 6),
            "max_probability_change": round(float((fp16 - fp32).abs().max().item()) if len(items) else 0.0, 6),
            "rule": f"fp16 when select accuracy moves by <= {FP16_MAX_ACCURACY_CHANGE} and <= "
                    f"{FP16_MAX_LABELS_CHANGED:.1%} of labels flip; recorded predictions come from the stored weights"}


def _choose_weights_dtype(model: nn.Module, featurizer, items: Sequence, reference: torch.Tensor,
                          settings: TrainingSettings, device: torch.device, labels: Sequence[str],
                          shared_embeddings: bool,
                          ) -> tuple[torch.dtype, dict[str, Any], tuple[nn.Module, torch.Tensor] | None]:
    """fp16 when rounding the weights to fp16 costs nothing on the select split (`fp16_verdict`), else
    fp32; also returns the rounded model and its select-split probabilities when fp16 wins, so every
    recorded prediction comes from the weights as stored. Shared frozen word vectors are not part of
    model.safetensors and are not rounded."""
    rounded = rounded_to_fp16(model, keep=(word_embedding_key(model),) if shared_embeddings else ())
    probabilities = predict_probabilities(rounded, featurizer, items, settings.eval_batch_size, device)
    check = fp16_verdict(items, reference, probabilities, labels)
    dtype = torch.float16 if check.pop("use_fp16") else torch.float32
    check = {"stored_as": str(dtype).removeprefix("torch."), **check}
    return dtype, check, ((rounded, probabilities) if dtype == torch.float16 else None)

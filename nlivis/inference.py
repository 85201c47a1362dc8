"""Inference: rebuild a model from a checkpoint folder, predict pairs, trace one pair, check the outputs.

Everything that runs a trained model goes through here — the CLI's predict/evaluate, the app's pair
analysis, attribution, probes, training's own evaluation of the select split — so a corrupt checkpoint
or a non-finite output is caught in one place.
"""
from __future__ import annotations

import gzip
import json
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

import torch
from torch import nn

from nlivis.data.protocols import get_protocol
from nlivis.data.records import InputError
from nlivis.data.text import shown_token, text_problem
from nlivis.features.batch import Batch
from nlivis.features.buckets import bucket_batches
from nlivis.features.chars import UNK_ID
from nlivis.features.featurize import Featurizer
from nlivis.features.settings import DescribedCheckpoint, described_checkpoint
from nlivis.features.vocab import CharVocabulary, Vocabulary, VocabularyFileError
from nlivis.models import build
from nlivis.models.registry import ShapesOnly
from nlivis.models.trace import Trace
from nlivis.store.checkpoints import (
    EMBEDDING_TENSOR,
    CheckpointError,
    CheckpointInfo,
    check_files,
    check_inside_root,
    read_json,
)
from nlivis.store.embedding_rows import rows_from_base
from nlivis.store.files import sha256_file
from nlivis.store.predictions import find_prediction_files
from nlivis.store.weights import load_tensors


@dataclass
class LoadedCheckpoint:
    """A model ready for inference (eval mode) with the featurizer that matches its training, and what its
    config.json says of it (`described`: the same facts a page reads without loading it)."""

    model: nn.Module
    featurizer: Any
    config: dict[str, Any]
    metrics: dict[str, Any]
    path: Path
    described: DescribedCheckpoint

    @property
    def labels(self) -> tuple[str, ...]:
        return self.described.labels

    @property
    def info(self) -> CheckpointInfo:
        return self.described.info


def _check_state_matches(folder: Path, expected: Mapping[str, torch.Tensor], stored: Mapping[str, torch.Tensor]) -> None:
    missing = sorted(set(expected) - set(stored))
    unexpected = sorted(set(stored) - set(expected))
    problems = []
    if missing:
        problems.append(f"missing keys {missing[:5]}{' …' if len(missing) > 5 else ''}")
    if unexpected:
        problems.append(f"unexpected keys {unexpected[:5]}{' …' if len(unexpected) > 5 else ''}")
    shapes = [f"{k}: stored {tuple(stored[k].shape)}, config gives {tuple(expected[k].shape)}"
              for k in sorted(set(expected) & set(stored)) if tuple(stored[k].shape) != tuple(expected[k].shape)]
    if shapes:
        problems.append("shape mismatch " + "; ".join(shapes[:3]) + (" …" if len(shapes) > 3 else ""))
    if problems:
        raise CheckpointError(folder, "config.json does not match model.safetensors: " + "; ".join(problems))


LABEL_CHECK_ROWS = 500
"""Recorded prediction rows per split read by `_check_labels` (enough to see every label of a split)."""


LABEL_CHECK_MARGIN = 1e-3
"""Rows whose two highest stored probabilities are closer than this are not used to check the label order."""


def _recorded_rows(path: Path, limit: int) -> list[dict[str, Any]]:
    rows = []
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    rows.append(json.loads(line))
                if len(rows) >= limit:
                    break
    except (OSError, EOFError, ValueError):
        return []  # an unreadable predictions file is reported where it is read, not here
    return [row for row in rows if isinstance(row, dict)]


def _check_labels(folder: Path, config: Mapping[str, Any], labels: list[str]) -> None:
    """The checkpoint's label order (config.json's, a list of distinct names: `described_checkpoint`), checked
    against what it recorded: the model's output size (`model.num_classes`, which the weights are checked
    against), the protocol it was trained on, and its recorded predictions (each clear prediction must be the
    label of its highest probability), so a hand-edited, shortened or reordered `labels` list in config.json is
    refused instead of crashing `predict` or silently swapping labels."""
    restore = "; config.json was edited by hand? restore its labels list"
    classes = config.get("model", {}).get("num_classes")
    if classes is not None and classes != len(labels):
        raise CheckpointError(folder, f"config.json lists {len(labels)} labels {labels} but the model has "
                                      f"{classes} output classes{restore}")
    try:
        protocol_labels = list(get_protocol(str(config.get("dataset", {}).get("protocol"))).labels)
    except ValueError:
        protocol_labels = None
    if protocol_labels is not None and labels != protocol_labels:
        raise CheckpointError(folder, f"config.json lists the labels {labels}, but the protocol it was trained on "
                                      f"({config['dataset']['protocol']}) has {protocol_labels} in this order{restore}")
    for split, path in find_prediction_files(folder).items():
        for row in _recorded_rows(path, LABEL_CHECK_ROWS):
            probs, predicted = row.get("probs"), row.get("predicted")
            if not isinstance(probs, list) or len(probs) != len(labels) or predicted not in labels \
                    or (row.get("gold") is not None and row.get("gold") not in labels):
                raise CheckpointError(folder, f"{path.name} (pair {row.get('id')!r}) does not fit the labels "
                                              f"{labels} of config.json{restore}")
            ranked = sorted(range(len(probs)), key=probs.__getitem__, reverse=True)
            if probs[ranked[0]] - probs[ranked[1]] > LABEL_CHECK_MARGIN and labels[ranked[0]] != predicted:
                raise CheckpointError(folder, f"{path.name} (pair {row.get('id')!r}) recorded {predicted!r} for its "
                                              f"highest probability, which config.json's labels {labels} call "
                                              f"{labels[ranked[0]]!r}: the labels were reordered{restore}")


def _check_finite_weights(folder: Path, tensors: Mapping[str, torch.Tensor], what: str) -> None:
    """A `CheckpointError` naming the tensors of `what` that hold NaN or infinity. Each tensor is summed in float32
    first (one pass, no mask: a NaN or an infinity makes the sum non-finite); only a tensor whose sum is not finite
    is looked at element by element, so a sum that overflowed from finite values is not called corrupt."""
    bad = [key for key, tensor in tensors.items() if tensor.is_floating_point()
           and not bool(torch.isfinite(tensor.sum(dtype=torch.float32))) and not bool(torch.isfinite(tensor).all())]
    if bad:
        raise CheckpointError(folder, f"{what} holds NaN or infinite values in {bad[:3]}{' …' if len(bad) > 3 else ''}; "
                                      "the weights are corrupt (retrain or restore the folder)")


T = TypeVar("T")


def _read_fetched(folder: Path, model, what: str, read: Callable[[], T]) -> T:
    """`read()`: tensors a checkpoint left out because a fetched file holds them (MiniLM's word pieces, its frozen
    lower layers); a model that cannot read that file here is a `CheckpointError` naming `what` was left out."""
    try:
        return read()
    except (AttributeError, InputError) as error:
        raise CheckpointError(folder, f"config.json says {what} come from a fetched file, which {model.name} "
                                      f"cannot read here: {error}") from error


def _shared_file(folder: Path, root: Path, entry: Mapping[str, Any], where: str) -> tuple[Path, dict[str, torch.Tensor]]:
    """The tensors of a shared embedding file config.json names in `entry` (`file`, `sha256`), read only when it
    lies under the checkpoint root and matches its sha256; `where` is the config key, for the messages."""
    shared_path = (folder / str(entry.get("file", ""))).resolve()
    if not shared_path.is_relative_to(root):
        raise CheckpointError(folder, f"config.json {where} {entry.get('file')!r} points outside the "
                                      f"checkpoint root {root} (to {shared_path}); refusing to read it")
    if not shared_path.is_file():
        raise CheckpointError(folder, f"shared embedding file {entry.get('file')} is missing (looked at {shared_path})")
    if sha256_file(shared_path) != entry.get("sha256"):
        raise CheckpointError(folder, f"shared embedding file {shared_path} does not match the sha256 in config.json")
    rows = load_tensors(folder, shared_path, f"shared embedding file {shared_path}")
    _check_finite_weights(folder, rows, f"shared embedding file {shared_path}")
    return shared_path, rows


def _shared_word_rows(folder: Path, root: Path, embeddings: Mapping[str, Any]) -> torch.Tensor:
    """The frozen word rows of a checkpoint that shares them: the file's own table, or, when config.json names a
    `base`, the base's rows extended by the file's (`store.embedding_rows`)."""
    shared_path, tensors = _shared_file(folder, root, embeddings, "embeddings.file")
    base = embeddings.get("base")
    if base is None:
        if EMBEDDING_TENSOR not in tensors:
            raise CheckpointError(folder, f"shared embedding file {shared_path} has no {EMBEDDING_TENSOR!r} tensor")
        return tensors[EMBEDDING_TENSOR]
    if not isinstance(base, Mapping):
        raise CheckpointError(folder, f"config.json embeddings.base must be a table with file and sha256, not {base!r}")
    base_path, base_tensors = _shared_file(folder, root, base, "embeddings.base.file")
    if EMBEDDING_TENSOR not in base_tensors:
        raise CheckpointError(folder, f"shared embedding file {base_path} has no {EMBEDDING_TENSOR!r} tensor")
    try:
        return rows_from_base(base_tensors[EMBEDDING_TENSOR], tensors)
    except ValueError as error:
        raise CheckpointError(folder, f"shared embedding file {shared_path} (extending {base_path}) {error}") from error


def load_checkpoint(folder: str | Path, device: str | torch.device = "cpu") -> LoadedCheckpoint:
    """Rebuild model and featurizer from a checkpoint folder; every problem is a `CheckpointError`."""
    folder = Path(folder)
    root = check_inside_root(folder)  # before any file is read or hashed
    check_files(folder, verify_hashes=True)
    config = read_json(folder, "config.json")
    metrics = read_json(folder, "metrics.json")
    described = described_checkpoint(folder, config, metrics)
    _check_labels(folder, config, list(described.labels))
    try:
        vocab = Vocabulary.load(folder / "vocab.json")
        char_vocab = CharVocabulary.load(folder / "chars.json")
    except VocabularyFileError as error:
        raise CheckpointError(folder, str(error)) from error
    try:
        featurizer = Featurizer(vocab, char_vocab, described.settings, described.labels)
        # shapes only: every weight comes from the files below, so no initialiser runs (ShapesOnly: on the meta
        # device torch runs normal_ through reference code that imports torch._dynamo, ~2.5 CPU s a process)
        with torch.device("meta"), ShapesOnly():
            model = build(config["model"])
    except (KeyError, TypeError, ValueError, RuntimeError, MemoryError, OverflowError) as error:
        raise CheckpointError(folder, f"config.json cannot rebuild the model or featurizer ({type(error).__name__}: {error})") from error
    if len(vocab) != config["model"].get("vocab_size", len(vocab)):
        raise CheckpointError(folder, f"vocab.json has {len(vocab)} words, config.json says vocab_size {config['model']['vocab_size']}")

    expected = model.state_dict()
    stored = load_tensors(folder, folder / "model.safetensors", "model.safetensors")
    _check_finite_weights(folder, stored, "model.safetensors")
    embeddings = config.get("embeddings", {})
    if embeddings.get("shared"):
        stored = {**stored, str(embeddings.get("state_key", "")): _shared_word_rows(folder, root, embeddings)}
    elif embeddings.get("external"):
        stored = {**stored, str(embeddings.get("state_key", "")): _read_fetched(folder, model, "the word rows",
                                                                                  lambda: model.external_word_rows())}
    fetched_keys = config.get("weights", {}).get("fetched_keys", [])  # fetched files are sha256-pinned upstream weights
    if fetched_keys:
        stored = {**stored, **_read_fetched(folder, model, f"{len(fetched_keys)} tensors (the frozen layers)",
                                            lambda: model.fetched_state([str(key) for key in fetched_keys]))}
    _check_state_matches(folder, expected, stored)
    model.load_state_dict({k: v.to(expected[k].dtype) for k, v in stored.items()}, strict=True, assign=True)
    model.to(device).eval()
    return LoadedCheckpoint(model, featurizer, config, metrics, folder, described)


def pair_lengths(items: Sequence, featurizer_settings: Mapping[str, Any]) -> list[tuple[int, int]]:
    """(premise, hypothesis) lengths after the cut-offs: what the batches are bucketed by."""
    p_max, h_max = featurizer_settings["max_premise_len"], featurizer_settings["max_hypothesis_len"]
    return [(min(len(i.premise), p_max), min(len(i.hypothesis), h_max)) for i in items]


def autocast_for(device: torch.device):
    """bf16 autocast on CUDA (no loss scaling needed); full precision on CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return nullcontext()


@torch.no_grad()
def predict_probabilities(model: nn.Module, featurizer, items: Sequence, batch_size: int,
                          device: torch.device) -> torch.Tensor:
    """Class probabilities [N, K] for `items`, in their order (batched by length for speed, in batches of
    at most `batch_size` and of the model's measured `max_inference_batch`)."""

    batch_size = min(batch_size, getattr(model, "max_inference_batch", 0) or batch_size)
    was_training = model.training
    model.eval()
    probabilities = torch.zeros(len(items), len(featurizer.labels))
    lengths = pair_lengths(items, featurizer.settings.to_dict())
    for indices in bucket_batches(lengths, batch_size, seed=0, shuffle=False):
        batch = featurizer.encode([items[i] for i in indices]).to(device)
        with autocast_for(device):
            logits = model(batch)
        probabilities[indices] = model.probabilities(logits.float()).cpu()
    model.train(was_training)
    return probabilities


def prediction_rows(items: Sequence, probabilities: torch.Tensor, labels: Sequence[str]) -> list[dict[str, Any]]:
    predicted = probabilities.argmax(dim=-1).tolist()
    return [{"id": item.pair.id, "gold": item.pair.label, "predicted": labels[p], "probs": probs}
            for item, p, probs in zip(items, predicted, probabilities.tolist())]


def accuracy_of(items: Sequence, probabilities: torch.Tensor, labels: Sequence[str]) -> float:
    """Accuracy over the labelled items."""
    predicted = probabilities.argmax(dim=-1).tolist()
    scored = [(item.pair.label, labels[p]) for item, p in zip(items, predicted) if item.pair.label is not None]
    return sum(g == p for g, p in scored) / len(scored) if scored else 0.0


def check_finite(probabilities: torch.Tensor, checkpoint: str | Path) -> torch.Tensor:
    """`probabilities` unchanged, or a ValueError naming the checkpoint when any is NaN or infinite (a
    model with corrupt weights must not report a label)."""
    bad = ~torch.isfinite(probabilities).all(dim=-1)
    if bool(bad.any()):
        raise ValueError(f"checkpoint {checkpoint}: the model gave non-finite outputs (NaN or infinity) for "
                         f"{int(bad.sum())} of {bad.numel()} pair(s); its weights are probably corrupt "
                         "(retrain it or restore the folder)")
    return probabilities


@dataclass
class PairPrediction:
    """One typed pair's answer and what the user should know about how it was read."""

    label: str
    probabilities: dict[str, float]
    truncation: str
    """"" when nothing was cut, else e.g. "premise cut from 60 to 32 tokens"."""
    unknown_words: list[str]
    """Tokens with no vocabulary row (mapped to UNK)."""
    premise_tokens: list[str]
    hypothesis_tokens: list[str]
    batch: Batch | None = None
    trace: Trace | None = None
    """The model's typed trace entries (with `trace=True`)."""
    notices: list[str] = field(default_factory=list)


@torch.no_grad()
def predict_pair(loaded: LoadedCheckpoint, premise: str, hypothesis: str, trace: bool = False) -> PairPrediction:
    """Label one premise/hypothesis pair. Text that is empty, has no real word (only invisible or control
    characters) or held bytes that were not UTF-8 raises ValueError, as do non-finite outputs; text over the
    cut-offs is cut (as in training) and said so in `truncation` / `notices` (tokens there are escaped and
    cut, see `data.text.shown_token`); unknown words map to UNK."""
    for name, text in (("premise", premise), ("hypothesis", hypothesis)):
        problem = text_problem(text, name)
        if problem:
            raise ValueError(problem)
    encoded = loaded.featurizer.encode_text_reported(premise, hypothesis)
    batch = encoded.batch.to(next(loaded.model.parameters()).device)
    loaded.model.eval()
    recorded = None
    if trace:
        logits, recorded = loaded.model(batch, trace=True)
    else:
        logits = loaded.model(batch)
    probabilities = check_finite(loaded.model.probabilities(logits.float()), loaded.path)[0].cpu().tolist()
    unknown = [token for side_tokens, ids in ((batch.premise_tokens[0], batch.premise_ids[0]),
                                              (batch.hypothesis_tokens[0], batch.hypothesis_ids[0]))
               for token, token_id in zip(side_tokens, ids.tolist()) if token_id == UNK_ID]
    truncation = encoded.truncation.describe()
    notices = []
    if truncation:
        notices.append(f"{truncation} (this model reads at most {loaded.featurizer.settings.max_premise_len} premise "
                       f"and {loaded.featurizer.settings.max_hypothesis_len} hypothesis tokens)")
    if unknown:
        notices.append(f"{len(unknown)} word(s) not in the vocabulary, read as unknown: "
                       f"{', '.join(shown_token(token) for token in unknown[:10])}"
                       + (" …" if len(unknown) > 10 else ""))
    best = max(range(len(probabilities)), key=probabilities.__getitem__)
    return PairPrediction(loaded.labels[best], dict(zip(loaded.labels, probabilities)), truncation, unknown,
                          batch.premise_tokens[0], batch.hypothesis_tokens[0], batch, recorded, notices)

"""Checkpoint folders: written atomically, read without unpickling, checked part by part.

A checkpoint folder holds
    config.json        everything needed to rebuild the model and featurizer, plus provenance
    model.safetensors  the weights (fp16 where that leaves every dev prediction unchanged, else fp32)
    vocab.json         word vocabulary;  chars.json  character vocabulary
    metrics.json       best dev accuracy and the curve;  metrics.jsonl  the live training log
    predictions_<split_key>.jsonl.gz  {"id", "gold", "predicted", "probs"} per pair, never sentences
                       (format: nlivis.analysis.predictions)
    COMPLETE           the manifest (file sizes and sha256), written last: no COMPLETE, no checkpoint
Frozen word embeddings are not copied into every folder: the rows live once per (vocabulary, source)
in `<checkpoint root>/embeddings/<hash>.safetensors`, referenced from config.json by relative path and
sha256. A folder is built under a temporary name next to its final place and renamed into place, so a
crash mid-save leaves either the old folder or a hidden `.partial` one, never a half checkpoint; a kill
between the final renames leaves a complete `.ready` one that `recover_folder` moves into place.

While training, `<out>/state/` holds the resumable state (model, optimizer, best weights, RNG states)
in safetensors plus `state.json`; it is replaced atomically too.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from nlivis.analysis.predictions import predictions_path, write_predictions
from nlivis.training.checkpoint_files import (CORE_FILES, EMBEDDING_TENSOR, EMBEDDINGS_FOLDER, FORMAT,  # noqa: F401
                                              FORMAT_VERSION, HASHED_FILES, JSON_FILES, MANIFEST, STATE_FOLDER,
                                              CheckpointError, CheckpointInfo, _check_files, _check_inside_root, _info,
                                              _read_json, atomic_write_bytes, atomic_write_json, atomic_write_text,
                                              find_checkpoints, read_checkpoint_info, sha256_file)
"""Re-exported: the torch-free half of this module (listing and checking folders) lives in checkpoint_files."""



@dataclass
class LoadedCheckpoint:
    """A model ready for inference (eval mode) with the featurizer that matches its training."""

    model: nn.Module
    featurizer: Any
    config: dict[str, Any]
    metrics: dict[str, Any]
    labels: tuple[str, ...]
    path: Path
    info: CheckpointInfo


# ----------------------------------------------------------------------------------------------- files

def save_tensors(tensors: Mapping[str, torch.Tensor], path: Path, metadata: dict[str, str] | None = None) -> None:
    """safetensors file written atomically; tensors are copied so shared storage never blocks saving."""
    path = Path(path)
    owned = {name: t.detach().to("cpu").clone().contiguous() for name, t in tensors.items()}
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    save_file(owned, str(temporary), metadata=metadata)
    os.chmod(temporary, 0o644)
    with temporary.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def replace_folder(built: Path, final: Path) -> None:
    """Move a fully written folder into place, replacing `final` if it exists.

    The built folder is first renamed to `.NAME.ready-PID`, which says it is complete; then the old folder
    is moved aside and the ready one into place. A kill between these renames leaves a ready folder that
    `recover_folder` (run when training starts or resumes) moves into place, so a save is never half done.
    """
    ready = final.with_name(f".{final.name}.ready-{os.getpid()}")
    os.replace(built, ready)
    previous = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, previous)
    os.replace(ready, final)
    if previous.exists():
        shutil.rmtree(previous)


def recover_folder(final: Path) -> bool:
    """Finish a `replace_folder` that a kill interrupted: move the newest `.NAME.ready-*` into place (the old
    folder aside), and delete old folders that were moved aside. Returns whether a ready folder was moved in."""
    final = Path(final)
    if not final.parent.is_dir():
        return False
    readies = sorted(final.parent.glob(f".{final.name}.ready-*"), key=lambda p: p.stat().st_mtime)
    moved = False
    if readies:
        try:
            if final.exists():
                os.replace(final, final.with_name(f".{final.name}.old-{os.getpid()}"))
            os.replace(readies[-1], final)
            moved = True
        except FileNotFoundError:  # another process finished it first
            pass
        for extra in readies[:-1]:
            shutil.rmtree(extra, ignore_errors=True)
    if final.exists():
        for old in final.parent.glob(f".{final.name}.old-*"):
            shutil.rmtree(old, ignore_errors=True)
    return moved


def write_failure(error: BaseException, target: Path) -> str:
    """A plain sentence for a failed write (no space left, read-only disk, …), naming `target` and, when the
    disk is full, how much space is free on it."""
    text = str(error)
    full = getattr(error, "errno", None) == errno.ENOSPC or "No space left on device" in text
    if full:
        try:
            free = shutil.disk_usage(next(p for p in [target, *target.parents] if p.exists())).free
            space = f" ({free / 1e6:.0f} MB free)"
        except (OSError, StopIteration):
            space = ""
        return f"no space left on the disk holding {target}{space}"
    reason = getattr(error, "strerror", None) or (text.splitlines()[0] if text else type(error).__name__)
    return f"could not write {target}: {reason}"


def _fresh_folder(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


# ------------------------------------------------------------------------------------------ embeddings

def word_embedding_key(model: nn.Module) -> str:
    """The state-dict key of the model's word-embedding rows."""
    target = model.word_embedding.weight  # type: ignore[attr-defined]
    for name, parameter in model.named_parameters():
        if parameter is target:
            return name
    raise ValueError("the model's word embedding is not one of its parameters")


def shared_embedding_file(root: Path, vocab_json: bytes, source: str, vectors: torch.Tensor) -> tuple[Path, str]:
    """Write (once) the frozen rows for this vocabulary and source under `root/embeddings/`; return the
    file and its sha256. The name hashes vocabulary + source, plus the rows themselves so two different
    row sets can never share a name."""
    vectors = vectors.detach().to("cpu", torch.float32).contiguous()
    key = hashlib.sha256(vocab_json + b"\0" + source.encode("utf-8")).hexdigest()[:16]
    rows = hashlib.sha256(vectors.numpy().tobytes()).hexdigest()[:8]
    folder = Path(root) / EMBEDDINGS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}-{rows}.safetensors"
    if not path.is_file():
        save_tensors({EMBEDDING_TENSOR: vectors}, path, metadata={"source": source, "rows": str(vectors.shape[0])})
    return path, sha256_file(path)


# ------------------------------------------------------------------------------------------------ save

def _floating_as(tensors: Mapping[str, torch.Tensor], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    return {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in tensors.items()}


def write_checkpoint(
    out_dir: Path,
    *,
    model: nn.Module,
    vocab: Any,
    char_vocab: Any,
    record: dict[str, Any],
    metrics: dict[str, Any],
    predictions: Mapping[str, list[dict[str, Any]]],
    weights_dtype: torch.dtype,
    share_embeddings: bool,
    extra_files: tuple[Path, ...] = (),
) -> Path:
    """Write a complete checkpoint folder atomically (see the module docstring) and return it.

    `record` is config.json without its `weights` and `embeddings.file` parts, which are added here;
    `extra_files` (e.g. the live metrics log, or files a user put into the run folder while it trained) are
    copied in as they are. A failed write (e.g. a full disk) removes the partial folder and raises a
    `CheckpointError` saying what happened; the run folder is left as it was.
    """
    out_dir = Path(out_dir)
    root = out_dir.parent
    root.mkdir(parents=True, exist_ok=True)
    building = root / f".{out_dir.name}.partial-{os.getpid()}"
    try:
        _build_checkpoint(_fresh_folder(building), out_dir, model=model, vocab=vocab, char_vocab=char_vocab,
                          record=record, metrics=metrics, predictions=predictions, weights_dtype=weights_dtype,
                          share_embeddings=share_embeddings, extra_files=extra_files)
    except (OSError, SafetensorError) as error:
        shutil.rmtree(building, ignore_errors=True)
        raise CheckpointError(out_dir, f"{write_failure(error, building)}; the partial checkpoint was removed") from error
    replace_folder(building, out_dir)
    return out_dir


def _build_checkpoint(building: Path, out_dir: Path, *, model: nn.Module, vocab: Any, char_vocab: Any,
                      record: dict[str, Any], metrics: dict[str, Any], predictions: Mapping[str, list[dict[str, Any]]],
                      weights_dtype: torch.dtype, share_embeddings: bool, extra_files: tuple[Path, ...]) -> None:
    root = out_dir.parent
    vocab.save(building / "vocab.json")
    char_vocab.save(building / "chars.json")
    state = {k: v for k, v in model.state_dict().items()}
    record = json.loads(json.dumps(record))
    embedding_key = word_embedding_key(model)
    embeddings = record.setdefault("embeddings", {})
    if share_embeddings:
        vocab_json = (building / "vocab.json").read_bytes()
        path, digest = shared_embedding_file(root, vocab_json, str(embeddings.get("source", "")), state.pop(embedding_key))
        embeddings.update({"shared": True, "file": os.path.relpath(path, out_dir), "sha256": digest,
                           "tensor": EMBEDDING_TENSOR, "state_key": embedding_key})
    else:
        embeddings.update({"shared": False, "state_key": embedding_key})
    save_tensors(_floating_as(state, weights_dtype), building / "model.safetensors",
                 metadata={"format": FORMAT, "dtype": str(weights_dtype).removeprefix("torch.")})
    record["weights"] = {"file": "model.safetensors", "dtype": str(weights_dtype).removeprefix("torch."),
                         "excluded_keys": [embedding_key] if share_embeddings else []}
    record["format"], record["format_version"] = FORMAT, FORMAT_VERSION

    (building / "config.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (building / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    for split_key, rows in predictions.items():
        write_predictions(predictions_path(building, split_key), rows)
    for extra in map(Path, extra_files):
        if extra.is_dir():
            shutil.copytree(extra, building / extra.name, symlinks=True)
        elif extra.exists() or extra.is_symlink():
            shutil.copy2(extra, building / extra.name, follow_symlinks=False)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "files": {name: {"bytes": (building / name).stat().st_size, "sha256": sha256_file(building / name)}
                          for name in CORE_FILES}}
    (building / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def rewrite_checkpoint(
    folder: Path,
    *,
    config: Mapping[str, Any] | None = None,
    metrics: Mapping[str, Any] | None = None,
    weights: tuple[Mapping[str, torch.Tensor], torch.dtype] | None = None,
    predictions: Mapping[str, Sequence[Any]] | None = None,
    remove: tuple[str, ...] = (),
) -> None:
    """Replace parts of a complete checkpoint in one atomic step, e.g. after its weights or shared
    embedding file were re-stored in fp16: the folder is copied beside itself, the given parts are
    written into the copy (`weights` = state dict without a shared embedding key, and the dtype to store
    it in; `predictions` = split key → rows or `Prediction`s; `remove` = file names to drop), the manifest is rebuilt and
    the copy renamed into place. A crash leaves the old folder or a hidden partial copy, never a mix."""
    folder = Path(folder)
    _check_files(folder, verify_hashes=True)
    building = folder.with_name(f".{folder.name}.partial-{os.getpid()}")
    if building.exists():
        shutil.rmtree(building)
    shutil.copytree(folder, building)
    for name in remove:
        (building / name).unlink(missing_ok=True)
    if weights is not None:
        state, dtype = weights
        save_tensors(_floating_as(state, dtype), building / "model.safetensors",
                     metadata={"format": FORMAT, "dtype": str(dtype).removeprefix("torch.")})
    if config is not None:
        atomic_write_json(building / "config.json", config)
    if metrics is not None:
        atomic_write_json(building / "metrics.json", metrics)
    for split_key, rows in (predictions or {}).items():
        write_predictions(predictions_path(building, split_key), rows)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "files": {name: {"bytes": (building / name).stat().st_size, "sha256": sha256_file(building / name)}
                          for name in CORE_FILES}}
    atomic_write_json(building / MANIFEST, manifest)
    replace_folder(building, folder)


# ------------------------------------------------------------------------------------------------ load

def _load_tensors(folder: Path, path: Path, what: str) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(folder, f"{what} cannot be read as safetensors ({error})") from error


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
    import gzip

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


def _check_labels(folder: Path, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The checkpoint's label order, checked against what it recorded: the model's output size
    (`model.num_classes`, which the weights are checked against), the protocol it was trained on, and
    its recorded predictions (each clear prediction must be the label of its highest probability), so a
    hand-edited, shortened or reordered `labels` list in config.json is refused instead of crashing
    `predict` or silently swapping labels."""
    from nlivis.analysis.predictions import find_prediction_files
    from nlivis.data.protocols import get_protocol

    labels = config.get("labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(label, str) for label in labels) \
            or len(set(labels)) != len(labels):
        raise CheckpointError(folder, f"config.json 'labels' must be a list of distinct label names, got {labels!r:.200}")
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
    return tuple(labels)


def _check_finite_weights(folder: Path, tensors: Mapping[str, torch.Tensor], what: str) -> None:
    bad = [key for key, tensor in tensors.items() if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())]
    if bad:
        raise CheckpointError(folder, f"{what} holds NaN or infinite values in {bad[:3]}{' …' if len(bad) > 3 else ''}; "
                                      "the weights are corrupt (retrain or restore the folder)")


def load_checkpoint(folder: str | Path, device: str | torch.device = "cpu") -> LoadedCheckpoint:
    """Rebuild model and featurizer from a checkpoint folder; every problem is a `CheckpointError`."""
    from nlivis.features.featurize import FeatureSettings, Featurizer
    from nlivis.features.vocab import CharVocabulary, Vocabulary, VocabularyFileError
    from nlivis.models import build

    folder = Path(folder)
    root = _check_inside_root(folder)  # before any file is read or hashed
    _check_files(folder, verify_hashes=True)
    config = _read_json(folder, "config.json")
    metrics = _read_json(folder, "metrics.json")
    info = _info(folder, config, metrics)
    _check_labels(folder, config)
    try:
        vocab = Vocabulary.load(folder / "vocab.json")
        char_vocab = CharVocabulary.load(folder / "chars.json")
    except VocabularyFileError as error:
        raise CheckpointError(folder, str(error)) from error
    try:
        labels = tuple(config["labels"])
        settings = FeatureSettings(**config["features"]["featurizer"])
        featurizer = Featurizer(vocab, char_vocab, settings, labels)
        model = build(config["model"])
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(folder, f"config.json cannot rebuild the model or featurizer ({type(error).__name__}: {error})") from error
    if len(vocab) != config["model"].get("vocab_size", len(vocab)):
        raise CheckpointError(folder, f"vocab.json has {len(vocab)} words, config.json says vocab_size {config['model']['vocab_size']}")

    expected = model.state_dict()
    stored = _load_tensors(folder, folder / "model.safetensors", "model.safetensors")
    embeddings = config.get("embeddings", {})
    if embeddings.get("shared"):
        key = embeddings.get("state_key", "")
        shared_path = (folder / str(embeddings.get("file", ""))).resolve()
        if not shared_path.is_relative_to(root):
            raise CheckpointError(folder, f"config.json embeddings.file {embeddings.get('file')!r} points outside the "
                                          f"checkpoint root {root} (to {shared_path}); refusing to read it")
        if not shared_path.is_file():
            raise CheckpointError(folder, f"shared embedding file {embeddings.get('file')} is missing (looked at {shared_path})")
        if sha256_file(shared_path) != embeddings.get("sha256"):
            raise CheckpointError(folder, f"shared embedding file {shared_path} does not match the sha256 in config.json")
        rows = _load_tensors(folder, shared_path, f"shared embedding file {shared_path}")
        if EMBEDDING_TENSOR not in rows:
            raise CheckpointError(folder, f"shared embedding file {shared_path} has no {EMBEDDING_TENSOR!r} tensor")
        _check_finite_weights(folder, rows, f"shared embedding file {shared_path}")
        stored = {**stored, key: rows[EMBEDDING_TENSOR]}
    _check_finite_weights(folder, stored, "model.safetensors")
    _check_state_matches(folder, expected, stored)
    model.load_state_dict({k: v.to(expected[k].dtype) for k, v in stored.items()}, strict=True)
    model.to(device).eval()
    return LoadedCheckpoint(model, featurizer, config, metrics, labels, folder, info)


# ---------------------------------------------------------------------------------------- training state

@dataclass
class TrainingState:
    """What `--resume` needs besides the tensors: counters, schedules, best dev, RNG states."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    pairs_seen: int = 0
    best_dev_accuracy: float | None = None
    best_step: int | None = None
    optimizer_name: str = ""
    elapsed_s: float = 0.0
    curve: list[dict[str, Any]] = field(default_factory=list)
    """Dev evaluations so far: step, epoch, dev_acc."""
    python_rng: Any = None
    numpy_rng: dict[str, Any] = field(default_factory=dict)


def flatten_optimizer_state(state: Mapping[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer state dict into tensors (for safetensors) and JSON-able rest."""
    tensors: dict[str, torch.Tensor] = {}
    described: dict[str, Any] = {}
    for param_id, entries in state["state"].items():
        described[str(param_id)] = {}
        for name, value in entries.items():
            if torch.is_tensor(value):
                tensors[f"{param_id}.{name}"] = value
                described[str(param_id)][name] = {"tensor": f"{param_id}.{name}"}
            else:
                described[str(param_id)][name] = {"value": value}
    return tensors, {"state": described, "param_groups": state["param_groups"]}


def unflatten_optimizer_state(tensors: Mapping[str, torch.Tensor], meta: Mapping[str, Any]) -> dict[str, Any]:
    state = {int(param_id): {name: (tensors[entry["tensor"]] if "tensor" in entry else entry["value"])
                             for name, entry in entries.items()}
             for param_id, entries in meta["state"].items()}
    groups = [{k: (tuple(v) if isinstance(v, list) and k != "params" else v) for k, v in group.items()}
              for group in meta["param_groups"]]
    return {"state": state, "param_groups": groups}


def save_training_state(
    out_dir: Path,
    state: TrainingState,
    model_state: Mapping[str, torch.Tensor],
    optimizer_state: Mapping[str, Any],
    best_model_state: Mapping[str, torch.Tensor] | None,
    rng_tensors: Mapping[str, torch.Tensor],
) -> None:
    """Replace `<out>/state/` atomically with the current training state. A failed write (e.g. a full disk)
    removes the partial folder and raises a `CheckpointError` saying so; the previous state stays usable."""
    out_dir = Path(out_dir)
    building = out_dir / f".{STATE_FOLDER}.partial-{os.getpid()}"
    try:
        _fresh_folder(building)
        save_tensors(model_state, building / "model.safetensors")
        optimizer_tensors, optimizer_meta = flatten_optimizer_state(optimizer_state)
        save_tensors(optimizer_tensors, building / "optimizer.safetensors")
        if best_model_state is not None:
            save_tensors(best_model_state, building / "best_model.safetensors")
        save_tensors(rng_tensors, building / "rng.safetensors")
        record = {"format": "nlivis-training-state", "format_version": FORMAT_VERSION,
                  "training": state.__dict__, "optimizer": optimizer_meta}
        (building / "state.json").write_text(json.dumps(record) + "\n", encoding="utf-8")
    except (OSError, SafetensorError) as error:
        shutil.rmtree(building, ignore_errors=True)
        previous = _saved_step(out_dir / STATE_FOLDER)
        kept = (f"the state saved at step {previous} is kept: once there is room, continue with --resume"
                if previous is not None else "no earlier state was saved")
        raise CheckpointError(out_dir, f"saving the training state failed: {write_failure(error, building)}; "
                                       f"the partial files were removed; {kept}") from error
    replace_folder(building, out_dir / STATE_FOLDER)


def _saved_step(folder: Path) -> int | None:
    try:
        return int(json.loads((folder / "state.json").read_text(encoding="utf-8"))["training"]["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass
class LoadedTrainingState:
    state: TrainingState
    model_state: dict[str, torch.Tensor]
    optimizer_state: dict[str, Any]
    best_model_state: dict[str, torch.Tensor] | None
    rng_tensors: dict[str, torch.Tensor]


def load_training_state(out_dir: Path) -> LoadedTrainingState:
    """Read `<out>/state/`; a missing or damaged state is a `CheckpointError` naming the folder."""
    folder = Path(out_dir) / STATE_FOLDER
    recover_folder(folder)
    if not (folder / "state.json").is_file():
        raise CheckpointError(out_dir, f"nothing to resume: no {STATE_FOLDER}/state.json")
    record = _read_json(folder, "state.json")
    try:
        # states saved before the SGD fallback counted steps also carry best_epoch_seen, now unused
        state = TrainingState(**{k: v for k, v in record["training"].items() if k != "best_epoch_seen"})
        optimizer_tensors = _load_tensors(folder, folder / "optimizer.safetensors", "optimizer.safetensors")
        optimizer_state = unflatten_optimizer_state(optimizer_tensors, record["optimizer"])
    except (KeyError, TypeError) as error:
        raise CheckpointError(folder, f"state.json is not a training state ({error})") from error
    best = folder / "best_model.safetensors"
    return LoadedTrainingState(
        state=state,
        model_state=_load_tensors(folder, folder / "model.safetensors", "model.safetensors"),
        optimizer_state=optimizer_state,
        best_model_state=_load_tensors(folder, best, "best_model.safetensors") if best.is_file() else None,
        rng_tensors=_load_tensors(folder, folder / "rng.safetensors", "rng.safetensors"),
    )

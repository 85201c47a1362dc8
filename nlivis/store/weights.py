"""Weights on disk: safetensors files and checkpoint folders, written atomically, read without unpickling.

A checkpoint folder (layout: `store.checkpoints`) is built under a hidden `.NAME.partial-PID` name next to
its final place and renamed into place (`store.files.replace_folder`), so a crash mid-save leaves either the
old folder or a hidden partial one, never a half checkpoint. Frozen word vectors are written once per
(vocabulary, source) under `<root>/embeddings/` and referenced by path and sha256.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from nlivis.store.checkpoints import (
    DYNAMICS_FILE,
    EMBEDDING_TENSOR,
    EMBEDDINGS_FOLDER,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    CheckpointError,
    check_files,
    manifest_of,
)
from nlivis.store.dynamics import TrainingDynamics, write_dynamics
from nlivis.store.files import (
    atomic_write_json,
    fresh_folder,
    replace_folder,
    sha256_file,
    write_failure,
)
from nlivis.store.predictions import predictions_path, write_predictions


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


def word_embedding_key(model: nn.Module) -> str:
    """The state-dict key of the model's word-embedding rows."""
    target = model.word_embedding.weight  # type: ignore[attr-defined]
    for name, parameter in model.named_parameters():
        if parameter is target:
            return name
    raise ValueError("the model's word embedding is not one of its parameters")


def fetched_state_keys(model: nn.Module) -> tuple[str, ...]:
    """State-dict keys the model rebuilds from a fetched, sha256-checked file because fine-tuning left them as
    they were (MiniLM's frozen lower layers): a checkpoint does not store them."""
    keys = getattr(model, "fetched_state_keys", None)
    return tuple(keys()) if keys is not None else ()


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


def floating_as(tensors: Mapping[str, torch.Tensor], dtype: torch.dtype) -> dict[str, torch.Tensor]:
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
    dynamics: TrainingDynamics | None = None,
) -> Path:
    """Write a complete checkpoint folder atomically (see the module docstring) and return it.

    `record` is config.json without its `weights` and `embeddings.file` parts, which are added here;
    `extra_files` (e.g. the live metrics log, or files a user put into the run folder while it trained) are
    copied in as they are; `dynamics` (the run's training dynamics) becomes `dynamics.safetensors`. A failed write (e.g. a full disk) removes the partial folder and raises a
    `CheckpointError` saying what happened; the run folder is left as it was.
    """
    out_dir = Path(out_dir)
    root = out_dir.parent
    root.mkdir(parents=True, exist_ok=True)
    building = root / f".{out_dir.name}.partial-{os.getpid()}"
    try:
        _build_checkpoint(fresh_folder(building), out_dir, model=model, vocab=vocab, char_vocab=char_vocab,
                          record=record, metrics=metrics, predictions=predictions, weights_dtype=weights_dtype,
                          share_embeddings=share_embeddings, extra_files=extra_files, dynamics=dynamics)
    except (OSError, SafetensorError) as error:
        shutil.rmtree(building, ignore_errors=True)
        raise CheckpointError(out_dir, f"{write_failure(error, building)}; the partial checkpoint was removed") from error
    replace_folder(building, out_dir)
    return out_dir


def _build_checkpoint(building: Path, out_dir: Path, *, model: nn.Module, vocab: Any, char_vocab: Any,
                      record: dict[str, Any], metrics: dict[str, Any], predictions: Mapping[str, list[dict[str, Any]]],
                      weights_dtype: torch.dtype, share_embeddings: bool, extra_files: tuple[Path, ...],
                      dynamics: TrainingDynamics | None) -> None:
    root = out_dir.parent
    vocab.save(building / "vocab.json")
    char_vocab.save(building / "chars.json")
    state = {k: v for k, v in model.state_dict().items()}
    record = json.loads(json.dumps(record))
    embedding_key = word_embedding_key(model)
    embeddings = record.setdefault("embeddings", {})
    if share_embeddings and getattr(model, "external_word_embedding", False):  # rows a fetched file holds (MiniLM)
        state.pop(embedding_key)
        embeddings.update({"shared": False, "external": True, "state_key": embedding_key})
    elif share_embeddings:
        vocab_json = (building / "vocab.json").read_bytes()
        path, digest = shared_embedding_file(root, vocab_json, str(embeddings.get("source", "")), state.pop(embedding_key))
        embeddings.update({"shared": True, "file": os.path.relpath(path, out_dir), "sha256": digest,
                           "tensor": EMBEDDING_TENSOR, "state_key": embedding_key})
    else:
        embeddings.update({"shared": False, "state_key": embedding_key})
    fetched = [key for key in fetched_state_keys(model) if key in state]
    for key in fetched:
        state.pop(key)
    save_tensors(floating_as(state, weights_dtype), building / "model.safetensors",
                 metadata={"format": FORMAT, "dtype": str(weights_dtype).removeprefix("torch.")})
    record["weights"] = {"file": "model.safetensors", "dtype": str(weights_dtype).removeprefix("torch."),
                         "excluded_keys": [embedding_key] if share_embeddings else []}
    if fetched:
        record["weights"].update({"fetched_keys": fetched, "fetched_from": model.fetched_source()})
    record["format"], record["format_version"] = FORMAT, FORMAT_VERSION

    (building / "config.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (building / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    for split_key, rows in predictions.items():
        write_predictions(predictions_path(building, split_key), rows)
    if dynamics is not None:
        write_dynamics(building / DYNAMICS_FILE, dynamics)
    for extra in map(Path, extra_files):
        if extra.is_dir():
            shutil.copytree(extra, building / extra.name, symlinks=True)
        elif extra.exists() or extra.is_symlink():
            shutil.copy2(extra, building / extra.name, follow_symlinks=False)
    (building / MANIFEST).write_text(json.dumps(manifest_of(building), indent=1) + "\n", encoding="utf-8")


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
    check_files(folder, verify_hashes=True)
    building = folder.with_name(f".{folder.name}.partial-{os.getpid()}")
    if building.exists():
        shutil.rmtree(building)
    shutil.copytree(folder, building)
    for name in remove:
        (building / name).unlink(missing_ok=True)
    if weights is not None:
        state, dtype = weights
        save_tensors(floating_as(state, dtype), building / "model.safetensors",
                     metadata={"format": FORMAT, "dtype": str(dtype).removeprefix("torch.")})
    if config is not None:
        atomic_write_json(building / "config.json", config)
    if metrics is not None:
        atomic_write_json(building / "metrics.json", metrics)
    for split_key, rows in (predictions or {}).items():
        write_predictions(predictions_path(building, split_key), rows)
    atomic_write_json(building / MANIFEST, manifest_of(building))
    replace_folder(building, folder)


def load_tensors(folder: Path, path: Path, what: str) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(folder, f"{what} cannot be read as safetensors ({error})") from error

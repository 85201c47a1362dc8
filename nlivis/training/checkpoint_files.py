"""What a checkpoint folder holds and how to list one, without torch: the manifest, its checks and the
listing entry (`CheckpointInfo`). The app's Home scan and the Ablations page read only this, so a cold
start does not pay for importing torch (about 1.5–2 s); loading and writing weights live in
nlivis.training.checkpoint, which re-exports everything here. The folder layout is described there.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

FORMAT = "nlivis-checkpoint"
FORMAT_VERSION = 1
MANIFEST = "COMPLETE"
CORE_FILES = ("config.json", "model.safetensors", "vocab.json", "chars.json", "metrics.json")
"""Files every checkpoint has; the manifest records their sizes and sha256."""
JSON_FILES = ("config.json", "metrics.json")
HASHED_FILES = ("model.safetensors", "vocab.json", "chars.json")
"""Files whose sha256 must match the manifest (the JSON files may be annotated by hand; they are parsed)."""
EMBEDDINGS_FOLDER = "embeddings"
EMBEDDING_TENSOR = "word_vectors"
STATE_FOLDER = "state"


class CheckpointError(Exception):
    """A checkpoint folder that cannot be used; the message names the folder and the problem."""

    def __init__(self, folder: str | Path, problem: str):
        super().__init__(f"checkpoint {folder}: {problem}")
        self.folder = str(folder)
        self.problem = problem


@dataclass(frozen=True)
class CheckpointInfo:
    """What the app lists about a checkpoint without loading its weights."""

    name: str
    model: str
    config_name: str
    protocol: str
    dev_accuracy: float | None
    parameters: int | None
    path: Path
    embedding_source: str
    size: str
    """paper | shipped: which size of the config was trained."""
    disk_bytes: int
    """Bytes of the folder's own files (a shared embedding file not included)."""
    select_split: str = ""
    seed: int | None = None


# ----------------------------------------------------------------------------------------------- files

def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary sibling, fsync, then rename over `path`: readers see old or new, never half."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with temporary.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------------------------------------ read

def _read_json(folder: Path, name: str) -> Any:
    path = folder / name
    if not path.is_file():
        raise CheckpointError(folder, f"{name} is missing")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(folder, f"{name} is not valid JSON ({error})") from error


def _check_files(folder: Path, verify_hashes: bool) -> dict[str, Any]:
    """The manifest, after checking that every core file is there with its recorded size (and hash)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(folder, "not a folder")
    if not (folder / MANIFEST).is_file():
        hint = " (a training run in progress or interrupted: resume it with --resume)" if (folder / STATE_FOLDER).is_dir() else ""
        raise CheckpointError(folder, f"incomplete: no {MANIFEST} marker{hint}")
    manifest = _read_json(folder, MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
        raise CheckpointError(folder, f"{MANIFEST} is not an nlivis checkpoint manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(folder, f"format version {manifest.get('format_version')!r}; this code reads {FORMAT_VERSION}")
    for name in CORE_FILES:
        path = folder / name
        expected = manifest["files"].get(name)
        if expected is None:
            raise CheckpointError(folder, f"{MANIFEST} does not list {name}")
        if not path.is_file():
            raise CheckpointError(folder, f"{name} is missing")
        size = path.stat().st_size
        if name in HASHED_FILES and size != expected["bytes"]:
            raise CheckpointError(folder, f"{name} is {size} bytes, the manifest says {expected['bytes']} (truncated or replaced)")
        if verify_hashes and name in HASHED_FILES and sha256_file(path) != expected["sha256"]:
            raise CheckpointError(folder, f"{name} does not match its sha256 in {MANIFEST} (corrupt or replaced)")
    return manifest


def _info(folder: Path, config: Mapping[str, Any], metrics: Mapping[str, Any]) -> CheckpointInfo:
    try:
        return CheckpointInfo(
            name=folder.name,
            model=str(config["model"]["name"]),
            config_name=str(config.get("config_name", "")),
            protocol=str(config["dataset"]["protocol"]),
            dev_accuracy=metrics.get("best_dev_accuracy"),
            parameters=config.get("parameters"),
            path=folder,
            embedding_source=str(config.get("embeddings", {}).get("source", "")),
            size=str(config.get("size", "")),
            disk_bytes=sum(p.stat().st_size for p in folder.iterdir() if p.is_file()),
            select_split=str(config["dataset"].get("select", "")),
            seed=config.get("seed"),
        )
    except (KeyError, TypeError) as error:
        raise CheckpointError(folder, f"config.json lacks a required entry ({error})") from error


def _check_inside_root(folder: Path) -> Path:
    """The checkpoint root (the resolved folder's parent). Every file of the folder, and of its named
    evaluations, must resolve inside it: a symlink or path pointing elsewhere is refused, so a checkpoint
    cannot make the app read (or hash, or show) files outside where it was found."""
    root = folder.resolve().parent
    if not folder.is_dir():
        return root  # `_check_files` says what is wrong
    entries = list(folder.iterdir())
    evaluations = folder / "evaluations"
    if evaluations.is_dir() and not evaluations.is_symlink():
        for child in evaluations.iterdir():
            entries.append(child)
            if child.is_dir() and not child.is_symlink():
                entries.extend(child.iterdir())
    for entry in entries:
        if not entry.resolve().is_relative_to(root):
            raise CheckpointError(folder, f"{entry.relative_to(folder)} points outside the checkpoint root {root} "
                                          f"(to {entry.resolve()}); refusing to read it")
    return root


def read_checkpoint_info(folder: str | Path) -> CheckpointInfo:
    """Cheap check (files present, sizes, JSON parses) and the listing entry; weights are not read."""
    folder = Path(folder)
    _check_inside_root(folder)
    _check_files(folder, verify_hashes=False)
    return _info(folder, _read_json(folder, "config.json"), _read_json(folder, "metrics.json"))


def find_checkpoints(root: str | Path, broken: list[CheckpointError] | None = None) -> list[CheckpointInfo]:
    """Complete checkpoints in the sub-folders of `root`, sorted by name. Broken or unfinished folders
    are skipped; when `broken` is given, their errors are appended to it (nothing is raised)."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name.startswith(".") or folder.name == EMBEDDINGS_FOLDER:
            continue
        try:
            found.append(read_checkpoint_info(folder))
        except CheckpointError as error:
            if broken is not None:
                broken.append(error)
    return found

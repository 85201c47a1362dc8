"""Checkpoint folders as files, without torch: what a folder holds, its manifest and checks, and the
listing entry (`CheckpointInfo`). The app's Home scan and the Ablations page read only this, so a cold
start does not pay for importing torch (about 1.5–2 s); writing weights is `store.weights`, rebuilding a
model from a folder is `nlivis.inference.load_checkpoint`.

A checkpoint folder holds
    config.json        everything needed to rebuild the model and featurizer, plus provenance
    model.safetensors  the weights (fp16 where that leaves every dev prediction unchanged, else fp32)
    vocab.json         word vocabulary;  chars.json  character vocabulary
    metrics.json       best dev accuracy and the curve;  metrics.jsonl  the live training log
    predictions_<split_key>.jsonl.gz  {"id", "gold", "predicted", "probs"} per pair, never sentences
                       (format: store.predictions)
    evaluations/<name>/ named evaluations on other data (store.evaluations)
    dynamics.safetensors  per training pair and epoch, the gold label's probability and whether the
                       prediction was right (store.dynamics; checkpoints trained before it have none)
    COMPLETE           the manifest (file sizes and sha256), written last: no COMPLETE, no checkpoint
Frozen word embeddings are not copied into every folder: the rows live once per (vocabulary, source)
in `<checkpoint root>/embeddings/<hash>.safetensors`, referenced from config.json by relative path and
sha256. While training, `<out>/state/` holds the resumable state (store.training_state).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from nlivis.store.files import sha256_file

FORMAT = "nlivis-checkpoint"
FORMAT_VERSION = 1
MANIFEST = "COMPLETE"
CORE_FILES = ("config.json", "model.safetensors", "vocab.json", "chars.json", "metrics.json")
"""Files every checkpoint has; the manifest records their sizes and sha256."""
DYNAMICS_FILE = "dynamics.safetensors"
OPTIONAL_FILES = (DYNAMICS_FILE,)
"""Files a checkpoint may have; when it has one, the manifest records it and it is checked like the core files."""
JSON_FILES = ("config.json", "metrics.json")
HASHED_FILES = ("model.safetensors", "vocab.json", "chars.json", DYNAMICS_FILE)
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


# ------------------------------------------------------------------------------------------------ read

def read_json(folder: Path, name: str, expect: type | None = dict) -> Any:
    """`name` in `folder` parsed as JSON; with `expect`, its top level must be of that type (a `[]` where an
    object belongs is a broken file, not a crash later)."""
    path = folder / name
    if not path.is_file():
        raise CheckpointError(folder, f"{name} is missing")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise CheckpointError(folder, f"{name} is not valid JSON ({error})") from error
    except OSError as error:
        raise CheckpointError(folder, f"{name} cannot be read ({error.strerror or error})") from error
    if expect is not None and not isinstance(value, expect):
        raise CheckpointError(folder, f"{name} must hold a JSON {_json_type(expect)}, not {_json_type(type(value))}")
    return value


def _json_type(kind: type) -> str:
    return {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "true/false",
            type(None): "null"}.get(kind, kind.__name__)


def table(folder: Path, owner: Mapping[str, Any], key: str, file: str, required: bool = True) -> Mapping[str, Any]:
    """`owner[key]`, which must be a JSON object (absent is an empty one unless `required`)."""
    value = owner.get(key)
    if value is None and key not in owner and not required:
        return {}
    if not isinstance(value, dict):
        raise CheckpointError(folder, f"{file} {key!r} must be a JSON object, not {_json_type(type(value))}")
    return value


def check_files(folder: Path, verify_hashes: bool) -> dict[str, Any]:
    """The manifest, after checking that every core file is there with its recorded size (and hash)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(folder, "not a folder")
    if not (folder / MANIFEST).is_file():
        hint = " (a training run in progress or interrupted: resume it with --resume)" if (folder / STATE_FOLDER).is_dir() else ""
        raise CheckpointError(folder, f"incomplete: no {MANIFEST} marker{hint}")
    manifest = read_json(folder, MANIFEST)
    if manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), dict):
        raise CheckpointError(folder, f"{MANIFEST} is not an nlivis checkpoint manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(folder, f"format version {manifest.get('format_version')!r}; this code reads {FORMAT_VERSION}")
    listed = [*CORE_FILES, *(name for name in OPTIONAL_FILES if name in manifest["files"])]
    for name in listed:
        _check_listed_file(folder, manifest, name, verify_hashes)
    return manifest


def _check_listed_file(folder: Path, manifest: Mapping[str, Any], name: str, verify_hashes: bool) -> None:
    path = folder / name
    expected = manifest["files"].get(name)
    if expected is None:
        raise CheckpointError(folder, f"{MANIFEST} does not list {name}")
    if not (isinstance(expected, dict) and isinstance(expected.get("bytes"), int)
            and isinstance(expected.get("sha256"), str)):
        raise CheckpointError(folder, f"{MANIFEST}'s entry for {name} must give its \"bytes\" (a number) and "
                                      f"\"sha256\" (a string); the manifest is damaged")
    if not path.is_file():
        raise CheckpointError(folder, f"{name} is missing")
    size = path.stat().st_size
    if name in HASHED_FILES and size != expected["bytes"]:
        raise CheckpointError(folder, f"{name} is {size} bytes, the manifest says {expected['bytes']} (truncated or replaced)")
    if verify_hashes and name in HASHED_FILES and sha256_file(path) != expected["sha256"]:
        raise CheckpointError(folder, f"{name} does not match its sha256 in {MANIFEST} (corrupt or replaced)")


def manifest_of(folder: Path) -> dict[str, Any]:
    """The manifest for a fully written folder: size and sha256 of every core file and of the optional files
    it has. Written last, so a folder without it is incomplete."""
    names = [*CORE_FILES, *(name for name in OPTIONAL_FILES if (folder / name).is_file())]
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "files": {name: {"bytes": (folder / name).stat().st_size, "sha256": sha256_file(folder / name)}
                      for name in names}}


def checkpoint_info(folder: Path, config: Mapping[str, Any], metrics: Mapping[str, Any]) -> CheckpointInfo:
    """The listing entry, after checking the types of everything it reads."""
    model = table(folder, config, "model", "config.json")
    dataset = table(folder, config, "dataset", "config.json")
    embeddings = table(folder, config, "embeddings", "config.json", required=False)
    if not isinstance(model.get("name"), str):
        raise CheckpointError(folder, "config.json lacks the model's name (model.name)")
    if not isinstance(dataset.get("protocol"), str):
        raise CheckpointError(folder, "config.json lacks the protocol it was trained on (dataset.protocol)")
    accuracy = metrics.get("best_dev_accuracy")
    if accuracy is not None and (not isinstance(accuracy, (int, float)) or isinstance(accuracy, bool)):
        raise CheckpointError(folder, f"metrics.json best_dev_accuracy must be a number, not {_json_type(type(accuracy))}")
    parameters, seed = config.get("parameters"), config.get("seed")
    return CheckpointInfo(
        name=folder.name,
        model=model["name"],
        config_name=str(config.get("config_name", "")),
        protocol=dataset["protocol"],
        dev_accuracy=accuracy,
        parameters=parameters if isinstance(parameters, int) else None,
        path=folder,
        embedding_source=str(embeddings.get("source", "")),
        size=str(config.get("size", "")),
        disk_bytes=_own_bytes(folder),
        select_split=str(dataset.get("select", "")),
        seed=seed if isinstance(seed, int) else None,
    )


def _own_bytes(folder: Path) -> int:
    total = 0
    for entry in folder.iterdir():
        try:
            if entry.is_file():
                total += entry.stat().st_size
        except OSError:  # a dangling or looping link counts nothing
            continue
    return total


def _resolved(folder: Path, entry: Path) -> Path:
    try:
        return entry.resolve(strict=False)
    except (OSError, RuntimeError) as error:  # a symlink loop
        raise CheckpointError(folder, f"{entry.relative_to(folder)} cannot be resolved ({error}); "
                                      "a symlink loop? remove it") from error


def check_inside_root(folder: Path) -> Path:
    """The checkpoint root (the resolved folder's parent). Every file of the folder, and of its named
    evaluations, must resolve inside it: a symlink or path pointing elsewhere is refused, so a checkpoint
    cannot make the app read (or hash, or show) files outside where it was found."""
    root = _resolved(folder.parent, folder).parent
    if not folder.is_dir():
        return root  # `check_files` says what is wrong
    entries = list(folder.iterdir())
    evaluations = folder / "evaluations"
    if evaluations.is_dir() and not evaluations.is_symlink():
        for child in evaluations.iterdir():
            entries.append(child)
            if child.is_dir() and not child.is_symlink():
                entries.extend(child.iterdir())
    for entry in entries:
        target = _resolved(folder, entry)
        if not target.is_relative_to(root):
            raise CheckpointError(folder, f"{entry.relative_to(folder)} points outside the checkpoint root {root} "
                                          f"(to {target}); refusing to read it")
    return root


def read_checkpoint_info(folder: str | Path) -> CheckpointInfo:
    """Cheap check (files present, sizes, JSON parses and has the right types) and the listing entry;
    weights are not read."""
    folder = Path(folder)
    check_inside_root(folder)
    check_files(folder, verify_hashes=False)
    return checkpoint_info(folder, read_json(folder, "config.json"), read_json(folder, "metrics.json"))


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
        except (OSError, ValueError, TypeError, RuntimeError) as error:  # anything else one folder does is its own fault
            if broken is not None:
                broken.append(CheckpointError(folder, f"cannot be read ({type(error).__name__}: {error})"))
    return found

"""The file primitives every writer uses: one sha256, one atomic write, one folder swap, one cache root.

Atomic means a reader sees the old file or the new one, never half: a temporary sibling is written,
fsynced and renamed over the target. Folders are built under a hidden name and renamed into place
(`replace_folder`), so a kill leaves the old folder or a complete `.ready` one that `recover_folder`
moves in. Every cache (spaCy analyses, tags, projections, attributions, WordNet, word pieces, numba)
lives under `cache_root()`: `$NLIVIS_CACHE_DIR`, else `~/.cache/nlivis`.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

CACHE_ENV = "NLIVIS_CACHE_DIR"
"""Environment variable naming the cache root (default ~/.cache/nlivis)."""
HASH_BLOCK_BYTES = 1 << 20


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """`cache_dir` if given, else $NLIVIS_CACHE_DIR, else ~/.cache/nlivis."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path.home() / ".cache" / "nlivis"


def file_stamp(path: str | Path) -> float:
    """A file's modification time (0 when it cannot be read): part of a cache key, so a changed file is read again."""
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return 0.0


def folder_stamp(path: str | Path) -> float:
    """Latest modification time among a folder's files (0 when it cannot be read): part of every cache key of a
    checkpoint, so a retrained checkpoint is loaded again."""
    path = Path(path)
    try:
        return max((p.stat().st_mtime for p in path.iterdir() if p.is_file()), default=path.stat().st_mtime)
    except OSError:
        return 0.0


def subfolders_stamp(root: str | Path) -> tuple[tuple[str, float], ...]:
    """What a listing of `root`'s folders depends on: each subfolder's name and `folder_stamp`."""
    try:
        return tuple(sorted((child.name, folder_stamp(child)) for child in Path(root).iterdir() if child.is_dir()))
    except OSError:
        return ()


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(HASH_BLOCK_BYTES), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write to a uniquely named temporary sibling, fsync, then rename over `path`: readers see old or new,
    never half, and two writers never share a temporary file. A failed write (a full disk) removes the
    temporary file and raises."""
    path = Path(path)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, data: Any, indent: int | None = 1) -> None:
    atomic_write_text(path, json.dumps(data, indent=indent, ensure_ascii=False) + "\n")


def sanitized_name(text: str) -> str:
    """`text` reduced to the characters allowed in a folder name nlivis makes (letters, digits, . _ -)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:60] or "file"


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


def fresh_folder(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path

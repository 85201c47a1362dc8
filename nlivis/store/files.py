"""The file primitives every writer uses: one sha256, one atomic write, one folder swap, one cache root.

Atomic means a reader sees the old file or the new one, never half: a temporary sibling is written,
fsynced and renamed over the target. Folders are built under a hidden name and renamed into place
(`replace_folder`), so a kill leaves the old folder or a complete `.ready` one that `recover_folder`
moves in. Every cache (spaCy analyses, tags, projections, attributions, a pair's readings, WordNet, word pieces,
numba) lives under `cache_root()`: `$NLIVIS_CACHE_DIR`, else `~/.cache/nlivis`.

Integrity: a folder nlivis fills from a fetch (WordNet, MiniLM) is built in a `temporary_sibling`, given a
manifest (size and sha256 of each file) and swapped into place by `install_folder`; `folder_problem` compares
it with its manifest on every read (sizes; hashes once per manifest, or when asked), so a truncated, zeroed
or half-fetched copy is fetched again (or refused, naming the file and the command that repairs it), and a
killed fetch leaves nothing in the way of the next one. A cache file that does not check itself (JSON,
`.npy`) is written with a seal (`write_sealed`) and read through `read_sealed`, which answers None for bytes
that differ from it, so the caller computes them again. Checkpoint files have their own manifest
(`store.checkpoints`; the dynamics file, small, is hashed on every read).
"""
from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

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
    try:  # os.scandir: the entry's type comes with the listing, one stat per file (a page run stats 60 folders)
        with os.scandir(path) as entries:
            return max((entry.stat().st_mtime for entry in entries if entry.is_file()), default=os.stat(path).st_mtime)
    except OSError:
        return 0.0


def subfolders_stamp(root: str | Path) -> tuple[tuple[str, float], ...]:
    """What a listing of `root`'s folders depends on: each subfolder's name and `folder_stamp`."""
    try:
        with os.scandir(root) as entries:
            return tuple(sorted((entry.name, folder_stamp(entry.path)) for entry in entries if entry.is_dir()))
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


def atomic_write_json(path: str | Path, data: Any, indent: int | None = 1, sealed: bool = False) -> None:
    """`data` as JSON, atomically; `sealed` also records its size and sha256 beside it (`write_sealed`)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    if sealed:
        write_sealed(path, text.encode("utf-8"))
    else:
        atomic_write_text(path, text)


def file_digest(paths: Iterable[str | Path]) -> str:
    """sha256 over the bytes of `paths` (sorted, each preceded by its name), read in 1 MiB blocks."""
    digest = hashlib.sha256()
    for path in sorted({str(p) for p in paths}):
        digest.update(Path(path).name.encode() + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def seal_path(path: str | Path) -> Path:
    """Where a cache file's seal lies: `.<name>.seal` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}.seal")


def write_sealed(path: str | Path, data: bytes) -> None:
    """Write a cache file atomically, then its seal (its size and sha256), so `read_sealed` can tell the bytes
    nlivis wrote from a file damaged or replaced since. Formats that check themselves (gzip's CRC, as the feature
    and prediction files use) need no seal."""
    atomic_write_bytes(path, data)
    atomic_write_json(seal_path(path), {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}, indent=None)


def read_sealed(path: str | Path) -> bytes | None:
    """A sealed cache file's bytes when they match its seal; None when the file is absent, has no seal (written
    before seals, or its writer was killed between the two writes) or differs from it (damaged, zeroed in place,
    replaced): the caller then computes the content again, as for a missing file."""
    path = Path(path)
    try:
        data = path.read_bytes()
        seal = json.loads(seal_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not (isinstance(seal, dict) and seal.get("bytes") == len(data)
            and seal.get("sha256") == hashlib.sha256(data).hexdigest()):
        return None
    return data


def write_sealed_array(path: str | Path, array: np.ndarray) -> None:
    """An array as a sealed .npy cache file (`write_sealed`; no pickled objects)."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    write_sealed(path, buffer.getvalue())


def read_sealed_array(path: str | Path) -> np.ndarray | None:
    """The array `write_sealed_array` wrote; None when absent, damaged, unsealed or not an array file (the caller
    computes it again)."""
    data = read_sealed(path)
    if data is None:
        return None
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError):
        return None


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


# ------------------------------------------------------------------------------------- folder manifests

FOLDER_MANIFEST = ".nlivis-manifest.json"
"""A folder's manifest: the size and sha256 of every file nlivis wrote there (WordNet copy, MiniLM folder)."""
VERIFIED_RECORD = ".nlivis-verified"
"""Written after every hash of a manifest matched: while it is newer than the manifest, reads check sizes only."""
FOLDER_MANIFEST_FORMAT = "nlivis-folder-manifest"


def write_folder_manifest(folder: str | Path) -> dict[str, Any]:
    """Record the size and sha256 of every file in `folder` (not in its subfolders) in its manifest, written
    atomically; called on a fully written folder before it is renamed into place."""
    folder = Path(folder)
    files = {path.name: {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
             for path in sorted(folder.iterdir())
             if path.is_file() and path.name not in (FOLDER_MANIFEST, VERIFIED_RECORD)}
    manifest = {"format": FOLDER_MANIFEST_FORMAT, "files": files}
    atomic_write_json(folder / FOLDER_MANIFEST, manifest)
    return manifest


def folder_problem(folder: str | Path, verify: bool = False) -> tuple[Path, str] | None:
    """(file, what is wrong) for the first file of `folder` that differs from its manifest, else None. Sizes are
    always compared; the sha256 of every file too with `verify`, or when the manifest is newer than the folder's
    verification record (written here after a full match, so a folder is hashed once per manifest)."""
    folder = Path(folder)
    manifest_path = folder / FOLDER_MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return manifest_path, "missing (the folder was not written by this version of nlivis, or not completely)"
    except (OSError, ValueError, RecursionError) as error:
        return manifest_path, f"cannot be read ({error})"
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if manifest.get("format") != FOLDER_MANIFEST_FORMAT or not isinstance(files, dict) or not all(
            isinstance(entry, dict) and isinstance(entry.get("bytes"), int) and isinstance(entry.get("sha256"), str)
            for entry in files.values()):
        return manifest_path, "is not an nlivis folder manifest (damaged)"
    for name, entry in files.items():
        path = folder / name
        if not path.is_file():
            return path, "is missing"
        if path.stat().st_size != entry["bytes"]:
            return path, f"is {path.stat().st_size:,} bytes, its manifest says {entry['bytes']:,} (truncated or replaced)"
    if not (verify or file_stamp(manifest_path) >= file_stamp(folder / VERIFIED_RECORD)):
        return None
    for name, entry in files.items():
        if sha256_file(folder / name) != entry["sha256"]:
            return folder / name, "does not match the sha256 in its manifest (damaged or replaced)"
    try:
        atomic_write_text(folder / VERIFIED_RECORD, "every file matched the sha256 in " + FOLDER_MANIFEST + "\n")
    except OSError:  # a read-only copy is checked again next time
        pass
    return None


def adopting_folder_problem(folder: str | Path, contents_problem: Callable[[Path], str | None],
                            verify: bool = False) -> str | None:
    """"<file> <what is wrong>" for a `folder` that differs from its manifest (`folder_problem`), else None. A
    folder without a manifest (written before manifests) is checked once by `contents_problem` (what is wrong
    with its files, or None) and, when that finds nothing, given its manifest."""
    folder = Path(folder)
    found = folder_problem(folder, verify=verify)
    if found is None:
        return None
    path, problem = found
    if path.name == FOLDER_MANIFEST and not path.exists():
        legacy = contents_problem(folder)
        if legacy is None:
            write_folder_manifest(folder)
        return legacy
    return f"{path.name} {problem}"


TEMPORARY_PREFIX = ".nlivis-tmp-"


def temporary_sibling(final: Path, purpose: str) -> Path:
    """A fresh, empty folder beside `final` to build its replacement in, named `.nlivis-tmp-<purpose>-<pid>-…`
    so that `remove_abandoned_siblings` knows it for nlivis's own and whose process made it."""
    final.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{TEMPORARY_PREFIX}{purpose}-{os.getpid()}-", dir=final.parent))


def remove_abandoned_siblings(final: Path, purpose: str) -> None:
    """Delete the temporary folders `temporary_sibling` made for `final` whose process is gone (a fetch that
    was killed); a running process's folder and anything nlivis did not name so are left alone."""
    if not final.parent.is_dir():
        return
    for leftover in final.parent.glob(f"{TEMPORARY_PREFIX}{purpose}-*"):
        pid_text = leftover.name[len(f"{TEMPORARY_PREFIX}{purpose}-"):].split("-", 1)[0]
        if leftover.is_dir() and not leftover.is_symlink() and pid_text.isascii() and pid_text.isdigit() \
                and not _process_alive(int(pid_text)):
            shutil.rmtree(leftover, ignore_errors=True)


@contextmanager
def staging_folder(final: Path, purpose: str) -> Iterator[Path]:
    """A fresh `temporary_sibling` of `final` to build in, removed afterwards whatever happens (its contents
    moved into place by `install_folder` first, when the build succeeded); abandoned ones of earlier, killed
    fetches for the same `purpose` are removed before."""
    remove_abandoned_siblings(final, purpose)
    work = temporary_sibling(final, purpose)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def install_folder(built: Path, final: Path) -> Path:
    """Write `built`'s manifest and move it into place as `final`, replacing whatever is there (a partial or
    damaged copy included: `replace_folder`, never a rename onto a non-empty folder)."""
    write_folder_manifest(built)
    replace_folder(built, final)
    return final


def isolated_pip_environment(work: Path) -> dict[str, str]:
    """The environment for a `pip download` nlivis runs: HOME, the XDG folders, CARGO_HOME and RUSTUP_HOME inside
    `work` (a temporary folder), so a build step pip runs writes nothing under the user's home; pip's download
    cache under the nlivis cache root; a pip configuration the user has is still read."""
    environment = dict(os.environ)
    home = Path.home()
    configs = [home / ".config" / "pip" / "pip.conf", home / ".pip" / "pip.conf"]
    if "PIP_CONFIG_FILE" not in environment:
        found = next((path for path in configs if path.is_file()), None)
        if found is not None:
            environment["PIP_CONFIG_FILE"] = str(found)
    environment.setdefault("PIP_CACHE_DIR", str(cache_root() / "pip"))
    for name, sub in (("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                      ("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state"), ("CARGO_HOME", "cargo"),
                      ("RUSTUP_HOME", "rustup")):
        environment[name] = str(work / sub)
    return environment

"""Fetch the official archives (MultiNLI 1.0, SNLI 1.0, GloVe 840B) for users who have internet access.

Downloads are atomic (written to `<dest>.part`, renamed when complete), checked against a SHA-256 when
one is known, and fail fast with a message naming the URL when the host cannot be reached, so a user
without internet knows which file to fetch by hand and where to put it.
"""
from __future__ import annotations

import hashlib
import http.client
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

CONNECT_TIMEOUT_SECONDS = 10.0
"""Socket timeout for connecting and for each read; short so that a machine without internet fails fast."""

CHUNK_BYTES = 1 << 20


class DownloadError(RuntimeError):
    """A download that could not be completed; the message says what to do instead."""


@dataclass(frozen=True)
class KnownArchive:
    """An official archive: where it is, what it unpacks to, and its SHA-256 when we know it for sure."""

    name: str
    url: str
    file_name: str
    extracted: str
    """Folder or file the archive unpacks into (inside the destination folder)."""
    sha256: str | None = None


# No checksums are recorded: none of these archives publishes one, and we have not verified a copy.
# Pass `sha256=` to `download` where you know it.
KNOWN_ARCHIVES: dict[str, KnownArchive] = {
    "mnli": KnownArchive(
        name="mnli",
        url="https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip",
        file_name="multinli_1.0.zip",
        extracted="multinli_1.0",
    ),
    "snli": KnownArchive(
        name="snli",
        url="https://nlp.stanford.edu/projects/snli/snli_1.0.zip",
        file_name="snli_1.0.zip",
        extracted="snli_1.0",
    ),
    "glove840b": KnownArchive(
        name="glove840b",
        url="https://nlp.stanford.edu/data/glove.840B.300d.zip",
        file_name="glove.840B.300d.zip",
        extracted="glove.840B.300d.txt",
    ),
}


def sha256_of(path: str | Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verify(path: Path, sha256: str, url: str) -> None:
    actual = sha256_of(path)
    if actual != sha256.lower():
        path.unlink()
        raise DownloadError(f"{url}: checksum mismatch (expected SHA-256 {sha256}, got {actual}); the file was removed")


def download(
    url: str,
    dest: str | Path,
    sha256: str | None = None,
    progress: bool = True,
    timeout: float = CONNECT_TIMEOUT_SECONDS,
) -> Path:
    """Download `url` to `dest` and return `dest`.

    An existing `dest` is kept (and checked when `sha256` is given). The data goes to `dest.part` first
    and is renamed only once complete and verified, so an interrupted run never leaves a truncated file
    under the final name.
    """
    dest = Path(dest)
    if dest.is_file():
        if sha256 is not None:
            _verify(dest, sha256, url)
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(partial, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            with tqdm(total=total, unit="B", unit_scale=True, desc=dest.name, disable=not progress) as bar:
                for chunk in iter(lambda: response.read(CHUNK_BYTES), b""):
                    out.write(chunk)
                    bar.update(len(chunk))
        if total is not None and partial.stat().st_size != total:
            raise DownloadError(f"{url}: incomplete download ({partial.stat().st_size} of {total} bytes)")
    except urllib.error.HTTPError as error:
        partial.unlink(missing_ok=True)
        raise DownloadError(
            f"could not download {url}: the server answered HTTP {error.code} {error.reason}. "
            f"Download it by hand and save it as {dest}"
        ) from None
    except (OSError, http.client.HTTPException) as error:  # URLError, refused, timeout, cut connection
        partial.unlink(missing_ok=True)
        reason = getattr(error, "reason", None) or error
        raise DownloadError(
            f"could not download {url} ({reason}). No internet access? Download it by hand "
            f"and save it as {dest}"
        ) from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if sha256 is not None:
        _verify(partial, sha256, url)
    partial.replace(dest)
    return dest


def fetch_archive(archive: KnownArchive, dest_dir: str | Path, progress: bool = True) -> Path:
    """Download an archive into `dest_dir`, unzip it there and return what it unpacked to.

    Skips the work when the unpacked folder or file is already there; removes the zip once unpacked
    (GloVe's is 2 GB).
    """
    dest_dir = Path(dest_dir)
    target = dest_dir / archive.extracted
    if target.exists():
        return target
    zip_path = download(archive.url, dest_dir / archive.file_name, sha256=archive.sha256, progress=progress)
    try:
        with zipfile.ZipFile(zip_path) as bundle:
            bundle.extractall(dest_dir)  # ZipFile drops absolute paths and ".." from member names
    except zipfile.BadZipFile as error:
        raise DownloadError(f"{zip_path}: not a valid zip archive ({error}); delete it and download again") from None
    if not target.exists():
        raise DownloadError(f"{zip_path}: unpacked, but {target} is not there; the archive's layout has changed")
    zip_path.unlink()
    return target


def fetch_dataset(name: str, dest_dir: str | Path, progress: bool = True) -> Path:
    """Download and unzip one of `KNOWN_ARCHIVES` (mnli, snli, glove840b) into `dest_dir`."""
    if name not in KNOWN_ARCHIVES:
        raise ValueError(f"unknown archive {name!r}; known: {', '.join(KNOWN_ARCHIVES)}")
    return fetch_archive(KNOWN_ARCHIVES[name], dest_dir, progress=progress)

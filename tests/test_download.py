"""Download helper against a local HTTP server on 127.0.0.1 (no internet needed)."""
from __future__ import annotations

import functools
import hashlib
import http.server
import socket
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlivis.data.download import KNOWN_ARCHIVES, DownloadError, KnownArchive, download, fetch_archive, fetch_dataset


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # keep test output clean
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(base URL, folder it serves): an HTTP server on a free loopback port, stopped after the test."""
    folder = tmp_path / "served"
    folder.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def make_archive(folder: Path) -> tuple[Path, str]:
    """A small zip holding toy_corpus/{readme.txt,dev.tsv}; returns its path and SHA-256."""
    path = folder / "toy_corpus.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        bundle.writestr("toy_corpus/readme.txt", "a toy corpus for the download test\n")
        bundle.writestr("toy_corpus/dev.tsv", "1\tIs it raining ?\tDoes it rain ?\t1\n" * 2000)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_download_with_the_right_checksum(served, tmp_path: Path):
    base, folder = served
    archive, digest = make_archive(folder)
    dest = download(f"{base}/toy_corpus.zip", tmp_path / "out" / "toy.zip", sha256=digest, progress=False)
    assert dest == tmp_path / "out" / "toy.zip"
    assert dest.read_bytes() == archive.read_bytes()
    assert not (tmp_path / "out" / "toy.zip.part").exists()


def test_checksum_mismatch_removes_the_file(served, tmp_path: Path):
    base, folder = served
    make_archive(folder)
    dest = tmp_path / "toy.zip"
    with pytest.raises(DownloadError, match="checksum mismatch.*removed"):
        download(f"{base}/toy_corpus.zip", dest, sha256="0" * 64, progress=False)
    assert not dest.exists() and not (tmp_path / "toy.zip.part").exists()


def test_existing_file_is_kept_or_rejected_by_checksum(tmp_path: Path):
    dest = tmp_path / "kept.bin"
    dest.write_bytes(b"already here")
    url = f"http://127.0.0.1:{closed_port()}/kept.bin"  # never contacted: the file is already there
    assert download(url, dest, sha256=hashlib.sha256(b"already here").hexdigest(), progress=False) == dest
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download(url, dest, sha256="f" * 64, progress=False)
    assert not dest.exists()


def test_unreachable_url_fails_fast_with_advice(tmp_path: Path):
    url = f"http://127.0.0.1:{closed_port()}/snli_1.0.zip"
    started = time.monotonic()
    with pytest.raises(DownloadError) as error:
        download(url, tmp_path / "snli_1.0.zip", progress=False)
    assert time.monotonic() - started < 5
    message = str(error.value)
    assert url in message and "by hand" in message and str(tmp_path / "snli_1.0.zip") in message
    assert not list(tmp_path.iterdir())


def test_http_error_is_reported(served, tmp_path: Path):
    base, _ = served
    with pytest.raises(DownloadError, match="HTTP 404"):
        download(f"{base}/missing.zip", tmp_path / "missing.zip", progress=False)
    assert not list(tmp_path.glob("missing.zip*"))


def test_fetch_archive_downloads_and_unzips(served, tmp_path: Path):
    base, folder = served
    _, digest = make_archive(folder)
    archive = KnownArchive("toy", f"{base}/toy_corpus.zip", "toy_corpus.zip", "toy_corpus", sha256=digest)
    target = fetch_archive(archive, tmp_path / "data", progress=False)
    assert target == tmp_path / "data" / "toy_corpus"
    assert (target / "readme.txt").read_text() == "a toy corpus for the download test\n"
    assert not (tmp_path / "data" / "toy_corpus.zip").exists()
    # Already unpacked: nothing is downloaded (the server no longer has the file).
    (folder / "toy_corpus.zip").unlink()
    assert fetch_archive(archive, tmp_path / "data", progress=False) == target


def test_fetch_archive_rejects_a_file_that_is_not_a_zip(served, tmp_path: Path):
    base, folder = served
    (folder / "broken.zip").write_bytes(b"this is not a zip archive")
    archive = KnownArchive("broken", f"{base}/broken.zip", "broken.zip", "broken")
    with pytest.raises(DownloadError, match="not a valid zip"):
        fetch_archive(archive, tmp_path, progress=False)


def test_known_archives_and_unknown_name(tmp_path: Path):
    assert set(KNOWN_ARCHIVES) == {"mnli", "snli", "glove840b"}
    assert KNOWN_ARCHIVES["mnli"].url.endswith("/multinli_1.0.zip")
    assert KNOWN_ARCHIVES["snli"].url.endswith("/snli_1.0.zip")
    assert KNOWN_ARCHIVES["glove840b"].url.endswith("/glove.840B.300d.zip")
    with pytest.raises(ValueError, match="unknown archive 'imdb'.*mnli"):
        fetch_dataset("imdb", tmp_path)

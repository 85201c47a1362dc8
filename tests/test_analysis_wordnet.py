"""Offline WordNet from Debian's files: lexnames, the copy into an NLTK data folder, antonyms."""
from __future__ import annotations

import pytest

from nlivis.analysis import wordnet
from nlivis.analysis.wordnet import (DEBIAN_WORDNET_DIR, LEXICOGRAPHER_FILES, WORDNET_FILES,
                                     WordNetUnavailable, install_from_debian, lexnames_text)

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


def test_missing_debian_files_give_the_install_command(tmp_path):
    with pytest.raises(WordNetUnavailable, match="apt-get install wordnet-base wordnet-sense-index"):
        install_from_debian(tmp_path / "nowhere", tmp_path / "nltk_data")


@debian_files
def test_copy_is_made_once_and_has_lexnames(tmp_path):
    corpus = install_from_debian(DEBIAN_WORDNET_DIR, tmp_path / "nltk_data")
    assert corpus == tmp_path / "nltk_data" / "corpora" / "wordnet"
    assert (corpus / "lexnames").read_text(encoding="utf-8") == lexnames_text()
    stamp = (corpus / "index.sense").stat().st_mtime_ns
    assert install_from_debian(DEBIAN_WORDNET_DIR, tmp_path / "nltk_data") == corpus
    assert (corpus / "index.sense").stat().st_mtime_ns == stamp


@debian_files
def test_inside_has_antonym_outside():
    reader = wordnet.load_wordnet()
    antonyms = [lemma.name() for lemma in reader.lemmas("inside")[0].antonyms()]
    assert antonyms == ["outside"]

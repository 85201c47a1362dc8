"""Character ids of a word: its first `max_chars` characters, right-padded with PAD (0).

DIIN and ESAN crop or pad every word to 16 characters (`DEFAULT_MAX_CHARS`); a longer word keeps its
beginning, which carries the stem. The char vocabulary itself is `features.vocab.CharVocabulary`.
"""
from __future__ import annotations

from typing import Mapping

DEFAULT_MAX_CHARS = 16
PAD_ID = 0
UNK_ID = 1


def word_characters(word: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """The characters that represent `word`: the first `max_chars`."""
    return list(word[:max_chars])


def char_ids(word: str, index: Mapping[str, int], max_chars: int = DEFAULT_MAX_CHARS) -> list[int]:
    """Exactly `max_chars` ids: known characters by `index`, unknown ones UNK (1), padding 0."""
    ids = [index.get(c, UNK_ID) for c in word_characters(word, max_chars)]
    return ids + [PAD_ID] * (max_chars - len(ids))

"""Word and character vocabularies: symbol ↔ id, PAD = 0, UNK = 1, saved as JSON.

Ids are ordered by frequency (ties alphabetically), so the same data always gives the same ids.
`lowercase` is part of the vocabulary, not of the caller: a checkpoint's vocabulary lowercases text
typed into the app exactly as it lowercased its training data.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Sequence, TypeVar

from nlivis.data.readers import load_json
from nlivis.data.records import InputError
from nlivis.features.chars import DEFAULT_MAX_CHARS, PAD_ID, UNK_ID, char_ids, word_characters

PAD = "<PAD>"
UNK = "<UNK>"
FILE_FORMAT = "nlivis-vocabulary"
FILE_VERSION = 1

V = TypeVar("V", bound="_SymbolVocabulary")


class VocabularyFileError(InputError):
    """A vocabulary file that cannot be read; the message names the file and the problem."""

    def __init__(self, path: str | Path, problem: str):
        super().__init__(f"{path}: not a valid vocabulary file ({problem})", str(path))


class _SymbolVocabulary:
    """Shared machinery; `KIND` tells word and char files apart."""

    KIND = ""

    def __init__(self, symbols: Sequence[str], lowercase: bool = False):
        symbols = list(symbols)
        if symbols[:2] != [PAD, UNK]:
            raise ValueError(f"a vocabulary starts with {PAD!r}, {UNK!r}; got {symbols[:2]!r}")
        if len(set(symbols)) != len(symbols):
            duplicates = sorted(s for s, n in Counter(symbols).items() if n > 1)[:5]
            raise ValueError(f"vocabulary symbols must be unique; repeated: {duplicates}")
        self.symbols: tuple[str, ...] = tuple(symbols)
        self.lowercase = bool(lowercase)
        self.index: dict[str, int] = {s: i for i, s in enumerate(self.symbols)}

    @classmethod
    def _from_counts(
        cls: type[V], counts: Counter, min_freq: int, max_size: int | None, lowercase: bool
    ) -> V:
        if min_freq < 1:
            raise ValueError(f"min_freq must be at least 1; got {min_freq}")
        if max_size is not None and max_size < 2:
            raise ValueError(f"max_size counts PAD and UNK, so it must be at least 2; got {max_size}")
        kept = sorted((s for s, n in counts.items() if n >= min_freq and s not in (PAD, UNK)),
                      key=lambda s: (-counts[s], s))
        if max_size is not None:
            kept = kept[: max_size - 2]
        return cls([PAD, UNK, *kept], lowercase=lowercase)

    def normalize(self, symbol: str) -> str:
        return symbol.lower() if self.lowercase else symbol

    def id_of(self, symbol: str) -> int:
        """The id of `symbol` (after lowercasing when the vocabulary does), UNK when absent."""
        return self.index.get(self.normalize(symbol), UNK_ID)

    def __contains__(self, symbol: object) -> bool:
        return isinstance(symbol, str) and self.normalize(symbol) in self.index

    def __len__(self) -> int:
        return len(self.symbols)

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and other.symbols == self.symbols
                and other.lowercase == self.lowercase)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FILE_FORMAT, "version": FILE_VERSION, "kind": self.KIND,
                "lowercase": self.lowercase, "symbols": list(self.symbols)}

    @classmethod
    def from_dict(cls: type[V], data: Any, where: str | Path = "<dict>") -> V:
        """Validate and rebuild; problems raise `VocabularyFileError` naming `where`."""
        if not isinstance(data, dict):
            raise VocabularyFileError(where, f"expected a JSON object, got {type(data).__name__}")
        if data.get("format") != FILE_FORMAT:
            raise VocabularyFileError(where, f"'format' must be {FILE_FORMAT!r}, got {data.get('format')!r}")
        if type(data.get("version")) is not int or data.get("version") != FILE_VERSION:
            raise VocabularyFileError(where, f"unsupported version {data.get('version')!r} (this code reads {FILE_VERSION})")
        if data.get("kind") != cls.KIND:
            raise VocabularyFileError(where, f"holds a {data.get('kind')!r} vocabulary, expected {cls.KIND!r}")
        symbols = data.get("symbols")
        if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
            raise VocabularyFileError(where, "'symbols' must be a list of strings")
        if not isinstance(data.get("lowercase"), bool):
            raise VocabularyFileError(where, "'lowercase' must be true or false")
        try:
            return cls(symbols, lowercase=data["lowercase"])
        except ValueError as error:
            raise VocabularyFileError(where, str(error)) from error

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls: type[V], path: str | Path) -> V:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise VocabularyFileError(path, f"not UTF-8 text: {error}") from error
        try:
            data = load_json(text)
        except json.JSONDecodeError as error:
            raise VocabularyFileError(path, f"not JSON: {error}") from error
        return cls.from_dict(data, where=path)


class Vocabulary(_SymbolVocabulary):
    """Words → ids. Build from token lists; `encode` maps unknown words to UNK (1)."""

    KIND = "word"

    @classmethod
    def build(
        cls,
        token_lists: Iterable[Sequence[str]],
        min_freq: int = 1,
        max_size: int | None = None,
        lowercase: bool = False,
    ) -> "Vocabulary":
        """Words seen at least `min_freq` times, the most frequent first, at most `max_size` ids
        (PAD and UNK included; None = no limit). `lowercase` (default False, since GloVe 840B is
        cased) folds case before counting and before every lookup."""
        counts: Counter = Counter()
        for tokens in token_lists:
            counts.update([t.lower() for t in tokens] if lowercase else tokens)
        return cls._from_counts(counts, min_freq, max_size, lowercase)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.id_of(t) for t in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.symbols[i] for i in ids]


class CharVocabulary(_SymbolVocabulary):
    """Characters → ids, counted over the first `max_chars` characters of each word."""

    KIND = "char"

    @classmethod
    def build(
        cls,
        token_lists: Iterable[Sequence[str]],
        min_freq: int = 1,
        max_size: int | None = None,
        lowercase: bool = False,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> "CharVocabulary":
        """Characters seen at least `min_freq` times (default 1: every character, as DIIN builds it
        from all splits); `lowercase` default False keeps case, which the char-CNN can use."""
        counts: Counter = Counter()
        for tokens in token_lists:
            for token in tokens:
                word = token.lower() if lowercase else token
                counts.update(word_characters(word, max_chars))
        return cls._from_counts(counts, min_freq, max_size, lowercase)

    def encode_word(self, word: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[int]:
        """Exactly `max_chars` ids for `word` (first characters, PAD = 0 after its end)."""
        return char_ids(self.normalize(word), self.index, max_chars)


__all__ = ["PAD", "UNK", "PAD_ID", "UNK_ID", "Vocabulary", "CharVocabulary", "VocabularyFileError"]

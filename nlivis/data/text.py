"""Typed text checks: is there a real word in it, can it be shown on a terminal, did it arrive as UTF-8.

A sentence typed by a user (command line or app) may hold only invisible characters (control characters,
zero-width spaces, a BOM, NUL): spaCy still makes tokens of some of them and the model then gives a
confident label for nothing. Text echoed in notices may hold escape sequences that would drive the
terminal. And bytes that are not UTF-8 reach Python's argv as lone surrogates.
"""
from __future__ import annotations

import math
import re
import unicodedata

WORD_CATEGORIES = ("L", "N")
"""Unicode major categories that make a real word: letters and numbers (not marks, punctuation, symbols,
separators or the invisible C* categories)."""
SHOWN_TOKEN_CHARS = 40
"""A token in a notice is cut to this many characters (a 100,000-character token is not printed whole)."""


def has_real_word(text: str) -> bool:
    """True when `text` holds at least one letter or digit."""
    return any(unicodedata.category(char)[0] in WORD_CATEGORIES for char in text)


def undecodable_byte(text: str) -> tuple[int, int] | None:
    """(position, byte) of the first byte that was not UTF-8 where `text` came from argv or a file name
    (Python keeps such bytes as lone surrogates U+DC80..U+DCFF), else None."""
    for position, char in enumerate(text):
        if "\udc80" <= char <= "\udcff":
            return position, ord(char) - 0xDC00
        if "\ud800" <= char <= "\udfff":
            return position, ord(char)
    return None


def text_problem(text: object, name: str) -> str | None:
    """Why `text` cannot be read as the `name` sentence (empty, no real word, not UTF-8), or None."""
    if not isinstance(text, str) or not text.strip():
        return f"the {name} is empty; give a sentence with at least one word"
    bad = undecodable_byte(text)
    if bad is not None:
        position, byte = bad
        return (f"the {name} is not valid UTF-8 text (byte 0x{byte:02x} at character {position + 1}); "
                "give it as UTF-8")
    if not has_real_word(text):
        return (f"the {name} has no real word (only invisible, control or punctuation characters, e.g. "
                f"{shown(text, 20)}); give a sentence with at least one word")
    return None


def shown(text: str, limit: int | None = None, keep_newlines: bool = False) -> str:
    """`text` safe to print on a terminal or page: every control, format, surrogate or unassigned
    character written as an escape (\\x1b, \\u200b, \\ufeff …; line breaks too unless
    `keep_newlines`), and cut to `limit` characters with a note of the full length."""
    cut = text if limit is None or len(text) <= limit else text[:limit]
    parts = []
    for char in cut:
        if unicodedata.category(char)[0] == "C" and not (keep_newlines and char == "\n"):
            code = ord(char)
            parts.append(f"\\x{code:02x}" if code < 0x100 else
                         f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            parts.append(char)
    result = "".join(parts)
    if len(cut) < len(text):
        result += f"… ({len(text):,} characters)"
    return result


def shown_token(token: str) -> str:
    """A token for a notice: escaped, and cut to `SHOWN_TOKEN_CHARS`."""
    return shown(token, SHOWN_TOKEN_CHARS)


_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
_DECIMAL_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_AROUND = " \t"
"""The only characters stripped around a number: Python's `int` also strips (and reads) other scripts' spaces
and digits, and `str.isdigit` says yes to "²", which `int` then refuses."""


def whole_number(text: str) -> int:
    """`text` as an integer written with ASCII digits (an optional sign, spaces or tabs around), the one
    reading of every whole number from a URL or a command line; ValueError saying why otherwise. Python's
    `int` would also take "١٢" or "1_000", and `"²".isdigit()` is true while `int("²")` raises."""
    stripped = text.strip(_AROUND) if isinstance(text, str) else None
    if stripped is None or not _WHOLE_NUMBER.fullmatch(stripped):
        raise ValueError(f"{shown(str(text), 40)!r} is not a whole number written with the digits 0-9")
    return int(stripped)


def decimal_number(text: str, finite: bool = True) -> float:
    """`text` as a finite number written with ASCII digits (sign, decimal point and exponent allowed), the one
    reading of every fractional number from a URL or a command line; ValueError saying why otherwise (NaN and
    infinity included). `finite` False also reads nan and inf, for a caller whose range check says why they
    are refused."""
    stripped = text.strip(_AROUND) if isinstance(text, str) else None
    if stripped is not None and not finite and _NOT_FINITE.fullmatch(stripped):
        return float(stripped)
    if stripped is None or not _DECIMAL_NUMBER.fullmatch(stripped):
        raise ValueError(f"{shown(str(text), 40)!r} is not a number written with the digits 0-9")
    value = float(stripped)
    if not math.isfinite(value):
        raise ValueError(f"{shown(stripped, 40)!r} is beyond the range of a number")
    return value

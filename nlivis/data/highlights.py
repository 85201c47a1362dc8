"""Human rationales: the hypothesis words e-SNLI's first annotator highlighted, for SNLI dev rows 0–3,277.

The file (`esnli_highlights/esnli_sents_highlight_contradict.dev.jsonl` under the shared data root; see
its README entry) has one JSON object a line: `sentB` is the hypothesis and `keywordB` the highlighted
words. Only the hypothesis side is read (`sentA`/`keywordA` do not line up with the premises). Line *i*
belongs to SNLI dev pair *i* (0-based), i.e. the pair on line *i* + 1 of the SNLI dev file. Highlights are
words, not positions: a highlighted word counts at every position where it occurs in the hypothesis
(matched case-insensitively).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from nlivis.data.records import DataFormatError, Pair
from nlivis.data.readers import load_json, numbered_lines

HIGHLIGHTS_FILE = Path("esnli_highlights") / "esnli_sents_highlight_contradict.dev.jsonl"
"""Where the file lies relative to a data root."""


@dataclass(frozen=True)
class Highlight:
    """One annotated hypothesis: its text and the lower-cased highlighted words."""

    hypothesis: str
    words: frozenset[str]


def read_esnli_highlights(path: str | Path) -> list[Highlight]:
    """Every line of the highlights file, in order; a malformed line is an error naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no e-SNLI highlights file here")
    rows: list[Highlight] = []
    for line_number, text in numbered_lines(path):
        if not text.strip():
            raise DataFormatError(str(path), line_number, "a JSON object with sentB and keywordB", "an empty line")
        try:
            record = load_json(text)
        except json.JSONDecodeError as error:
            raise DataFormatError(str(path), line_number, "a JSON object", str(error)) from error
        hypothesis, words = record.get("sentB") if isinstance(record, dict) else None, (
            record.get("keywordB") if isinstance(record, dict) else None)
        if not isinstance(hypothesis, str) or not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise DataFormatError(str(path), line_number, "sentB (a string) and keywordB (a list of strings)")
        rows.append(Highlight(hypothesis, frozenset(w.lower() for w in words)))
    return rows


def find_highlights_file(data_dir: str | Path) -> Path | None:
    """The highlights file under `data_dir` or up to two folders above it (a dataset folder such as
    `snli/esnli_tokenized` lies two levels below the data root); None when absent."""
    folder = Path(data_dir).resolve()
    for candidate in (folder, *list(folder.parents)[:2]):
        if (candidate / HIGHLIGHTS_FILE).is_file():
            return candidate / HIGHLIGHTS_FILE
    return None


def _comparable(text: str) -> str:
    """Letters and digits only, lower-cased: the 36 rows whose quotes and hyphens are tokenised differently
    still compare equal."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def highlights_by_pair(pairs: Sequence[Pair], highlights: Sequence[Highlight]) -> dict[str, frozenset[str]]:
    """pair id → highlighted words, for the pairs whose source line has a highlights row whose hypothesis
    matches the pair's (so a different split or file order gives no false rationales)."""
    out: dict[str, frozenset[str]] = {}
    for pair in pairs:
        if pair.line is None or not 1 <= pair.line <= len(highlights):
            continue
        row = highlights[pair.line - 1]
        if _comparable(row.hypothesis) == _comparable(pair.hypothesis):
            out[pair.id] = row.words
    return out


def token_labels(tokens: Sequence[str], words: frozenset[str]) -> list[bool]:
    """True at every hypothesis position whose token (lower-cased) is a highlighted word."""
    return [token.lower() in words for token in tokens]

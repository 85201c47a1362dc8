"""The one record every reader returns, whatever the source format."""
from __future__ import annotations

from dataclasses import dataclass, field

NLI_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
"""Label order shared by every NLI model: index i of a logit vector means NLI_LABELS[i]."""

PARAPHRASE_LABELS: tuple[str, ...] = ("not_duplicate", "duplicate")
"""Quora label order: the official files write 0 / 1, readers map them to these names."""


@dataclass(frozen=True)
class Pair:
    """A sentence pair as it stands in its source file.

    `id` is the official pair id where the format has one, otherwise the 1-based line number
    (as a string) of the pair in its file, which is stable because the files keep their official order.
    `label` is None for unlabelled input (typed by a user). `source`/`line` point back to the file so an
    error or a view can name where a pair came from.
    """

    id: str
    premise: str
    hypothesis: str
    label: str | None = None
    genre: str | None = None
    annotator_labels: tuple[str, ...] = field(default_factory=tuple)
    source: str | None = None
    line: int | None = None


@dataclass
class ReadResult:
    """Pairs read from one file plus what was dropped on purpose (gold label `-`)."""

    pairs: list[Pair]
    dropped_no_gold: int = 0
    path: str | None = None
    ambiguous_ids: tuple[str, ...] = ()
    """Official pair ids the file gives to more than one pair; each such pair's id became
    `<official id>-line<N>` (MultiNLI dev mismatched as distributed repeats 27 pairIDs)."""
    skipped_blank_lines: int = 0

    def notes(self) -> list[str]:
        """What the reader changed or skipped, one sentence each, for the user (empty when nothing)."""
        where = self.path or "the file"
        notes = []
        if self.dropped_no_gold:
            notes.append(f"{self.dropped_no_gold} pair(s) of {where} have gold label '-' (no annotator consensus) "
                         "and were left out")
        if self.ambiguous_ids:
            shown = ", ".join(repr(pair_id) for pair_id in self.ambiguous_ids[:3])
            notes.append(f"{len(self.ambiguous_ids)} pair id(s) of {where} are given to more than one pair "
                         f"({shown}{' …' if len(self.ambiguous_ids) > 3 else ''}); each such pair's id became "
                         "<id>-line<N>")
        if self.skipped_blank_lines:
            notes.append(f"{self.skipped_blank_lines} blank line(s) of {where} were skipped")
        return notes


class InputError(ValueError):
    """Input from outside that cannot be used — a data, tag, vocabulary, embedding or config file, or a
    value typed on the command line. The message names where (file and line, table and key, or option)
    and what was wrong; `path` and `line` say the same for code (None where they do not apply).

    Every reader raises this (or a subclass) for anything a file can hold, and nothing else, so callers
    catch one type; it is a ValueError so the CLI's one-line error handling covers it."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.path = path
        self.line = line


class DataFormatError(InputError):
    """A line that does not fit its format; the message names file, line and what was expected."""

    def __init__(self, path: str, line: int | None, expected: str, got: str | None = None):
        where = f"{path}, line {line}" if line is not None else path
        message = f"{where}: expected {expected}"
        if got is not None:
            shown = got if len(got) <= 120 else got[:117] + "..."
            message += f"; got {shown!r}"
        super().__init__(message, path, line)

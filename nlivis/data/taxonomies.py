"""TaxiNLI (Joshi et al., CoNLL 2020): 15 reasoning categories, the genre and three reference models'
predictions for 7,727 MultiNLI dev pairs, read from the release's `taxinli10k_MNLIDev.tsv`.

The file is tab-separated with a header line and written by pandas: a field holding a double quote is
quoted CSV-style (`"` doubled inside), so it is read with Python's `csv` module. Columns read (any order;
others, such as the two unnamed index columns, are ignored): `pairID`, `genre`, `label` (gold), the 15
category columns of `TAXINLI_CATEGORIES` (0 = not needed, a positive integer = needed: one cell of the
release holds 2), the sentences (`s1`/`s2`, else `prem`/`hyp`) and, where present, the reference models'
predicted labels (`REFERENCE_MODELS`: trained on the full MultiNLI training set).

A row is one MultiNLI dev pair. `join_to_pairs` finds it among a split's pairs by pairID; where the dev file
gives one pairID to several pairs (MultiNLI dev mismatched repeats 27, and the reader renames them
`<id>-line<N>`), the pair whose sentences equal the row's is taken. Anything that does not fit is a
`DataFormatError` naming the file and line.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from nlivis.data.records import NLI_LABELS, DataFormatError, Pair

TAXINLI_FILE = Path("taxinli") / "taxinli10k_MNLIDev.tsv"
"""Where the release's MultiNLI-dev file lies relative to a data root."""
TAXINLI_CATEGORIES: tuple[str, ...] = (
    "lexical_linguistic", "syntactic_linguistic", "factivity_linguistic", "negation_logic", "boolean_logic",
    "quantifier_logic", "conditional_logic", "comparative_logic", "relational_reasoning", "spatial_reasoning",
    "temporal_reasoning", "causal_reasoning", "coreference_reasoning", "world_knowledge", "taxonomic_knowledge",
)
"""The 15 categories in the release's column order (linguistic, logic, knowledge)."""
REFERENCE_MODELS: dict[str, str] = {"esim": "ESIM", "aloxatel/bert-base-mnli": "BERT-base",
                                    "bag_of_words": "bag of words"}
"""Prediction column → display name of the models the release scored, each trained on the full MultiNLI
training set (bag of words: naive Bayes)."""
CATEGORY_SUFFIXES = ("_linguistic", "_logic", "_reasoning", "_knowledge")
"""How the release's category columns end: a column ending so that is not one of the 15 is named, not dropped."""
SENTENCE_COLUMNS = (("s1", "s2"), ("prem", "hyp"))
"""Premise and hypothesis columns, in order of preference (`s1`/`s2` are MultiNLI's own)."""


@dataclass(frozen=True)
class TaxonomyRow:
    """One categorised pair of the file."""

    pair_id: str
    premise: str
    hypothesis: str
    label: str
    genre: str | None
    categories: frozenset[str]
    references: tuple[tuple[str, str], ...]
    """(reference model column, its predicted label) for each model the file has."""
    line: int

    def reference_labels(self) -> dict[str, str]:
        return dict(self.references)


@dataclass
class TaxonomyFile:
    """Every row of a TaxiNLI file, its reference models (columns present) and notes about what was read."""

    path: str
    rows: list[TaxonomyRow]
    reference_models: tuple[str, ...]
    notes: list[str] = field(default_factory=list)

    def category_counts(self) -> dict[str, int]:
        """Rows per category, in `TAXINLI_CATEGORIES` order."""
        return {name: sum(name in row.categories for row in self.rows) for name in TAXINLI_CATEGORIES}


def find_taxinli_file(data_root: str | Path | None) -> Path | None:
    """`taxinli/taxinli10k_MNLIDev.tsv` under `data_root`; None when absent (or no root)."""
    if data_root is None:
        return None
    path = Path(data_root) / TAXINLI_FILE
    return path if path.is_file() else None


def is_taxinli_file(path: str | Path) -> bool:
    """Whether the file's first line is a TaxiNLI header (pairID and every category column); False for a file
    that cannot be read, so a caller falls back to its other readers, which then name the problem."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 16).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False
    names = {name.strip() for name in first.rstrip("\r\n").split("\t")}
    # One category is enough: a file with a misspelled category header is a TaxiNLI file whose reader then
    # names the missing column, not a tags file of another format with that format's message.
    return "pairID" in names and any(name in TAXINLI_CATEGORIES or name.endswith(CATEGORY_SUFFIXES) for name in names)


def read_taxinli(path: str | Path) -> TaxonomyFile:
    """Every row of a TaxiNLI file; a file that does not fit (bytes that are not UTF-8, a missing column, a
    row with the wrong number of fields, a label or category value it cannot be, a pair listed twice) is a
    `DataFormatError` naming the file and line."""
    path = Path(path)
    where = str(path)
    reader = csv.reader(io.StringIO(_taxinli_text(path), newline=""), delimiter="\t")
    header, columns, sentences = _taxinli_header(reader, where)
    references = tuple(name for name in REFERENCE_MODELS if name in columns)
    rows: list[TaxonomyRow] = []
    seen: dict[tuple[str, str, str], int] = {}
    non_binary: list[str] = []
    line = reader.line_num + 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise DataFormatError(where, line, "a tab-separated row (quoted as CSV where it holds a quote)",
                                  str(error)) from error
        start, line = line, reader.line_num + 1
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue  # a blank line
        if len(fields) != len(header):
            raise DataFormatError(where, start, f"{len(header)} tab-separated fields as in the header",
                                  f"{len(fields)} fields")
        row = _row(fields, columns, sentences, references, where, start, non_binary)
        key = (row.pair_id, row.premise, row.hypothesis)
        if key in seen:
            raise DataFormatError(where, start, "each pair once", f"pairID {row.pair_id!r} again (first on line "
                                                                  f"{seen[key]})")
        seen[key] = start
        rows.append(row)
    notes = _unknown_column_notes(columns, where)
    if non_binary:
        notes.append(f"{len(non_binary)} category cell(s) of {where} hold a value other than 0 or 1 "
                     f"({', '.join(non_binary[:3])}{' …' if len(non_binary) > 3 else ''}); counted as the category")
    return TaxonomyFile(where, rows, references, notes)


def _unknown_column_notes(columns: Mapping[str, int], where: str) -> list[str]:
    """A note naming the header's columns that nlivis does not read (none in the release: pandas' unnamed index
    columns and the ones read), so a category spelled otherwise is not dropped without a word."""
    known = {"pairID", "label", "genre", *TAXINLI_CATEGORIES, *REFERENCE_MODELS,
             *(name for pair in SENTENCE_COLUMNS for name in pair)}
    unknown = [name for name in columns if name and name not in known and not re.fullmatch(r"Unnamed: [0-9]+", name)]
    if not unknown:
        return []
    categories = [name for name in unknown if name.endswith(CATEGORY_SUFFIXES)]
    kind = (f"category column(s) {', '.join(map(repr, categories))} that are not among the 15 TaxiNLI categories"
            if categories else f"column(s) {', '.join(map(repr, unknown))} that nlivis does not read")
    return [f"{where} has {kind}; ignored"]


def _taxinli_text(path: Path) -> str:
    """The file's text: UTF-8 (a BOM allowed) without NUL bytes, or a `DataFormatError` naming the line."""
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DataFormatError(where, None, "a readable TaxiNLI file", error.strerror or str(error)) from error
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise DataFormatError(where, line, "UTF-8 text", f"byte {data[error.start]:#04x}") from error
    if "\0" in text:
        raise DataFormatError(where, text[:text.index("\0")].count("\n") + 1, "text without NUL bytes")
    return text


def _taxinli_header(reader, where: str) -> tuple[list[str], dict[str, int], tuple[str, str]]:
    """(the header's fields, column name → index, the names of the two sentence columns) from the first row."""
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise DataFormatError(where, reader.line_num or 1, "a tab-separated header line", str(error)) from error
    if header is None:
        raise DataFormatError(where, 1, "a header line naming pairID, label, genre and the 15 TaxiNLI categories",
                              "an empty file")
    columns = {name.strip(): index for index, name in enumerate(header)}
    sentences = next((pair for pair in SENTENCE_COLUMNS if set(pair) <= set(columns)), None)
    missing = [name for name in ("pairID", "label", "genre", *TAXINLI_CATEGORIES) if name not in columns]
    if missing or sentences is None:
        need = missing + ([] if sentences is not None else ["s1/s2 or prem/hyp"])
        raise DataFormatError(where, 1, f"a TaxiNLI header with columns {need}", "\t".join(header))
    return header, columns, sentences


def _row(fields: Sequence[str], columns: Mapping[str, int], sentences: tuple[str, str],
         references: Sequence[str], where: str, line: int, non_binary: list[str]) -> TaxonomyRow:
    def value(name: str) -> str:
        return fields[columns[name]].strip()

    pair_id = value("pairID")
    if not pair_id:
        raise DataFormatError(where, line, "a pairID", "an empty field")
    label = value("label")
    if label not in NLI_LABELS:
        raise DataFormatError(where, line, f"label one of {list(NLI_LABELS)}", label)
    categories = set()
    for name in TAXINLI_CATEGORIES:
        cell = value(name)
        if not cell.isascii() or not cell.isdigit():
            raise DataFormatError(where, line, f"{name} 0 or 1 (a non-negative integer)", cell)
        if int(cell) > 0:
            categories.add(name)
            if int(cell) != 1:
                non_binary.append(f"line {line} {name} = {cell}")
    predicted = []
    for name in references:
        answer = value(name)
        if answer not in NLI_LABELS:
            raise DataFormatError(where, line, f"{name} one of {list(NLI_LABELS)}", answer)
        predicted.append((name, answer))
    premise, hypothesis = (fields[columns[name]] for name in sentences)
    return TaxonomyRow(pair_id, premise, hypothesis, label, value("genre") or None, frozenset(categories),
                       tuple(predicted), line)


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def join_to_pairs(rows: Sequence[TaxonomyRow], pairs: Sequence[Pair]) -> dict[str, TaxonomyRow]:
    """Split pair id → its TaxiNLI row, for the rows whose pair is among `pairs` (one dev split): by pairID,
    and for a pairID the split gives to several pairs (renamed `<id>-line<N>`) by equal sentences
    (whitespace aside). Rows of other splits are left out."""
    by_id = {pair.id: pair for pair in pairs}
    renamed: dict[str, list[Pair]] = {}
    for pair in pairs:
        base, marker, _ = pair.id.rpartition("-line")
        if marker:
            renamed.setdefault(base, []).append(pair)
    joined: dict[str, TaxonomyRow] = {}
    for row in rows:
        if row.pair_id in by_id:
            joined[row.pair_id] = row
            continue
        same = [pair for pair in renamed.get(row.pair_id, ())
                if _same_text(pair.premise, row.premise) and _same_text(pair.hypothesis, row.hypothesis)]
        if len(same) == 1:
            joined[same[0].id] = row
    return joined

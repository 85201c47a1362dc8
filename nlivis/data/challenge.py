"""Challenge sets: one or more files of labelled pairs with extra per-pair fields to break accuracy down by.

`read_challenge_files` reads, in any supported format, what `evaluate --file` and the Error analysis page
evaluate:

- a header CSV/TSV (or MultiNLI/SNLI `.txt`) whose premise, hypothesis and label columns are found by name,
  case-insensitively: `sentence1`/`premise`/`context`, `sentence2`/`hypothesis`/`statement`,
  `gold_label`/`label` — ANLI's annotated CSV (quoted, multi-line fields), ConjNLI's TSV (with a BOM),
  HANS's `heuristics_evaluation_set.txt` (labels entailment / non-entailment, `heuristic` and `subcase`);
- JSON lines with the same field names (SNLI/MultiNLI `.jsonl`, and the NLI stress tests, which publish one
  MultiNLI-format file per category: give them all and group by `file`);
- the line-aligned and Quora formats of `readers.read_file` (no extra fields).

Every other column or field is kept in `ChallengeSet.fields` (pair id → field → value). A value written as
a Python list literal (ANLI's `tags`: "['Numerical', 'Cardinal']") is parsed with `ast.literal_eval` —
never `eval` — and a pair counts in each of its values. Labels e / n / c (any case) read as entailment /
neutral / contradiction; `-` is dropped and counted, as everywhere.
"""
from __future__ import annotations

import ast
import csv
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from nlivis.data.readers import (LINE_ALIGNED_PREFIXES, NO_GOLD_LABEL, checked_sentence, load_json, make_ids_unique,
                                 numbered_lines, read_file, require_file)
from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS, DataFormatError, InputError, Pair, ReadResult

PREMISE_COLUMNS: tuple[str, ...] = ("sentence1", "premise", "context")
HYPOTHESIS_COLUMNS: tuple[str, ...] = ("sentence2", "hypothesis", "statement")
LABEL_COLUMNS: tuple[str, ...] = ("gold_label", "label")
ID_COLUMNS: tuple[str, ...] = ("pairid", "uid", "id", "pair_id", "guid")
"""Column names (lowercase) tried in order; the first present is used."""
BINARY_LABELS: tuple[str, ...] = ("entailment", "non-entailment")
"""HANS's label set: a 3-way model's neutral and contradiction both count as non-entailment."""
LABEL_SPELLINGS: dict[str, str] = {
    "e": "entailment", "n": "neutral", "c": "contradiction",
    "entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction",
    "non-entailment": "non-entailment", "non_entailment": "non-entailment", "not_entailment": "non-entailment",
    "nonentailment": "non-entailment",
}
FILE_FIELD = "file"
"""Added to every pair: the name of the file it came from without suffixes (the category of a stress test)."""
NO_VALUE = "(none)"
"""The group of a pair whose field is empty (an empty list, an empty cell)."""


@dataclass
class ChallengeSet:
    """Pairs of one or more files, their extra fields, and the label set the files use."""

    result: ReadResult
    fields: dict[str, dict[str, Any]]
    """pair id → {field name: value}; a list-valued field holds a tuple of strings."""
    labels: tuple[str, ...]
    files: tuple[Path, ...]
    notes: list[str] = field(default_factory=list)

    @property
    def pairs(self) -> list[Pair]:
        return self.result.pairs

    def source_files(self) -> list[Path]:
        """Every file the pairs were read from: a line-aligned `s1.<split>` brings its `s2.` and `labels.`
        files (what an evaluation's data identity must hash)."""
        from nlivis.data.readers import line_aligned_files

        found: list[Path] = []
        for path in self.files:
            name = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
            prefix, _, split = name.partition(".")
            if prefix in LINE_ALIGNED_PREFIXES and split:
                found += list(line_aligned_files(path.parent, split, path.name.endswith(".gz")))
            else:
                found.append(path)
        return list(dict.fromkeys(found))

    @property
    def name(self) -> str:
        """A short name for the data: the file's stem (`<folder>_<split>` for a line-aligned split), with
        `-and-more` when several files were given."""
        return _stem(self.files[0]) + ("-and-more" if len(self.files) > 1 else "")

    def field_names(self) -> list[str]:
        names: dict[str, None] = {}
        for values in self.fields.values():
            names.update(dict.fromkeys(values))
        return list(names)

    def groups(self, field_name: str) -> dict[str, tuple[str, ...]]:
        """pair id → the values of `field_name` (several for a list-valued field; `NO_VALUE` when empty).
        The field is matched case-insensitively; an unknown field is a ValueError listing the known ones."""
        known = self.field_names()
        match = next((name for name in known if name == field_name), None) or next(
            (name for name in known if name.lower() == field_name.lower()), None)
        if match is None:
            raise ValueError(f"{', '.join(map(str, self.files))}: no field {field_name!r} to group by; "
                             f"the fields are: {', '.join(known)}")
        groups = {}
        for pair in self.pairs:
            value = self.fields.get(pair.id, {}).get(match)
            values = value if isinstance(value, tuple) else (() if value in (None, "") else (str(value),))
            groups[pair.id] = tuple(dict.fromkeys(values)) or (NO_VALUE,)
        return groups


def parse_field_value(value: Any) -> Any:
    """A cell's value as kept: a list literal ("['a', 'b']") or JSON list → tuple of strings, else as is."""
    if isinstance(value, (list, tuple)):
        return tuple(str(item) for item in value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return value
            if isinstance(parsed, (list, tuple)) and all(isinstance(item, (str, int, float)) for item in parsed):
                return tuple(str(item) for item in parsed)
    return value


def normalise_label(raw: Any, path: Path, line: int | None) -> str | None:
    """The label a cell means (None for an empty cell, `NO_GOLD_LABEL` kept); anything else is an error."""
    if raw is None:
        return None
    text = str(raw).strip()
    if text in ("", NO_GOLD_LABEL):
        return text or None
    label = LABEL_SPELLINGS.get(text.lower())
    if label is None:
        raise DataFormatError(str(path), line, "a label e / n / c, entailment / neutral / contradiction or "
                              "non-entailment (any case)", text)
    return label


def _find_column(names: Sequence[str], candidates: Sequence[str]) -> str | None:
    lowered = {name.strip().lower(): name for name in names}
    return next((lowered[candidate] for candidate in candidates if candidate in lowered), None)


def _stem(path: Path) -> str:
    name = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
    prefix, _, split = name.partition(".")
    if prefix in LINE_ALIGNED_PREFIXES and split:
        return f"{path.parent.name}_{split}"
    return name.rsplit(".", 1)[0] if "." in name else name


class _Rows:
    """Collects pairs and fields from (line, record) rows of one file."""

    def __init__(self, path: Path, names: Sequence[str]):
        self.path = path
        self.premise = _find_column(names, PREMISE_COLUMNS)
        self.hypothesis = _find_column(names, HYPOTHESIS_COLUMNS)
        self.label = _find_column(names, LABEL_COLUMNS)
        self.id = _find_column(names, ID_COLUMNS)
        self.pairs: list[Pair] = []
        self.fields: dict[int, dict[str, Any]] = {}
        self.dropped = 0

    @property
    def usable(self) -> bool:
        return self.premise is not None and self.hypothesis is not None

    def add(self, line: int, record: dict[str, Any]) -> None:
        label = normalise_label(record.get(self.label), self.path, line) if self.label else None
        if label == NO_GOLD_LABEL:
            self.dropped += 1
            return
        pair_id = record.get(self.id) if self.id else None
        pair = Pair(id=str(pair_id) if pair_id not in (None, "") else str(line),
                    premise=checked_sentence(record.get(self.premise), self.premise, self.path, line),
                    hypothesis=checked_sentence(record.get(self.hypothesis), self.hypothesis, self.path, line),
                    label=label, genre=str(record["genre"]) if record.get("genre") else None,
                    source=str(self.path), line=line)
        used = {self.premise, self.hypothesis, self.label}
        self.fields[len(self.pairs)] = {name: parse_field_value(value) for name, value in record.items()
                                        if name not in used}
        self.pairs.append(pair)

    def missing_message(self, names: Sequence[str]) -> str:
        return (f"a header naming a premise column ({' / '.join(PREMISE_COLUMNS)}) and a hypothesis column "
                f"({' / '.join(HYPOTHESIS_COLUMNS)}), any case; found {list(names)[:12]}")


def _read_delimited(path: Path, delimiter: str) -> _Rows | None:
    """A header CSV (quoted fields, as csv writes them) or TSV (unquoted, as MultiNLI writes them); None when
    the header names no premise/hypothesis columns."""
    if delimiter == ",":
        # Lines are decoded one by one (numbered_lines), so a byte that is not UTF-8 is reported with its
        # line; csv joins the lines of a quoted multi-line field itself and counts them in line_num.
        reader = csv.reader((text for _, text in numbered_lines(path, keep_ends=True)), delimiter=",")
        try:
            header = next(reader, None)
            if header is None:
                raise DataFormatError(str(path), 1, "a header line", "an empty file")
            rows = _Rows(path, header)
            if not rows.usable:
                return None
            line = reader.line_num
            for values in reader:
                start, line = line + 1, reader.line_num
                if not any(value.strip() for value in values):
                    continue
                if len(values) != len(header):
                    raise DataFormatError(str(path), start, f"{len(header)} comma-separated fields as in the "
                                          f"header, found {len(values)}")
                rows.add(start, dict(zip(header, values)))
        except csv.Error as error:
            raise DataFormatError(str(path), max(reader.line_num, 1), f"CSV ({error})") from None
        return rows
    lines = numbered_lines(path)
    first = next(lines, None)
    if first is None:
        raise DataFormatError(str(path), 1, "a header line", "an empty file")
    header = first[1].split(delimiter)
    rows = _Rows(path, header)
    if not rows.usable:
        return None
    for line, text in lines:
        if not text.strip():
            continue
        values = text.split(delimiter)
        if len(values) > len(header):
            raise DataFormatError(str(path), line, f"at most {len(header)} tab-separated columns as in the header, "
                                  f"found {len(values)}")
        rows.add(line, dict(zip(header, values + [""] * (len(header) - len(values)))))
    return rows


def _read_jsonl(path: Path) -> _Rows:
    rows: _Rows | None = None
    for line, text in numbered_lines(path):
        if not text.strip():
            continue
        try:
            record = load_json(text)
        except json.JSONDecodeError as error:
            raise DataFormatError(str(path), line, f"a JSON object ({error.msg})") from None
        if not isinstance(record, dict):
            raise DataFormatError(str(path), line, "a JSON object")
        if rows is None:
            rows = _Rows(path, list(record))
        if not rows.usable or rows.premise not in record or rows.hypothesis not in record:
            raise DataFormatError(str(path), line, rows.missing_message(list(record)).replace("a header naming", "fields naming"))
        rows.add(line, record)
    if rows is None:
        raise DataFormatError(str(path), None, "at least one JSON object", "an empty file")
    return rows


def _read_one(path: Path) -> tuple[ReadResult, dict[str, dict[str, Any]]]:
    """One file's pairs (ids unique within the file) and fields by pair id."""
    name = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
    prefix, _, split = name.partition(".")
    rows: _Rows | None = None
    if not (prefix in LINE_ALIGNED_PREFIXES and split):
        if name.endswith(".jsonl"):
            rows = _read_jsonl(path)
        elif name.endswith(".csv"):
            rows = _read_delimited(path, ",")
            if rows is None:
                header = next(numbered_lines(path), (1, ""))[1]
                raise DataFormatError(str(path), 1, _Rows(path, []).missing_message(header.split(",")))
        elif name.endswith((".tsv", ".txt")):
            rows = _read_delimited(path, "\t")
    if rows is None:  # line-aligned, Quora, or a format read_file names in its error
        result = read_file(path)
        return result, {pair.id: {} for pair in result.pairs}
    result = make_ids_unique(ReadResult(pairs=rows.pairs, dropped_no_gold=rows.dropped, path=str(path)))
    return result, {pair.id: rows.fields[index] for index, pair in enumerate(result.pairs)}


def read_challenge_files(paths: Sequence[str | Path]) -> ChallengeSet:
    """Read one or more challenge files (see the module docstring). With several files, each pair id is
    prefixed with its file's name (`<file>:<id>`) so that ids stay unique; every pair gets a `file` field."""
    if not paths:
        raise ValueError("no challenge file given")
    files = tuple(Path(p) for p in paths)
    for path in files:
        require_file(path)
    stems = [_stem(path) for path in files]
    pairs: list[Pair] = []
    fields: dict[str, dict[str, Any]] = {}
    dropped = 0
    notes: list[str] = []
    ambiguous: list[str] = []
    for path, stem in zip(files, stems):
        result, file_fields = _read_one(path)
        dropped += result.dropped_no_gold
        notes += result.notes()
        ambiguous += result.ambiguous_ids
        for pair in result.pairs:
            new_id = pair.id if len(files) == 1 else f"{stem}:{pair.id}"
            fields[new_id] = {**file_fields[pair.id], FILE_FIELD: stem}
            pairs.append(replace(pair, id=new_id))
    if len(set(stems)) < len(stems):
        raise InputError(f"two challenge files share the name {sorted(s for s in stems if stems.count(s) > 1)[0]!r} "
                         f"({', '.join(map(str, files))}); their pairs could not be told apart")
    found = {pair.label for pair in pairs} - {None}
    if found & set(PARAPHRASE_LABELS):
        labels = PARAPHRASE_LABELS
    elif "non-entailment" in found:
        mixed = found & {"neutral", "contradiction"}
        if mixed:
            raise InputError(f"{', '.join(map(str, files))}: labels mix non-entailment with {sorted(mixed)}; "
                             "a file is either 3-way NLI or 2-way (entailment / non-entailment, as HANS)")
        labels = BINARY_LABELS
    else:
        labels = NLI_LABELS
    result = ReadResult(pairs=pairs, dropped_no_gold=dropped, path=", ".join(map(str, files)),
                        ambiguous_ids=tuple(ambiguous))
    if not pairs:
        raise InputError(f"{result.path}: no pairs to evaluate"
                         + (f" ({dropped} pair(s) have gold label '-' and were left out)" if dropped else ""))
    return ChallengeSet(result, fields, labels, files, notes)



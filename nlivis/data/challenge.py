"""Challenge sets: one or more files of labelled pairs with extra per-pair fields to break accuracy down by.

`read_challenge_files` reads, in any supported format, what `evaluate --file` and the Error analysis page
evaluate:

- a header CSV/TSV (or MultiNLI/SNLI `.txt`) whose premise, hypothesis and label columns are found by name,
  case-insensitively: `sentence1`/`premise`/`context`, `sentence2`/`hypothesis`/`statement`,
  `gold_label`/`label` — ANLI's annotated CSV (quoted, multi-line fields), ConjNLI's TSV (with a BOM),
  HANS's `heuristics_evaluation_set.txt` (labels entailment / non-entailment, `heuristic` and `subcase`);
- JSON lines with the same field names (SNLI/MultiNLI `.jsonl`, and the NLI stress tests, which publish one
  MultiNLI-format file per category: give them all and group by `file`);
- the line-aligned and Quora formats of `readers.read_file` (no extra fields);

Columns named otherwise are named with `columns` (`evaluate --columns premise=NAME,hypothesis=NAME,label=NAME`,
`parse_columns`; also `id=NAME`). The header rule: a `.tsv` is Quora's headerless format only when its first line
starts with a Quora label (0 or 1); any other first line is a header, read by name, and a header without a premise
or hypothesis column is an error listing its columns and suggesting `--columns` — never a Quora-format complaint.
With `label_scheme` "2way", gold labels are read as entailment vs non-entailment (`two_way_label`: neutral,
contradiction and non-entailment merge), so a set written 2-way is scored as its authors meant;
- counterfactually-augmented NLI's layout (Kaushik et al. 2020): `original/`, `revised_premise/` and
  `revised_hypothesis/` folders each holding a `<split>.tsv` (`sentence1 \t sentence2 \t gold_label`), where
  rows 2i and 2i+1 of a revised file are the two revisions of original row i. Give the folder above them (and
  the split when it holds several) or the files; every pair gets a `contrast_group` field (the original's
  1-based row) joining an original to its revisions, and `file` says which of the three it is.

Paraphrase files (a Quora model's challenge sets) are read the same way: `question1`/`question2` columns,
and labels 0 / 1 (1 = duplicate, as Quora writes them), true / false, duplicate / not_duplicate, in a
`label` or `is_duplicate` column; they become the `PARAPHRASE_LABELS`. A file is one task: NLI and
paraphrase labels in one set of files are refused, naming where each kind first appears.

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
from typing import Any, Callable, Mapping, Sequence

from nlivis.data.readers import (LINE_ALIGNED_PREFIXES, NO_GOLD_LABEL, QUORA_LABELS, checked_sentence,
                                 line_aligned_files, load_json, make_ids_unique, numbered_lines, read_file,
                                 require_file)
from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS, DataFormatError, InputError, Pair, ReadResult
from nlivis.data.text import has_real_word, shown

PREMISE_COLUMNS: tuple[str, ...] = ("sentence1", "premise", "context", "question1")
HYPOTHESIS_COLUMNS: tuple[str, ...] = ("sentence2", "hypothesis", "statement", "question2")
LABEL_COLUMNS: tuple[str, ...] = ("gold_label", "label", "is_duplicate")
ID_COLUMNS: tuple[str, ...] = ("pairid", "uid", "id", "pair_id", "guid")
"""Column names (lowercase) tried in order; the first present is used."""
COLUMN_KEYS: dict[str, tuple[str, ...]] = {"premise": PREMISE_COLUMNS, "hypothesis": HYPOTHESIS_COLUMNS,
                                           "label": LABEL_COLUMNS, "id": ID_COLUMNS}
"""What `--columns KEY=NAME` may name, and the names each key is otherwise found by."""
BINARY_LABELS: tuple[str, ...] = ("entailment", "non-entailment")
"""HANS's label set: a 3-way model's neutral and contradiction both count as non-entailment."""
LABEL_SCHEMES: tuple[str, ...] = ("3way", "2way")
"""How an NLI file is scored (`evaluate --label-scheme`): `3way` in the labels the file uses (a file labelled
entailment / non-entailment, as HANS, is 2-way already), `2way` entailment vs non-entailment whatever the file
uses: neutral, contradiction and non-entailment gold labels, and a 3-way model's neutral and contradiction
answers, all count as non-entailment."""
DEFAULT_LABEL_SCHEME = "3way"
TWO_WAY: dict[str, str] = {"entailment": "entailment", "neutral": "non-entailment",
                           "contradiction": "non-entailment", "non-entailment": "non-entailment"}
LABEL_SPELLINGS: dict[str, str] = {
    "e": "entailment", "n": "neutral", "c": "contradiction",
    "entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction",
    "non-entailment": "non-entailment", "non_entailment": "non-entailment", "not_entailment": "non-entailment",
    "nonentailment": "non-entailment",
    # paraphrase (Quora writes 0 / 1, 1 = duplicate; JSON may hold true / false)
    "0": PARAPHRASE_LABELS[0], "1": PARAPHRASE_LABELS[1], "false": PARAPHRASE_LABELS[0],
    "true": PARAPHRASE_LABELS[1], "not_duplicate": PARAPHRASE_LABELS[0], "not-duplicate": PARAPHRASE_LABELS[0],
    "not duplicate": PARAPHRASE_LABELS[0], "non_duplicate": PARAPHRASE_LABELS[0],
    "non-duplicate": PARAPHRASE_LABELS[0], "duplicate": PARAPHRASE_LABELS[1],
}
LABEL_DESCRIPTION = ("a label e / n / c, entailment / neutral / contradiction or non-entailment (NLI), or 0 / 1, "
                     "true / false or duplicate / not_duplicate (paraphrase; 1 = duplicate), any case")
FILE_FIELD = "file"
"""Added to every pair: the name of the file it came from without suffixes (the category of a stress test)."""
NO_VALUE = "(none)"
"""The group of a pair whose field is empty (an empty list, an empty cell)."""
CONTRAST_FIELD = "contrast_group"
"""Added to every pair of a counterfactually-augmented set: the 1-based row of the original it belongs to."""
ORIGINAL_FOLDER = "original"
REVISION_FOLDERS: tuple[str, ...] = ("revised_premise", "revised_hypothesis")
"""Counterfactually-augmented NLI's folders besides `original/` (its `*_combined/` folders repeat these)."""
REVISIONS_PER_ORIGINAL = 2
COUNTERFACTUAL_HEADER = "a header line sentence1 \\t sentence2 \\t gold_label (counterfactually-augmented NLI's layout)"


@dataclass
class ChallengeSet:
    """Pairs of one or more files, their extra fields, and the label set the files use."""

    result: ReadResult
    fields: dict[str, dict[str, Any]]
    """pair id → {field name: value}; a list-valued field holds a tuple of strings."""
    labels: tuple[str, ...]
    files: tuple[Path, ...]
    notes: list[str] = field(default_factory=list)
    contrast_field: str | None = None
    """The field that joins an original to its edits when the layout says so (counterfactually-augmented
    NLI: `CONTRAST_FIELD`); None when only the user can name one."""
    data_name: str | None = None
    """A name for the data when the files' own names do not make one (`<folder>_<split>` for the
    counterfactual layout, whose three files share one name)."""
    label_scheme: str = DEFAULT_LABEL_SCHEME
    """The scheme the gold labels were read in (`LABEL_SCHEMES`)."""
    folded: int = 0
    """Gold labels the 2-way scheme changed (neutral or contradiction read as non-entailment)."""

    @property
    def pairs(self) -> list[Pair]:
        return self.result.pairs

    def source_files(self) -> list[Path]:
        """Every file the pairs were read from: a line-aligned `s1.<split>` brings its `s2.` and `labels.`
        files (what an evaluation's data identity must hash)."""
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
        if self.data_name:
            return self.data_name
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
            raise ValueError(f"{', '.join(map(str, self.files))}: no field {field_name!r}; "
                             f"the fields are: {', '.join(known)}")
        groups = {}
        for pair in self.pairs:
            value = self.fields.get(pair.id, {}).get(match)
            values = value if isinstance(value, tuple) else (() if value in (None, "") else (str(value),))
            groups[pair.id] = tuple(dict.fromkeys(values)) or (NO_VALUE,)
        return groups


def two_way_label(label: str | None) -> str | None:
    """An NLI label in the 2-way scheme: entailment stays, neutral / contradiction / non-entailment become
    non-entailment (so the mapping is idempotent); None (no gold label) stays None. Another label is a
    ValueError: the 2-way scheme is for NLI labels only."""
    if label is None:
        return None
    if label not in TWO_WAY:
        raise ValueError(f"{label!r} is not an NLI label; the 2-way scheme (entailment vs non-entailment) is for "
                         "NLI files")
    return TWO_WAY[label]


def parse_columns(text: str) -> dict[str, str]:
    """`premise=NAME,hypothesis=NAME,label=NAME` (any of the keys of `COLUMN_KEYS`, each once) as {key: column
    name}. A bad value is an InputError saying which item is wrong and what is accepted (the CLI prefixes the
    option)."""
    keys = ", ".join(COLUMN_KEYS)
    named: dict[str, str] = {}
    for item in text.split(","):
        key, equals, name = item.partition("=")
        key, name = key.strip().lower(), name.strip()
        if not equals or not key or not name:
            raise InputError(f"{item.strip()!r} is not KEY=NAME; give e.g. premise=Text,hypothesis=Hypothesis,"
                             f"label=gold_label (keys: {keys}; column names without commas)")
        if key not in COLUMN_KEYS:
            raise InputError(f"unknown key {key!r} in {item.strip()!r}; the keys are {keys}")
        if key in named:
            raise InputError(f"{key} is named twice ({named[key]!r} and {name!r})")
        named[key] = name
    taken = [name for name in named.values() if list(named.values()).count(name) > 1]
    if taken:
        raise InputError(f"column {taken[0]!r} is named for two keys; each key needs its own column")
    return named


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
        raise DataFormatError(str(path), line, LABEL_DESCRIPTION, text)
    return label


def _find_column(names: Sequence[str], candidates: Sequence[str]) -> str | None:
    lowered = {name.strip().lower(): name for name in names}
    return next((lowered[candidate] for candidate in candidates if candidate in lowered), None)


def _named_column(names: Sequence[str], key: str, columns: Mapping[str, str] | None, path: Path) -> str | None:
    """The column for `key`: the one `columns` names (exactly, else ignoring case and surrounding spaces; absent
    from the header → an InputError naming --columns, the file and its columns), else found by `COLUMN_KEYS`."""
    if not columns or key not in columns:
        return _find_column(names, COLUMN_KEYS[key])
    wanted = columns[key]
    found = next((name for name in names if name == wanted), None) or next(
        (name for name in names if name.strip().lower() == wanted.strip().lower()), None)
    if found is None:
        raise InputError(f"--columns {key}={wanted}: {path} has no column {wanted!r}; its columns are "
                         f"{', '.join(repr(name) for name in names)}", str(path))
    return found


def _stem(path: Path) -> str:
    name = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
    prefix, _, split = name.partition(".")
    if prefix in LINE_ALIGNED_PREFIXES and split:
        return f"{path.parent.name}_{split}"
    return name.rsplit(".", 1)[0] if "." in name else name


def _unquoted(value: str) -> str:
    """A TSV cell written with CSV quoting (`"He said ""hi"", then left."`, as pandas writes a cell holding a
    quote) as its text; any other cell unchanged."""
    if len(value) >= 2 and value[0] == value[-1] == '"' and '"' not in value[1:-1].replace('""', ""):
        return value[1:-1].replace('""', '"')
    return value


class _Rows:
    """Collects pairs and fields from (line, record) rows of one file, and the 0-based data row of each pair
    (blank lines are not rows; a row with gold label `-` is: the counterfactual layout counts it)."""

    def __init__(self, path: Path, names: Sequence[str], columns: Mapping[str, str] | None = None):
        self.path = path
        self.names = list(names)
        self.premise = _named_column(names, "premise", columns, path)
        self.hypothesis = _named_column(names, "hypothesis", columns, path)
        self.label = _named_column(names, "label", columns, path)
        self.id = _named_column(names, "id", columns, path)
        self.pairs: list[Pair] = []
        self.fields: dict[int, dict[str, Any]] = {}
        self.rows: dict[int, int] = {}
        self.data_rows = 0
        self.dropped = 0

    @property
    def usable(self) -> bool:
        return self.premise is not None and self.hypothesis is not None

    def add(self, line: int, record: dict[str, Any]) -> None:
        row = self.data_rows
        self.data_rows += 1
        refuse_hostile_cells(record, self.path, line, (self.premise, self.hypothesis))
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
        self.rows[len(self.pairs)] = row
        self.pairs.append(pair)

    def missing(self, line: int = 1, what: str = "a header", layout: str = "") -> DataFormatError:
        """The error for a header (or a first JSON object) without a premise or hypothesis column: the missing
        ones and the names looked for, the columns there are, and `--columns` to name them (`layout`: the
        header a known layout has instead)."""
        missing = [key for key in ("premise", "hypothesis") if getattr(self, key) is None]
        looked_for = " and ".join(f"a {key} column ({' / '.join(COLUMN_KEYS[key])}, any case)" for key in missing)
        found = ", ".join(repr(name) for name in self.names[:30]) + (" …" if len(self.names) > 30 else "")
        return DataFormatError(str(self.path), line, f"{layout or what + ' naming ' + looked_for}; its columns are "
                               f"{found or 'none'} — name them with --columns premise=NAME,hypothesis=NAME,label=NAME")


def refuse_hostile_cells(record: dict[str, Any], path: Path, line: int, sentences: Sequence[str | None]) -> None:
    """A challenge file is typed by hand: a NUL byte in any cell, or a premise / hypothesis of invisible or
    control characters only (no letter or digit: spaCy would still make tokens of it and the model label
    nothing), is a `DataFormatError` naming the file, line and column."""
    for name, value in record.items():
        if isinstance(value, str) and "\0" in value:
            raise DataFormatError(str(path), line, f"a {name} cell without NUL bytes", shown(value, 60))
    for name in sentences:
        value = record.get(name) if name else None
        if isinstance(value, str) and value.strip() and not has_real_word(value):
            raise DataFormatError(str(path), line, f"a {name} with at least one letter or digit",
                                  shown(value, 60))


def _read_delimited(path: Path, delimiter: str, unquote: bool = False,
                    columns: Mapping[str, str] | None = None, layout: str = "") -> _Rows:
    """A header CSV (quoted fields, as csv writes them) or TSV (unquoted, as MultiNLI writes them; with
    `unquote`, cells in CSV quotes are unquoted, as the counterfactual layout needs), its columns found by
    name or named by `columns`; a header without premise/hypothesis columns is an InputError listing them."""
    if delimiter == ",":
        # Lines are decoded one by one (numbered_lines), so a byte that is not UTF-8 is reported with its
        # line; csv joins the lines of a quoted multi-line field itself and counts them in line_num.
        reader = csv.reader((text for _, text in numbered_lines(path, keep_ends=True)), delimiter=",")
        try:
            header = next(reader, None)
            if header is None:
                raise DataFormatError(str(path), 1, "a header line", "an empty file")
            rows = _Rows(path, header, columns)
            if not rows.usable:
                raise rows.missing(layout=layout)
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
    rows = _Rows(path, header, columns)
    if not rows.usable:
        raise rows.missing(layout=layout)
    for line, text in lines:
        if not text.strip():
            continue
        values = text.split(delimiter)
        if unquote:
            values = [_unquoted(value) for value in values]
        if len(values) > len(header):
            raise DataFormatError(str(path), line, f"at most {len(header)} tab-separated columns as in the header, "
                                  f"found {len(values)}")
        rows.add(line, dict(zip(header, values + [""] * (len(header) - len(values)))))
    return rows


def _read_jsonl(path: Path, columns: Mapping[str, str] | None = None) -> _Rows:
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
            rows = _Rows(path, list(record), columns)
            if not rows.usable:
                raise rows.missing(line, "a first JSON object")
        if rows.premise not in record or rows.hypothesis not in record:
            absent = rows.premise if rows.premise not in record else rows.hypothesis
            raise DataFormatError(str(path), line, f"a field {absent!r} as in the first JSON object",
                                  ", ".join(map(str, record)))
        rows.add(line, record)
    if rows is None:
        raise DataFormatError(str(path), None, "at least one JSON object", "an empty file")
    return rows


@dataclass
class _OneFile:
    """One file as read: pairs (ids unique within the file), fields and 0-based data row by pair id, and the
    number of data rows (None for the formats `readers.read_file` reads, which have no extra fields)."""

    result: ReadResult
    fields: dict[str, dict[str, Any]]
    rows: dict[str, int]
    data_rows: int | None


def _read_csv(path: Path, counterfactual: bool, columns: Mapping[str, str] | None) -> _Rows:
    """A header CSV; one whose header names no premise/hypothesis columns is refused (no other reader takes it)."""
    return _read_delimited(path, ",", columns=columns)


def starts_with_quora_row(path: Path) -> bool:
    """The header rule: a TSV is Quora's headerless format (`label \\t question1 \\t question2 \\t id`) only when
    its first line starts with a Quora label (0 or 1); any other first line is a header."""
    first = next(numbered_lines(path), None)
    return first is not None and first[1].split("\t", 1)[0].strip() in QUORA_LABELS


def _read_tsv(path: Path, counterfactual: bool, columns: Mapping[str, str] | None) -> _Rows | None:
    """A header TSV (cells of the counterfactual layout unquoted), or None for Quora's headerless format (see
    `starts_with_quora_row`; with `columns` the first line is the header whatever it holds)."""
    if not columns and starts_with_quora_row(path):
        return None
    return _read_delimited(path, "\t", unquote=counterfactual, columns=columns,
                           layout=COUNTERFACTUAL_HEADER if counterfactual else "")


def _read_jsonl_file(path: Path, counterfactual: bool, columns: Mapping[str, str] | None) -> _Rows:
    return _read_jsonl(path, columns)


def _no_fields(path: Path, counterfactual: bool, columns: Mapping[str, str] | None) -> None:
    """Formats without extra fields (and without a header `columns` could name): `readers.read_file` reads them."""
    if columns:
        raise InputError(f"--columns names the columns of a header; {path} is line-aligned (s1. / s2. / labels. "
                         "files, one sentence a line) and has none", str(path))
    return None


@dataclass(frozen=True)
class ChallengeFormat:
    """One file format a challenge set may come in: how its name is recognised (a `.gz` suffix looked
    through) and how its pairs and per-pair fields are read."""

    name: str
    suffixes: tuple[str, ...]
    """File name endings (with the dot) that say the format; the upload widget offers these."""
    description: str
    read: Callable[[Path, bool, Mapping[str, str] | None], _Rows | None]
    """(path, counterfactual layout?, columns named by the user or None) → its rows with their fields, or None:
    `readers.read_file` reads it (pairs only)."""
    prefixes: tuple[str, ...] = ()
    """Name prefixes that say the format instead (`s1.<split>`)."""

    def matches(self, name: str) -> bool:
        """Whether a file name (without `.gz`) is in this format."""
        prefix, _, rest = name.partition(".")
        return (prefix in self.prefixes and bool(rest)) or (bool(self.suffixes) and name.endswith(self.suffixes))


COMPRESSED_SUFFIX = ".gz"
"""Any format may be gzip-compressed: the suffix is looked through."""

FORMATS: dict[str, ChallengeFormat] = {f.name: f for f in (
    ChallengeFormat("line-aligned", (), "line-aligned s1.<split> / s2.<split> / labels.<split> files (no extra "
                    "fields)", _no_fields, prefixes=LINE_ALIGNED_PREFIXES),
    ChallengeFormat("csv", (".csv",), "a CSV with a header naming premise, hypothesis and label columns (ANLI's "
                    "annotated CSV; quoted multi-line fields)", _read_csv),
    ChallengeFormat("tsv", (".tsv", ".txt"), "a tab-separated file with such a header (ConjNLI, HANS, MultiNLI/SNLI "
                    ".txt, counterfactually-augmented NLI), or Quora's headerless TSV (first line starting with "
                    "a label 0 or 1)", _read_tsv),
    ChallengeFormat("jsonl", (".jsonl",), "JSON lines with premise, hypothesis and label fields (SNLI, MultiNLI, "
                    "the NLI stress tests)", _read_jsonl_file),
)}
"""Every format a challenge file may come in, tried in this order; the reader (`_read_one`), the app's upload
widget and the CLI's help read it. A name no format matches goes to `readers.read_file`, which names what it takes."""


def challenge_format(file_name: str) -> ChallengeFormat | None:
    """The format a file's name says (a `.gz` suffix looked through), or None."""
    name = file_name.removesuffix(COMPRESSED_SUFFIX)
    return next((f for f in FORMATS.values() if f.matches(name)), None)


def upload_types() -> list[str]:
    """File extensions (without the dot) an upload of a challenge file may have."""
    return [*dict.fromkeys(s.lstrip(".") for f in FORMATS.values() for s in f.suffixes), COMPRESSED_SUFFIX.lstrip(".")]


def _read_one(path: Path, counterfactual: bool = False, columns: Mapping[str, str] | None = None) -> _OneFile:
    file_format = challenge_format(path.name)
    rows = file_format.read(path, counterfactual, columns) if file_format else None
    if rows is None and counterfactual:
        raise DataFormatError(str(path), 1, COUNTERFACTUAL_HEADER)
    if rows is None:  # line-aligned, Quora, or a format read_file names in its error
        result = read_file(path)
        return _OneFile(result, {pair.id: {} for pair in result.pairs}, {}, None)
    result = make_ids_unique(ReadResult(pairs=rows.pairs, dropped_no_gold=rows.dropped, path=str(path)))
    return _OneFile(result, {pair.id: rows.fields[index] for index, pair in enumerate(result.pairs)},
                    {pair.id: rows.rows[index] for index, pair in enumerate(result.pairs)}, rows.data_rows)


# ------------------------------------------------------------------- counterfactually-augmented NLI


def is_counterfactual_folder(folder: Path) -> bool:
    """True when `folder` holds `original/` or a revision folder in counterfactually-augmented NLI's layout."""
    return folder.is_dir() and any((folder / name).is_dir() for name in (ORIGINAL_FOLDER, *REVISION_FOLDERS)) \
        and any((folder / name).is_dir() for name in REVISION_FOLDERS)


def counterfactual_files(folder: str | Path, split: str | None = None) -> list[Path]:
    """The files of one split of a counterfactually-augmented folder (`original/<split>.tsv`,
    `revised_premise/<split>.tsv`, `revised_hypothesis/<split>.tsv`, those present). `split` may be left
    out when the folders share only one; otherwise an InputError lists the splits there."""
    folder = Path(folder)
    present = [folder / name for name in (ORIGINAL_FOLDER, *REVISION_FOLDERS) if (folder / name).is_dir()]
    splits = [sorted(p.name[: -len(".tsv")] for p in kind.iterdir() if p.name.endswith(".tsv") and p.is_file())
              for kind in present]
    shared = sorted(set.intersection(*map(set, splits))) if splits else []
    if split is None:
        if len(shared) != 1:
            found = ", ".join(shared) or "none"
            raise InputError(f"{folder}: a counterfactually-augmented folder with {len(shared)} split(s) in every "
                             f"one of {', '.join(p.name for p in present)} ({found}); give --split NAME", str(folder))
        split = shared[0]
    files = [kind / f"{split}.tsv" for kind in present]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise InputError(f"{folder}: split {split!r} lacks {', '.join(missing)} (splits in every folder: "
                         f"{', '.join(shared) or 'none'})", str(folder))
    return files


def counterfactual_layout(files: Sequence[Path]) -> dict[Path, str] | None:
    """{file: `original` / `revised_premise` / `revised_hypothesis`} when the files are one split of the
    counterfactual layout (each in its own one of those folders, one file name, at least one revision), else
    None."""
    kinds = {path: path.parent.name for path in files}
    if not files or any(kind not in (ORIGINAL_FOLDER, *REVISION_FOLDERS) for kind in kinds.values()):
        return None
    if len(set(kinds.values())) < len(files) or len({path.name for path in files}) != 1:
        return None
    return kinds if set(kinds.values()) & set(REVISION_FOLDERS) else None


def _contrast_groups(reads: dict[Path, _OneFile], kinds: dict[Path, str]) -> dict[Path, dict[str, str]]:
    """Per file, pair id → its original's 1-based row: row i of the original, rows 2i and 2i+1 of a revision.
    The row counts must fit (a revision file has two rows per original), or an InputError names the file."""
    originals = next((read.data_rows for path, read in reads.items() if kinds[path] == ORIGINAL_FOLDER), None)
    for path, read in reads.items():
        if kinds[path] == ORIGINAL_FOLDER:
            continue
        expected = None if originals is None else REVISIONS_PER_ORIGINAL * originals
        if (expected is not None and read.data_rows != expected) or read.data_rows % REVISIONS_PER_ORIGINAL:
            wanted = (f"{expected} rows ({REVISIONS_PER_ORIGINAL} for each of the {originals} originals)"
                      if expected is not None else f"a multiple of {REVISIONS_PER_ORIGINAL} rows")
            raise InputError(f"{path}: expected {wanted}, found {read.data_rows}; rows 2i and 2i+1 of a revised "
                             "file must be the revisions of original row i", str(path))
    return {path: {pair_id: str(row + 1 if kinds[path] == ORIGINAL_FOLDER else row // REVISIONS_PER_ORIGINAL + 1)
                   for pair_id, row in read.rows.items()} for path, read in reads.items()}


def _given_files(paths: Sequence[str | Path], split: str | None) -> tuple[Path, ...]:
    """The files to read, once each: a counterfactual folder stands for its files of `split`; each must exist."""
    if not paths:
        raise ValueError("no challenge file given")
    expanded: list[Path] = []
    for given in map(Path, paths):
        expanded += counterfactual_files(given, split) if is_counterfactual_folder(given) else [given]
    files = tuple(dict.fromkeys(expanded))
    for path in files:
        require_file(path)
    return files


def read_challenge_files(paths: Sequence[str | Path], split: str | None = None, *,
                         label_scheme: str = DEFAULT_LABEL_SCHEME,
                         columns: Mapping[str, str] | None = None) -> ChallengeSet:
    """Read one or more challenge files (see the module docstring). With several files, each pair id is
    prefixed with its file's name (`<file>:<id>`) so that ids stay unique; every pair gets a `file` field.
    A folder in the counterfactual layout stands for its files of `split` (needed only when it holds
    several splits); its files, given or found, get the `contrast_group` field. `columns` ({key: column},
    see `parse_columns`) names columns of every file's header; `label_scheme` "2way" reads the gold labels as
    entailment vs non-entailment (`in_two_way`)."""
    if label_scheme not in LABEL_SCHEMES:
        raise InputError(f"label scheme {label_scheme!r}: use one of {', '.join(LABEL_SCHEMES)}")
    files = _given_files(paths, split)
    kinds = counterfactual_layout(files)
    stems = [kinds[path] if kinds else _stem(path) for path in files]
    if len(set(stems)) < len(stems):
        raise InputError(f"two challenge files share the name {sorted(s for s in stems if stems.count(s) > 1)[0]!r} "
                         f"({', '.join(map(str, files))}); their pairs could not be told apart")
    reads = {path: _read_one(path, counterfactual=kinds is not None, columns=columns) for path in files}
    contrast = _contrast_groups(reads, kinds) if kinds else {}
    pairs: list[Pair] = []
    fields: dict[str, dict[str, Any]] = {}
    dropped = 0
    notes: list[str] = []
    ambiguous: list[str] = []
    for (path, read), stem in zip(reads.items(), stems):
        result = read.result
        dropped += result.dropped_no_gold
        notes += result.notes()
        ambiguous += result.ambiguous_ids
        for pair in result.pairs:
            new_id = pair.id if len(files) == 1 else f"{stem}:{pair.id}"
            fields[new_id] = {**read.fields[pair.id], FILE_FIELD: stem}
            if kinds:
                fields[new_id][CONTRAST_FIELD] = contrast[path][pair.id]
            pairs.append(replace(pair, id=new_id))
    folded = 0
    if label_scheme == "2way":
        pairs, folded, note = in_two_way(pairs, files)
        notes.append(note)
    labels = BINARY_LABELS if label_scheme == "2way" else _label_set(pairs, files)
    result = ReadResult(pairs=pairs, dropped_no_gold=dropped, path=", ".join(map(str, files)),
                        ambiguous_ids=tuple(ambiguous))
    if not pairs:
        raise InputError(f"{result.path}: no pairs to evaluate"
                         + (f" ({dropped} pair(s) have gold label '-' and were left out)" if dropped else ""))
    if not kinds:
        return ChallengeSet(result, fields, labels, files, notes, label_scheme=label_scheme, folded=folded)
    counts = {kind: reads[path].data_rows for path, kind in kinds.items()}
    notes.append("counterfactually-augmented NLI layout (Kaushik et al. 2020): "
                 + ", ".join(f"{count:,} rows of {kind}" for kind, count in counts.items())
                 + f"; field {CONTRAST_FIELD} joins each original to its revisions (rows 2i and 2i+1 of a revised "
                 "file belong to original row i)")
    return ChallengeSet(result, fields, labels, files, notes, contrast_field=CONTRAST_FIELD,
                        data_name=f"{files[0].parent.parent.name or 'counterfactual'}_{files[0].stem}",
                        label_scheme=label_scheme, folded=folded)


def in_two_way(pairs: Sequence[Pair], files: Sequence[Path]) -> tuple[list[Pair], int, str]:
    """The pairs with their gold labels in the 2-way scheme (`two_way_label`), how many changed, and a note
    saying so. A paraphrase label is an InputError naming `--label-scheme 2way` and where it first appears."""
    paraphrase = next((pair for pair in pairs if pair.label in PARAPHRASE_LABELS), None)
    if paraphrase is not None:
        raise InputError(f"{', '.join(map(str, files))}: --label-scheme 2way scores entailment vs non-entailment, "
                         f"but this is a paraphrase file ({paraphrase.label!r} on line {paraphrase.line} of "
                         f"{paraphrase.source}); leave the scheme at 3way", str(files[0]))
    changed = {"neutral": 0, "contradiction": 0}
    folded = []
    for pair in pairs:
        if pair.label in changed:
            changed[pair.label] += 1
        folded.append(replace(pair, label=two_way_label(pair.label)))
    note = (f"label scheme 2way (entailment vs non-entailment): {changed['neutral']:,} neutral and "
            f"{changed['contradiction']:,} contradiction gold label(s) read as non-entailment, and a 3-way model's "
            "neutral and contradiction answers count as non-entailment")
    return folded, sum(changed.values()), note


def _label_set(pairs: Sequence[Pair], files: Sequence[Path]) -> tuple[str, ...]:
    """The label set the files use: paraphrase, HANS's 2-way, or 3-way NLI. A mix of tasks (or of 2-way and
    3-way NLI) is an InputError naming where each kind first appears."""
    def first(kind: set[str]) -> str:
        pair = next(pair for pair in pairs if pair.label in kind)
        return f"{pair.label!r} on line {pair.line} of {pair.source}"

    found = {pair.label for pair in pairs} - {None}
    paraphrase = found & set(PARAPHRASE_LABELS)
    if paraphrase:
        nli = found - paraphrase
        if nli:
            raise InputError(f"{', '.join(map(str, files))}: labels mix paraphrase ({first(paraphrase)}) and NLI "
                             f"({first(nli)}); a file is either NLI or paraphrase (0 / 1 read as paraphrase, "
                             "1 = duplicate)", str(files[0]))
        return PARAPHRASE_LABELS
    if "non-entailment" in found:
        mixed = found & {"neutral", "contradiction"}
        if mixed:
            raise InputError(f"{', '.join(map(str, files))}: labels mix non-entailment with {sorted(mixed)}; "
                             "a file is either 3-way NLI or 2-way (entailment / non-entailment, as HANS); to score "
                             "it entailment vs non-entailment give --label-scheme 2way", str(files[0]))
        return BINARY_LABELS
    return NLI_LABELS

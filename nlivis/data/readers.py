"""Readers for the official sentence-pair formats, each returning a `ReadResult` of `Pair` records.

Formats:
- MultiNLI 1.0 / SNLI 1.0 `.jsonl` (one JSON object a line).
- MultiNLI 1.0 / SNLI 1.0 `.txt` and any tab-separated file with the same column names (XNLI-en `.tsv`):
  a header line, columns picked by name.
- Quora question pairs, Wang et al. split: `label \\t question1 \\t question2 \\t id`, no header.
- Line-aligned folders: `s1.<split>`, `s2.<split>`, `labels.<split>` (e-SNLI, MultiNLI hard subsets).

Every file may be gzipped. A line that does not fit its format raises `DataFormatError` naming the file,
the line and what was expected; the only pairs left out on purpose are those with gold label `-`
(no annotator consensus), which are counted in `ReadResult.dropped_no_gold`.
"""
from __future__ import annotations

import codecs
import gzip
import json
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS, DataFormatError, InputError, Pair, ReadResult

NO_GOLD_LABEL = "-"
"""Gold label of a pair whose annotators did not agree; such pairs are dropped, as in the papers."""

REQUIRED_COLUMNS: tuple[str, ...] = ("gold_label", "sentence1", "sentence2")
ANNOTATOR_LABEL_COLUMNS: tuple[str, ...] = ("label1", "label2", "label3", "label4", "label5")
QUORA_LABELS: dict[str, str] = {"0": PARAPHRASE_LABELS[0], "1": PARAPHRASE_LABELS[1]}
LINE_ALIGNED_PREFIXES: tuple[str, ...] = ("s1", "s2", "labels")


def open_text(path: str | Path) -> TextIO:
    """Open a UTF-8 text file for reading, gunzipping it when its name ends in `.gz`.

    Lines end only at `\\n` (a stray `\\r` inside a sentence does not split it); a leading BOM is ignored.
    """
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="\n")
    return open(path, encoding="utf-8-sig", newline="\n")


def _open_bytes(path: Path) -> BinaryIO:
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def numbered_lines(path: str | Path, keep_ends: bool = False) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its line ending, or with it when `keep_ends`).

    Lines are decoded one by one, so a byte that is not UTF-8 is reported on its own line.
    """
    path = Path(path)
    line_number = 0
    with _open_bytes(path) as handle:
        try:
            for line_number, raw in enumerate(handle, start=1):
                if line_number == 1:
                    raw = raw.removeprefix(codecs.BOM_UTF8)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    bad_bytes = raw[error.start : error.end]
                    raise DataFormatError(str(path), line_number, "UTF-8 text", f"the bytes {bad_bytes!r}") from None
                yield line_number, line if keep_ends else line.rstrip("\n").rstrip("\r")
        except (OSError, EOFError, zlib.error) as error:  # truncated or corrupt gzip stream
            raise DataFormatError(str(path), line_number + 1, "a readable (gzip) stream", str(error)) from None


def load_json(text: str) -> Any:
    """`json.loads`, with every way it fails on hostile text raised as `json.JSONDecodeError`: besides bad
    syntax, an integer of more than 4,300 digits (Python's ValueError) and nesting deeper than the recursion
    limit (RecursionError), so a reader that catches JSONDecodeError names the line for those too."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except ValueError as error:  # int_max_str_digits
        raise json.JSONDecodeError(str(error).split(";")[0], text, 0) from None


def _check_label(label: str, allowed: tuple[str, ...], path: Path, line: int, what: str = "gold label") -> str:
    if label not in allowed:
        raise DataFormatError(str(path), line, f"a {what} in {allowed}", label)
    return label


def checked_sentence(text: object, name: str, path: Path, line: int) -> str:
    """`text` when it is a non-empty string, else a `DataFormatError` naming the field, file and line."""
    if not isinstance(text, str) or not text.strip():
        raise DataFormatError(str(path), line, f"a non-empty {name}", None if text is None else str(text))
    return text


def make_ids_unique(result: ReadResult) -> ReadResult:
    """The one rule for repeated pair ids, shared by every reader and the predictions files written from
    them: a pair id the file gives to several pairs would join predictions, tags and comparisons to the
    wrong pair, so every pair carrying it becomes `<id>-line<N>` (N its line), and
    `ReadResult.ambiguous_ids` says so. Predictions files are then unique by construction, which
    `analysis.predictions.read_predictions` requires."""
    counts = Counter(pair.id for pair in result.pairs)
    repeated = {pair_id for pair_id, count in counts.items() if count > 1}
    if not repeated:
        return result
    taken = {pair.id for pair in result.pairs if pair.id not in repeated}
    pairs: list[Pair] = []
    for pair in result.pairs:
        if pair.id in repeated:
            new_id, suffix = f"{pair.id}-line{pair.line}", 2
            while new_id in taken:  # only if the file itself uses such an id
                new_id, suffix = f"{pair.id}-line{pair.line}.{suffix}", suffix + 1
            taken.add(new_id)
            pair = replace(pair, id=new_id)
        pairs.append(pair)
    return replace(result, pairs=pairs, ambiguous_ids=tuple(sorted(set(result.ambiguous_ids) | repeated)))


def read_nli_jsonl(path: str | Path) -> ReadResult:
    """MultiNLI 1.0 / SNLI 1.0 `.jsonl`: gold_label, sentence1, sentence2, and optionally pairID, genre,
    annotator_labels."""
    path = Path(path)
    pairs: list[Pair] = []
    dropped = blank = 0
    for line_number, line in numbered_lines(path):
        if not line.strip():
            blank += 1
            continue
        try:
            record = load_json(line)
        except json.JSONDecodeError as error:
            raise DataFormatError(str(path), line_number, f"a JSON object ({error.msg})", line) from None
        if not isinstance(record, dict):
            raise DataFormatError(str(path), line_number, "a JSON object", line)
        missing = [key for key in REQUIRED_COLUMNS if key not in record]
        if missing:
            raise DataFormatError(str(path), line_number, f"the fields {list(REQUIRED_COLUMNS)} (missing {missing})", line)
        gold = record["gold_label"]
        if gold == NO_GOLD_LABEL:
            dropped += 1
            continue
        annotator_labels = record.get("annotator_labels") or []
        if not isinstance(annotator_labels, list):
            raise DataFormatError(str(path), line_number, "annotator_labels as a list", str(annotator_labels))
        genre = record.get("genre")
        pair_id = record.get("pairID")
        pairs.append(
            Pair(
                id=str(pair_id) if pair_id not in (None, "") else str(line_number),
                premise=checked_sentence(record["sentence1"], "sentence1", path, line_number),
                hypothesis=checked_sentence(record["sentence2"], "sentence2", path, line_number),
                label=_check_label(str(gold), NLI_LABELS, path, line_number),
                genre=str(genre) if genre else None,
                annotator_labels=tuple(
                    _check_label(str(label), NLI_LABELS, path, line_number, "annotator label") for label in annotator_labels
                ),
                source=str(path),
                line=line_number,
            )
        )
    return make_ids_unique(ReadResult(pairs=pairs, dropped_no_gold=dropped, path=str(path), skipped_blank_lines=blank))


def read_nli_tsv(path: str | Path) -> ReadResult:
    """Tab-separated file with a header naming MultiNLI's / SNLI's columns (their `.txt`, XNLI-en `.tsv`).

    Columns are found by name: gold_label, sentence1, sentence2 are required; pairID, genre and
    label1..label5 are used when present; any other column (parses, promptID, captionID) is ignored.
    Without a pairID column the id is the 1-based line number in the file (the header is line 1).
    Fields are not quoted in these files, so a quote character is ordinary text.
    """
    path = Path(path)
    lines = numbered_lines(path)
    header_line = next(lines, None)
    if header_line is None:
        raise DataFormatError(str(path), 1, f"a header line naming the columns {list(REQUIRED_COLUMNS)}", "an empty file")
    columns = _NliColumns.from_header(path, header_line[1])
    pairs: list[Pair] = []
    dropped = blank = 0
    for line_number, line in lines:
        if not line.strip():
            blank += 1
            continue
        fields = line.split("\t")
        if not columns.shortest_row <= len(fields) <= columns.count:
            raise DataFormatError(
                str(path), line_number, f"{columns.count} tab-separated columns as in the header, found {len(fields)}", line
            )
        if fields[columns.gold] == NO_GOLD_LABEL:
            dropped += 1
            continue
        pairs.append(columns.pair(fields, path, line_number))
    return make_ids_unique(ReadResult(pairs=pairs, dropped_no_gold=dropped, path=str(path), skipped_blank_lines=blank))


@dataclass(frozen=True)
class _NliColumns:
    """Where `read_nli_tsv` finds each field of a row (indices into the tab-separated fields), from the header."""

    count: int
    gold: int
    premise: int
    hypothesis: int
    pair_id: int | None
    genre: int | None
    annotators: tuple[int, ...]
    shortest_row: int
    """Rows may omit trailing empty annotator-label columns (label2..label5 are blank for most training
    pairs); every other column must be there."""

    @classmethod
    def from_header(cls, path: Path, header_line: str) -> _NliColumns:
        header = header_line.split("\t")
        missing = [name for name in REQUIRED_COLUMNS if name not in header]
        if missing:
            raise DataFormatError(str(path), 1, f"a tab-separated header with the columns {list(REQUIRED_COLUMNS)} (missing {missing})", header_line)
        column = {name: header.index(name) for name in header}
        gold_at, premise_at, hypothesis_at = (column[name] for name in REQUIRED_COLUMNS)
        return cls(count=len(header), gold=gold_at, premise=premise_at, hypothesis=hypothesis_at,
                   pair_id=column.get("pairID"), genre=column.get("genre"),
                   annotators=tuple(column[name] for name in ANNOTATOR_LABEL_COLUMNS if name in column),
                   shortest_row=1 + max(index for index in range(len(header))
                                        if header[index] not in ANNOTATOR_LABEL_COLUMNS[1:]))

    def pair(self, fields: list[str], path: Path, line_number: int) -> Pair:
        """The pair of one row with a gold label (sentences and labels checked, naming file and line)."""
        pair_id = fields[self.pair_id] if self.pair_id is not None else ""
        genre = fields[self.genre] if self.genre is not None else ""
        annotator_labels = tuple(
            _check_label(fields[index], NLI_LABELS, path, line_number, "annotator label")
            for index in self.annotators
            if index < len(fields) and fields[index]
        )
        return Pair(
            id=pair_id or str(line_number),
            premise=checked_sentence(fields[self.premise], "sentence1", path, line_number),
            hypothesis=checked_sentence(fields[self.hypothesis], "sentence2", path, line_number),
            label=_check_label(fields[self.gold], NLI_LABELS, path, line_number),
            genre=genre or None,
            annotator_labels=annotator_labels,
            source=str(path),
            line=line_number,
        )


def read_quora_tsv(path: str | Path) -> ReadResult:
    """Quora question pairs in Wang et al.'s split: `label \\t question1 \\t question2 \\t pair_id`, no header;
    label 1 means duplicate."""
    path = Path(path)
    pairs: list[Pair] = []
    blank = 0
    for line_number, line in numbered_lines(path):
        if not line.strip():
            blank += 1
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise DataFormatError(str(path), line_number, f"4 tab-separated columns (label, question1, question2, id), found {len(fields)}", line)
        label, question1, question2, pair_id = fields
        if label not in QUORA_LABELS:
            raise DataFormatError(str(path), line_number, "a label 0 or 1", label)
        pairs.append(
            Pair(
                id=pair_id or str(line_number),
                premise=checked_sentence(question1, "question1", path, line_number),
                hypothesis=checked_sentence(question2, "question2", path, line_number),
                label=QUORA_LABELS[label],
                source=str(path),
                line=line_number,
            )
        )
    return make_ids_unique(ReadResult(pairs=pairs, path=str(path), skipped_blank_lines=blank))


def line_aligned_files(folder: str | Path, split: str, compressed: bool = False) -> tuple[Path, Path, Path]:
    """The premise, hypothesis and label files of one split of a line-aligned folder."""
    suffix = ".gz" if compressed else ""
    return tuple(Path(folder) / f"{prefix}.{split}{suffix}" for prefix in LINE_ALIGNED_PREFIXES)  # type: ignore[return-value]


def read_line_aligned(folder: str | Path, split: str, compressed: bool = False) -> ReadResult:
    """Line-aligned NLI files `s1.<split>`, `s2.<split>`, `labels.<split>` (one item a line, same order).

    The id is the 1-based line number; pairs labelled `-` are dropped and counted like elsewhere.
    """
    premise_path, hypothesis_path, label_path = line_aligned_files(folder, split, compressed)
    absent = [path.name for path in (premise_path, hypothesis_path, label_path) if not path.is_file()]
    if absent:
        raise FileNotFoundError(f"{folder}: line-aligned split {split!r} needs {', '.join(p.name for p in (premise_path, hypothesis_path, label_path))}; missing {', '.join(absent)}")
    premises = [line for _, line in numbered_lines(premise_path)]
    hypotheses = [line for _, line in numbered_lines(hypothesis_path)]
    labels = [line for _, line in numbered_lines(label_path)]
    if not len(premises) == len(hypotheses) == len(labels):
        raise DataFormatError(
            str(folder),
            None,
            "the same number of lines in the line-aligned files",
            f"{premise_path.name}: {len(premises)}, {hypothesis_path.name}: {len(hypotheses)}, {label_path.name}: {len(labels)}",
        )
    pairs: list[Pair] = []
    dropped = 0
    for index, (premise, hypothesis, label) in enumerate(zip(premises, hypotheses, labels)):
        line_number = index + 1
        label = label.strip()
        if label == NO_GOLD_LABEL:
            dropped += 1
            continue
        pairs.append(
            Pair(
                id=str(line_number),
                premise=checked_sentence(premise, "premise", premise_path, line_number),
                hypothesis=checked_sentence(hypothesis, "hypothesis", hypothesis_path, line_number),
                label=_check_label(label, NLI_LABELS, label_path, line_number),
                source=str(premise_path),
                line=line_number,
            )
        )
    return ReadResult(pairs=pairs, dropped_no_gold=dropped, path=str(premise_path))


def require_file(path: Path) -> None:
    """A data file to read must be a file: a folder is an `InputError` saying which file it wants, a missing
    path a FileNotFoundError."""
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give a data file (for a line-aligned split, its s1.<split> "
                         "file)", str(path))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")


def _has_nli_header(path: Path) -> bool:
    first_line = next(numbered_lines(path), (1, ""))[1]
    return all(name in first_line.split("\t") for name in REQUIRED_COLUMNS)


def read_file(path: str | Path) -> ReadResult:
    """Read any supported file, choosing the reader by its name (a `.gz` suffix is looked through):

    `*.jsonl` → MultiNLI/SNLI JSON lines; `*.txt` → MultiNLI/SNLI tab-separated with header;
    `*.tsv` → the same when its first line names gold_label/sentence1/sentence2, else Quora;
    `s1.<split>` (or `s2.`/`labels.`) → the line-aligned split in that folder.
    """
    path = Path(path)
    require_file(path)
    compressed = path.suffix == ".gz"
    name = path.name[: -len(".gz")] if compressed else path.name
    prefix, _, split = name.partition(".")
    if prefix in LINE_ALIGNED_PREFIXES and split:
        return read_line_aligned(path.parent, split, compressed)
    if name.endswith(".jsonl"):
        return read_nli_jsonl(path)
    if name.endswith(".txt"):
        return read_nli_tsv(path)
    if name.endswith(".tsv"):
        return read_nli_tsv(path) if _has_nli_header(path) else read_quora_tsv(path)
    raise DataFormatError(
        str(path),
        None,
        "a .jsonl, .txt or .tsv file (optionally .gz), or a line-aligned s1.<split> / s2.<split> / labels.<split> file",
        path.name,
    )

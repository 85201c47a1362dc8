"""Readers: every format on hand-written fixtures, gzip, dropped `-` labels, and errors naming file and line."""
from __future__ import annotations

import dataclasses
import gzip
import shutil
import json
from pathlib import Path

import pytest

from nlivis.data.readers import open_text, read_file, read_line_aligned
from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS, DataFormatError

FIXTURE_FILES = ("mnli_sample.jsonl", "snli_sample.jsonl", "snli_sample.txt", "mnli_sample.txt", "xnli_like.tsv", "quora_sample.tsv")


@pytest.fixture
def data_fixtures(fixtures: Path) -> Path:
    return fixtures / "data"


def without_source(pairs):
    """Pairs with the file-pointing field cleared, to compare reads of the same content in two files."""
    return [dataclasses.replace(pair, source=None) for pair in pairs]


def test_multinli_jsonl(data_fixtures: Path):
    result = read_file(data_fixtures / "mnli_sample.jsonl")
    assert [pair.id for pair in result.pairs] == ["1001e", "1002c", "1003n"]
    assert result.dropped_no_gold == 1
    first, second, third = result.pairs
    assert first.premise == "A cat sleeps on the warm windowsill."
    assert first.hypothesis == "An animal is resting."
    assert first.label == "entailment"
    assert first.genre == "fiction"
    assert first.annotator_labels == ("entailment", "entailment", "neutral", "entailment", "entailment")
    assert second.annotator_labels == ("contradiction",)
    assert third.premise == 'She said the report was "mostly finished".'
    assert [pair.line for pair in result.pairs] == [1, 3, 4]
    assert first.source == str(data_fixtures / "mnli_sample.jsonl")


def test_snli_jsonl_has_no_genre(data_fixtures: Path):
    result = read_file(data_fixtures / "snli_sample.jsonl")
    assert [pair.label for pair in result.pairs] == ["neutral", "contradiction"]
    assert all(pair.genre is None for pair in result.pairs)
    assert result.pairs[1].id == "501.jpg#0r1c"
    assert result.dropped_no_gold == 0


def test_snli_txt_columns_by_name(data_fixtures: Path):
    result = read_file(data_fixtures / "snli_sample.txt")
    assert [pair.id for pair in result.pairs] == ["77.jpg#1r1e", "78.jpg#2r1c"]
    assert result.dropped_no_gold == 1
    assert result.pairs[0].annotator_labels == ("entailment", "entailment", "entailment", "neutral", "entailment")
    # Empty label2..label5 columns are not annotator labels.
    assert result.pairs[1].annotator_labels == ("contradiction",)
    assert result.pairs[1].premise == 'A woman reads a "big" book.'
    assert [pair.line for pair in result.pairs] == [2, 4]


def test_multinli_txt_rows_may_omit_trailing_annotator_columns(data_fixtures: Path):
    result = read_file(data_fixtures / "mnli_sample.txt")
    assert [pair.id for pair in result.pairs] == ["2001n", "2002e"]
    assert [pair.genre for pair in result.pairs] == ["government", "telephone"]
    assert result.pairs[0].annotator_labels == ("neutral",)
    assert len(result.pairs[1].annotator_labels) == 5
    assert result.dropped_no_gold == 1


def test_jsonl_and_txt_of_the_same_pairs_agree(tmp_path: Path):
    header = "gold_label\tsentence1\tsentence2\tpairID\tgenre\tlabel1"
    (tmp_path / "pairs.txt").write_text(f"{header}\nneutral\tA b.\tC d.\t7n\tslate\tneutral\n")
    (tmp_path / "pairs.jsonl").write_text(
        '{"gold_label": "neutral", "sentence1": "A b.", "sentence2": "C d.", "pairID": "7n", "genre": "slate", '
        '"annotator_labels": ["neutral"]}\n'
    )
    from_txt, from_jsonl = read_file(tmp_path / "pairs.txt").pairs, read_file(tmp_path / "pairs.jsonl").pairs
    assert [dataclasses.replace(pair, source=None, line=None) for pair in from_txt] == [
        dataclasses.replace(pair, source=None, line=None) for pair in from_jsonl
    ]


def test_a_repeated_pair_id_is_made_unique_for_every_pair_carrying_it(tmp_path: Path):
    """MultiNLI dev mismatched as distributed repeats 27 pairIDs; joins by id must not mix two pairs."""
    rows = [("7c", "A man sleeps.", "A man is awake."), ("8e", "A dog runs.", "A dog moves."),
            ("7c", "It rains.", "It is dry."), ("-", "ignored", "ignored")]
    (tmp_path / "dev.jsonl").write_text("".join(
        json.dumps({"gold_label": "contradiction" if pid.endswith("c") else "entailment" if pid != "-" else "-",
                    "pairID": pid, "sentence1": p, "sentence2": h}) + "\n" for pid, p, h in rows), encoding="utf-8")
    (tmp_path / "dev.txt").write_text("gold_label\tsentence1\tsentence2\tpairID\n" + "".join(
        f"{'contradiction' if pid.endswith('c') else 'entailment'}\t{p}\t{h}\t{pid}\n" for pid, p, h in rows[:3]),
        encoding="utf-8")
    from_jsonl, from_txt = read_file(tmp_path / "dev.jsonl"), read_file(tmp_path / "dev.txt")
    assert [p.id for p in from_jsonl.pairs] == ["7c-line1", "8e", "7c-line3"] and from_jsonl.ambiguous_ids == ("7c",)
    assert from_jsonl.dropped_no_gold == 1
    assert [p.id for p in from_txt.pairs] == ["7c-line2", "8e", "7c-line4"] and from_txt.ambiguous_ids == ("7c",)


def test_tsv_with_multinli_column_names_and_extra_columns(data_fixtures: Path):
    result = read_file(data_fixtures / "xnli_like.tsv")
    # No pairID column: the id is the line number in the file (header = line 1), the same as `line`.
    assert [pair.id for pair in result.pairs] == ["2", "4"]
    assert [pair.line for pair in result.pairs] == [2, 4]
    assert [pair.genre for pair in result.pairs] == ["letters", "nineeleven"]
    assert [pair.label for pair in result.pairs] == ["entailment", "contradiction"]
    assert result.pairs[1].hypothesis == "The flight was cancelled."
    assert result.dropped_no_gold == 1


def test_header_with_only_the_required_columns(tmp_path: Path):
    path = tmp_path / "minimal.txt"
    path.write_text("sentence2\tgold_label\tsentence1\nIt rains.\tneutral\tClouds gather.\n")
    (pair,) = read_file(path).pairs
    assert (pair.premise, pair.hypothesis, pair.label, pair.id, pair.genre, pair.annotator_labels) == (
        "Clouds gather.", "It rains.", "neutral", "2", None, ()
    )


def test_quora_labels_are_named(data_fixtures: Path):
    result = read_file(data_fixtures / "quora_sample.tsv")
    assert [pair.label for pair in result.pairs] == ["duplicate", "not_duplicate", "not_duplicate"]
    assert set(pair.label for pair in result.pairs) <= set(PARAPHRASE_LABELS)
    assert [pair.id for pair in result.pairs] == ["9001", "9002", "9003"]
    assert result.pairs[0].premise == "How do I learn to cook rice ?"


def test_line_aligned_folder(data_fixtures: Path):
    folder = data_fixtures / "line_aligned"
    result = read_line_aligned(folder, "dev")
    assert [pair.id for pair in result.pairs] == ["1", "2"]
    assert [pair.label for pair in result.pairs] == ["entailment", "contradiction"]
    assert result.pairs[1].premise == "A chef cuts onions ."
    assert result.dropped_no_gold == 1
    assert without_source(read_file(folder / "s1.dev").pairs) == without_source(result.pairs)
    assert without_source(read_file(folder / "labels.dev").pairs) == without_source(result.pairs)


def test_line_aligned_count_mismatch_names_the_files(tmp_path: Path):
    (tmp_path / "s1.dev").write_text("A b .\nC d .\n")
    (tmp_path / "s2.dev").write_text("E f .\n")
    (tmp_path / "labels.dev").write_text("neutral\nneutral\n")
    with pytest.raises(DataFormatError) as error:
        read_line_aligned(tmp_path, "dev")
    assert "s1.dev: 2" in str(error.value) and "s2.dev: 1" in str(error.value) and "labels.dev: 2" in str(error.value)


def test_line_aligned_missing_file_is_named(tmp_path: Path):
    (tmp_path / "s1.dev").write_text("A b .\n")
    (tmp_path / "labels.dev").write_text("neutral\n")
    with pytest.raises(FileNotFoundError, match="missing s2.dev"):
        read_line_aligned(tmp_path, "dev")


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_gzip_reads_the_same(data_fixtures: Path, tmp_path: Path, name: str):
    compressed = tmp_path / f"{name}.gz"
    with open(data_fixtures / name, "rb") as plain, gzip.open(compressed, "wb") as packed:
        shutil.copyfileobj(plain, packed)
    plain_result, gz_result = read_file(data_fixtures / name), read_file(compressed)
    assert gz_result.pairs and without_source(gz_result.pairs) == without_source(plain_result.pairs)
    assert gz_result.dropped_no_gold == plain_result.dropped_no_gold


def test_gzip_line_aligned(data_fixtures: Path, tmp_path: Path):
    for name in ("s1.dev", "s2.dev", "labels.dev"):
        with open(data_fixtures / "line_aligned" / name, "rb") as plain, gzip.open(tmp_path / f"{name}.gz", "wb") as packed:
            shutil.copyfileobj(plain, packed)
    expected = read_line_aligned(data_fixtures / "line_aligned", "dev")
    assert without_source(read_file(tmp_path / "s1.dev.gz").pairs) == without_source(expected.pairs)


def test_open_text_handles_gzip_and_crlf(tmp_path: Path):
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"gold_label\tsentence1\tsentence2\r\nentailment\tA b.\tA.\r\n")
    assert read_file(path).pairs[0].hypothesis == "A."
    with gzip.open(tmp_path / "x.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("caf\u00e9\n")
    with open_text(tmp_path / "x.txt.gz") as handle:
        assert handle.read() == "caf\u00e9\n"


NLI_HEADER = "gold_label\tsentence1\tsentence2\tpairID"
GOOD_JSON = '{"gold_label": "neutral", "sentence1": "A b.", "sentence2": "C d.", "pairID": "1"}'

MALFORMED = [
    # (file name, content, line the error must name, words the message must contain)
    ("bad.jsonl", GOOD_JSON + "\n{not json\n", 2, "JSON object"),
    ("bad.jsonl", GOOD_JSON + '\n{"gold_label": "neutral", "sentence1": "A b."}\n', 2, "sentence2"),
    ("bad.jsonl", '{"gold_label": "maybe", "sentence1": "A b.", "sentence2": "C d."}\n', 1, "'maybe'"),
    ("bad.jsonl", '{"gold_label": "neutral", "sentence1": "  ", "sentence2": "C d."}\n', 1, "non-empty sentence1"),
    ("bad.jsonl", '{"gold_label": "neutral", "sentence1": "A", "sentence2": "C", "annotator_labels": ["yes"]}\n', 1, "annotator label"),
    ("bad.jsonl", "[1, 2]\n", 1, "JSON object"),
    ("bad.txt", f"{NLI_HEADER}\nneutral\tA b.\tC d.\t1\n" + "neutral\tA b.\tC d.\t2\textra\n", 3, "4 tab-separated columns"),
    ("bad.txt", f"{NLI_HEADER}\nneutral\tA b.\n", 2, "found 2"),
    ("bad.txt", f"{NLI_HEADER}\nEntailment\tA b.\tC d.\t1\n", 2, "'Entailment'"),
    ("bad.txt", f"{NLI_HEADER}\nneutral\t\tC d.\t1\n", 2, "non-empty sentence1"),
    ("bad.txt", "label\tpremise\thypothesis\nneutral\tA\tB\n", 1, "missing ['gold_label', 'sentence1', 'sentence2']"),
    ("bad.txt", "", 1, "header line"),
    ("bad.txt", "gold_label\tsentence1\tsentence2\tlabel1\nneutral\tA\tB\tmaybe\n", 2, "annotator label"),
    ("bad.tsv", "1\tQ one ?\tQ two ?\t5\n1\tQ one ?\tQ two ?\n", 2, "4 tab-separated columns"),
    ("bad.tsv", "2\tQ one ?\tQ two ?\t5\n", 1, "label 0 or 1"),
    ("bad.tsv", "0\tQ one ?\t \t5\n", 1, "non-empty question2"),
]


@pytest.mark.parametrize(("name", "content", "line", "words"), MALFORMED)
def test_malformed_line_names_file_and_line(tmp_path: Path, name: str, content: str, line: int, words: str):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFormatError) as error:
        read_file(path)
    message = str(error.value)
    assert f"{path}, line {line}:" in message
    assert words in message
    assert error.value.line == line and error.value.path == str(path)


def test_invalid_utf8_names_the_line(tmp_path: Path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"gold_label\tsentence1\tsentence2\nneutral\tcaf\xe9\tA.\n")
    with pytest.raises(DataFormatError, match="UTF-8") as error:
        read_file(path)
    assert error.value.line == 2


def test_line_aligned_bad_label_names_the_label_file(tmp_path: Path):
    (tmp_path / "s1.test").write_text("A b .\nC d .\n")
    (tmp_path / "s2.test").write_text("E f .\nG h .\n")
    (tmp_path / "labels.test").write_text("neutral\nunsure\n")
    with pytest.raises(DataFormatError) as error:
        read_file(tmp_path / "s1.test")
    assert f"{tmp_path / 'labels.test'}, line 2" in str(error.value)


def test_unknown_format_and_missing_file(tmp_path: Path):
    path = tmp_path / "pairs.csv"
    path.write_text("a,b,c\n")
    with pytest.raises(DataFormatError, match=r"\.jsonl, \.txt or \.tsv"):
        read_file(path)
    with pytest.raises(FileNotFoundError, match="nowhere.jsonl"):
        read_file(tmp_path / "nowhere.jsonl")


def test_labels_stay_within_the_nli_set(data_fixtures: Path):
    for name in FIXTURE_FILES[:-1]:
        assert {pair.label for pair in read_file(data_fixtures / name).pairs} <= set(NLI_LABELS)


def test_truncated_gzip_is_a_format_error(data_fixtures: Path, tmp_path: Path):
    packed = gzip.compress((data_fixtures / "mnli_sample.jsonl").read_bytes())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(DataFormatError, match="readable"):
        read_file(path)


@pytest.mark.parametrize(("name", "content"), [
    ("blank.jsonl", GOOD_JSON + "\n\n"),
    ("blank.jsonl", "\n" + GOOD_JSON + "\n  \n\n"),
    ("blank.txt", f"{NLI_HEADER}\nneutral\tA b.\tC d.\t1\n\n"),
    ("blank.tsv", "1\tQ one ?\tQ two ?\t5\n\n"),
])
def test_blank_lines_are_skipped_and_counted(tmp_path: Path, name: str, content: str):
    """Issue 12 item 16: one trailing blank line used to reject the whole file."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = read_file(path)
    assert len(result.pairs) == 1
    assert result.skipped_blank_lines == content.count("\n") - 1 - (name.endswith(".txt"))
    assert "blank line" in " ".join(result.notes())


@pytest.mark.parametrize(("name", "line_template"), [
    ("dup.jsonl", '{{"gold_label": "neutral", "sentence1": "A b {n}.", "sentence2": "C d.", "pairID": "{id}"}}'),
    ("dup.txt", "neutral\tA b {n}.\tC d.\t{id}"),
    ("dup.tsv", "1\tQ one {n} ?\tQ two ?\t{id}"),
])
def test_repeated_pair_ids_are_made_unique_and_said(tmp_path: Path, name: str, line_template: str):
    """Issue 12 item 8: readers accepted repeated ids, then the predictions file written from them was
    rejected by the app's reader. One rule now: every pair carrying a repeated id becomes `<id>-line<N>`
    (which of them an id-keyed annotation meant is unknown), said in the notes."""
    from nlivis.store.predictions import read_predictions, write_predictions

    header = NLI_HEADER + "\n" if name.endswith(".txt") else ""
    first = 2 if header else 1
    ids = ["7", "8", "7", f"7-line{first + 4}", "7"]  # a real id equal to the fifth pair's new id: no collision
    path = tmp_path / name
    path.write_text(header + "\n".join(line_template.format(n=n, id=i) for n, i in enumerate(ids)) + "\n")
    result = read_file(path)
    got = [pair.id for pair in result.pairs]
    assert got == [f"7-line{first}", "8", f"7-line{first + 2}", f"7-line{first + 4}", f"7-line{first + 4}.2"]
    assert len(set(got)) == 5 and result.ambiguous_ids == ("7",)
    assert "given to more than one pair" in " ".join(result.notes())
    written = write_predictions(tmp_path / "predictions_x.jsonl.gz",
                                [{"id": i, "gold": "neutral", "predicted": "neutral", "probs": [0.2, 0.6, 0.2]} for i in got])
    assert [p.id for p in read_predictions(written)] == got


@pytest.mark.parametrize(("line", "words"), [
    ("[" * 100_000, "nested too deeply"),
    ('{"gold_label": "neutral", "sentence1": "A", "sentence2": "B", "pairID": ' + "9" * 5000 + "}", "Exceeds the limit"),
], ids=["deep-nesting", "5000-digit-integer"])
def test_json_that_python_cannot_parse_names_the_line(tmp_path: Path, line: str, words: str):
    """json.loads raises RecursionError or a plain ValueError (not JSONDecodeError) for these, which escaped
    every JSON-lines reader as a traceback."""
    from nlivis.data.challenge import read_challenge_files
    from nlivis.data.highlights import read_esnli_highlights

    pair = '{"gold_label": "neutral", "sentence1": "A", "sentence2": "B"}'
    readers = [(read_file, pair), (lambda p: read_challenge_files([p]), pair),
               (read_esnli_highlights, '{"sentB": "A b", "keywordB": ["b"]}')]
    for read, first_line in readers:
        path = tmp_path / "pairs.jsonl"
        path.write_text(first_line + "\n" + line + "\n")
        with pytest.raises(DataFormatError) as error:
            read(path)
        assert f"{path}, line 2:" in str(error.value) and words in str(error.value)

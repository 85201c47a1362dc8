"""Property-based tests of every reader: any bytes in, either records or an `InputError` naming the file (and
the line, where one line is at fault) out — never another exception (UnicodeDecodeError, KeyError,
IndexError, csv.Error, json errors, gzip/zip errors …).

Each reader gets two kinds of input: raw bytes, and documents assembled from the pieces its format is made
of (headers, labels, tabs, commas, quotes, JSON fragments), then optionally damaged (a stray non-UTF-8 byte,
a BOM, CRLF endings, gzip, a truncated gzip stream), which reach the deeper branches raw bytes rarely do.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlivis.data.records import InputError, Pair, ReadResult

EXAMPLES = settings(max_examples=int(os.environ.get("NLIVIS_PROPERTY_EXAMPLES", "120")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
"""120 examples a reader by default (a few seconds each); NLIVIS_PROPERTY_EXAMPLES=5000 searches harder."""

_counter = iter(range(10**9))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """The module's folder for examples (pytest cleans it up; a function-scoped tmp_path would be shared by
    all of a test's hypothesis examples)."""
    return tmp_path_factory.mktemp("properties")


def fresh_folder(work: Path) -> Path:
    """A new empty folder per hypothesis example."""
    folder = work / f"case{next(_counter)}"
    folder.mkdir()
    return folder


def outcome(read: Callable[[], Any], path: Path) -> Any:
    """Run a reader: its result, or the InputError it raised, which must name the file and, where it
    names a line, name it in the message."""
    try:
        return read()
    except InputError as error:
        message = str(error)
        assert str(path) in message or path.name in message, message
        if error.line is not None:
            assert f"line {error.line}" in message, message
        return error


# ------------------------------------------------------------------------------------------ strategies

SHORT_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
"""A little of anything Unicode: letters, marks, controls, NUL, line separators, emoji."""


def fields_from(pieces: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(pieces), SHORT_TEXT)


def lines_of(pieces: list[str], separators: list[str], max_fields: int = 8, max_lines: int = 6) -> st.SearchStrategy[list[str]]:
    line = st.tuples(st.sampled_from(separators), st.lists(fields_from(pieces), max_size=max_fields)).map(
        lambda parts: parts[0].join(parts[1]))
    return st.lists(line, max_size=max_lines)


@st.composite
def damaged(draw, text: str) -> bytes:
    """`text` as UTF-8, perhaps with a BOM, CRLF endings, or a stray byte that is not UTF-8."""
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\xed\xa0\x80"])) + data[at:]
    return data


@st.composite
def document(draw, headers: list[str], pieces: list[str], separators: list[str], newline: str = "\n") -> bytes:
    header = draw(st.one_of(st.sampled_from(headers), st.just("")))
    lines = draw(lines_of(pieces, separators))
    text = newline.join(([header] if header else []) + lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    return draw(damaged(text))


@st.composite
def maybe_gzipped(draw, content: st.SearchStrategy[bytes]) -> tuple[bytes, bool]:
    """(bytes, gzipped?): plain bytes, their gzip, a truncated gzip, or bytes that only claim to be gzip."""
    data = draw(content)
    kind = draw(st.sampled_from(["plain", "gzip", "truncated", "not-gzip"]))
    if kind == "plain":
        return data, False
    if kind == "gzip":
        return gzip.compress(data), True
    if kind == "truncated":
        packed = gzip.compress(data)
        return packed[: draw(st.integers(0, max(len(packed) - 1, 0)))], True
    return data, True


LABELS = ["entailment", "neutral", "contradiction", "-", "e", "n", "c", "E", "non-entailment", "0", "1", "2", ""]
SENTENCES = ["A man sleeps .", "A dog", " ", "\t", '"quoted"', "'", "\\", "'[", "['a', 'b']", "[1, 2]", "[", "]"]

JSON_PIECES = ['{"gold_label": "entailment", "sentence1": "A b.", "sentence2": "C d."}',
               '{"gold_label": "-", "sentence1": "A", "sentence2": "B"}', "{", "}", "[", "]", "null", "1", '"x"',
               '"gold_label":', '"sentence1":', '"sentence2":', '"pairID":', '"genre":', '"annotator_labels":',
               '"premise":', '"hypothesis":', '"label":', '"entailment"', '"e"', "[]", '["neutral", 3]', "{}",
               '"A b."', "1e999", "NaN", "-Infinity", '"\\ud800"', '{"a": {"b": [1, {"c": null}]}}', ":", ",",
               '{"sentence1": "A", "sentence2": 5, "gold_label": "e"}', '{"sentence1": "A", "sentence2": "B", "gold_label": ["e"]}',
               '{"sentence1": "A", "sentence2": "B", "gold_label": "e", "annotator_labels": {"a": 1}}',
               '{"sentence1": "A", "sentence2": "B", "gold_label": "e", "pairID": {"x": 1}, "genre": [1]}',
               '{"sentence1": "A", "sentence2": "B", "gold_label": "e", "annotator_labels": [null, 1.5]}',
               '{"premise": "A", "hypothesis": "B", "label": "n", "tags": ["x", 1]}',
               '{"premise": "A", "hypothesis": "B", "label": 1}',
               '{"premise": "A", "hypothesis": "B", "label": null, "uid": [1]}']


def json_lines() -> st.SearchStrategy[bytes]:
    record = st.fixed_dictionaries(
        {}, optional={key: st.one_of(st.sampled_from(LABELS + SENTENCES), st.none(), st.integers(), st.floats(),
                                     st.lists(st.sampled_from(LABELS), max_size=3), st.dictionaries(SHORT_TEXT, st.integers(), max_size=2), SHORT_TEXT)
                      for key in ("gold_label", "sentence1", "sentence2", "pairID", "genre", "annotator_labels", "premise",
                                  "hypothesis", "label", "uid", "tags")})
    made = st.lists(st.one_of(record.map(lambda r: json.dumps(r, allow_nan=True)),
                              st.lists(st.sampled_from(JSON_PIECES), max_size=4).map(" ".join), SHORT_TEXT), max_size=6)
    return made.flatmap(lambda lines: damaged("\n".join(lines) + "\n"))


NLI_HEADERS = ["gold_label\tsentence1\tsentence2", "gold_label\tsentence1\tsentence2\tpairID\tgenre\tlabel1\tlabel2\tlabel3",
               "gold_label\tsentence1_binary_parse\tsentence1\tsentence2\tpairID\theuristic", "sentence1\tsentence2",
               "gold_label\tgold_label\tsentence1\tsentence2", "label1\tlabel2\tgold_label\tsentence1\tsentence2",
               "Premise\tHypothesis\tLabel", "premise\thypothesis\tlabel\tid\tpairid"]
NLI_PIECES = LABELS + SENTENCES + ["77.jpg#1r1e", "fiction", "ex0"]
CSV_HEADERS = ["context,statement,reason,gold_label,uid,tags,model_pred", "premise,hypothesis,label", "premise,hypothesis",
               "sentence1,sentence2,gold_label,sentence1", "first,second", '"premise","hypothesis","label"', "\ufeffpremise,hypothesis,label"]
CSV_PIECES = LABELS + SENTENCES + ['"', '""', '"a,b"', '"multi\nline"', "\r", "x\x00y", '"unterminated']
QUORA_PIECES = ["0", "1", "2", "", "How ?", "What ?", "9001", " ", "\x00"]

nli_tsv = document(NLI_HEADERS, NLI_PIECES, ["\t"])
csv_text = document(CSV_HEADERS, CSV_PIECES, [",", ";", "\t"])
quora_tsv = document(["", "label\tq1\tq2\tid"], QUORA_PIECES, ["\t", " "])
raw_bytes = st.binary(max_size=300)


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def check_read_result(result: Any) -> None:
    if isinstance(result, ReadResult):
        assert all(isinstance(pair, Pair) and pair.premise.strip() and pair.hypothesis.strip() for pair in result.pairs)
        assert len({pair.id for pair in result.pairs}) == len(result.pairs)


# --------------------------------------------------------------------------------- sentence-pair readers

@EXAMPLES
@given(st.one_of(maybe_gzipped(json_lines()), maybe_gzipped(raw_bytes)))
def test_nli_jsonl_reader(work, content):
    from nlivis.data.readers import read_file

    data, zipped = content
    path = write(fresh_folder(work), "pairs.jsonl" + (".gz" if zipped else ""), data)
    check_read_result(outcome(lambda: read_file(path), path))


@EXAMPLES
@given(st.one_of(maybe_gzipped(nli_tsv), maybe_gzipped(raw_bytes)), st.sampled_from(["txt", "tsv"]))
def test_nli_tsv_reader(work, content, suffix):
    from nlivis.data.readers import read_file

    data, zipped = content
    path = write(fresh_folder(work), f"pairs.{suffix}" + (".gz" if zipped else ""), data)
    check_read_result(outcome(lambda: read_file(path), path))


@EXAMPLES
@given(st.one_of(maybe_gzipped(quora_tsv), maybe_gzipped(raw_bytes)))
def test_quora_reader(work, content):
    from nlivis.data.readers import read_quora_tsv

    data, zipped = content
    path = write(fresh_folder(work), "quora.tsv" + (".gz" if zipped else ""), data)
    check_read_result(outcome(lambda: read_quora_tsv(path), path))


@EXAMPLES
@given(st.lists(st.one_of(document([""], SENTENCES + LABELS, ["", " "]), raw_bytes), min_size=3, max_size=3),
       st.booleans())
def test_line_aligned_reader(work, contents, compressed):
    from nlivis.data.readers import line_aligned_files, read_file

    folder = fresh_folder(work)
    for path, data in zip(line_aligned_files(folder, "dev", compressed), contents):
        path.write_bytes(gzip.compress(data) if compressed else data)
    first = line_aligned_files(folder, "dev", compressed)[0]
    try:
        result = read_file(first)
    except InputError as error:
        assert str(folder) in str(error), str(error)  # one of the three files, or the folder for a count mismatch
        if error.line is not None:
            assert f"line {error.line}" in str(error)
        return
    check_read_result(result)


# ------------------------------------------------------------------------------------------ challenge sets

@EXAMPLES
@given(st.one_of(csv_text, raw_bytes), st.sampled_from(["anli.csv", "conj.tsv", "heuristics_evaluation_set.txt", "x.csv.gz"]))
def test_challenge_header_files(work, data, name):
    from nlivis.data.challenge import read_challenge_files

    if name.endswith(".gz"):
        data = gzip.compress(data)
    path = write(fresh_folder(work), name, data)
    result = outcome(lambda: read_challenge_files([path]), path)
    if not isinstance(result, InputError):
        check_read_result(result.result)


@EXAMPLES
@given(st.lists(st.one_of(json_lines(), raw_bytes), min_size=1, max_size=2))
def test_challenge_stress_test_jsonl(work, contents):
    from nlivis.data.challenge import read_challenge_files

    folder = fresh_folder(work)
    paths = [write(folder, f"multinli_0.9_cat{index}_matched.jsonl", data) for index, data in enumerate(contents)]
    try:
        result = read_challenge_files(paths)
    except InputError as error:
        assert any(str(path) in str(error) for path in paths), str(error)
        if error.line is not None:
            assert f"line {error.line}" in str(error)
        return
    check_read_result(result.result)


PARAPHRASE_LABEL_PIECES = ["0", "1", "2", "true", "FALSE", "duplicate", "not_duplicate", "Not-Duplicate", "-", "",
                           "entailment", "e", "1.0", "yes"]
PARAPHRASE_HEADERS = ["question1\tquestion2\tis_duplicate\tcategory", "id,qid1,qid2,question1,question2,is_duplicate",
                      "premise,hypothesis,label,category", "question1\tquestion2", "Question1,Question2,IS_DUPLICATE"]
QUESTIONS = ["How do I cook rice ?", "What is rice ?", "Why ?", "A b", " ", "", '"a,b"', '"x ""y"""', "\x00", "ä ?"]


@st.composite
def rows_document(draw, header: str, good: list[st.SearchStrategy[str]], bad: list[st.SearchStrategy[str]],
                  separator: str) -> bytes:
    """`header` and rows of cells joined by `separator`. Half the documents are clean (every cell drawn from
    `good`), so a reader's success branches are reached; the others draw cells from `bad`, lose or gain a
    cell, and may be damaged (see `damaged`)."""
    clean = draw(st.booleans())
    rows = []
    for _ in range(draw(st.integers(0 if not clean else 1, 6))):
        row = [draw(cell) for cell in (good if clean else bad)]
        change = 2 if clean else draw(st.integers(0, 9))
        row = row[:-1] if change == 0 else row + [draw(SHORT_TEXT)] if change == 1 else row
        rows.append(separator.join(row))
    text = "\n".join([header, *rows]) + "\n"
    return text.encode("utf-8") if clean else draw(damaged(text))


GOOD_PARAPHRASE_LABEL, GOOD_QUESTION = st.sampled_from(PARAPHRASE_LABEL_PIECES[:8]), st.sampled_from(QUESTIONS[:3])
ANY_PARAPHRASE_LABEL = st.one_of(GOOD_PARAPHRASE_LABEL, st.sampled_from(PARAPHRASE_LABEL_PIECES))
ANY_QUESTION = st.one_of(GOOD_QUESTION, st.sampled_from(QUESTIONS), SHORT_TEXT)
CATEGORY = st.sampled_from(["names", "['a', 'b']", "", "x"])
paraphrase_tsv = st.one_of(
    rows_document("question1\tquestion2\tis_duplicate\tcategory", [GOOD_QUESTION, GOOD_QUESTION, GOOD_PARAPHRASE_LABEL, CATEGORY],
                  [ANY_QUESTION, ANY_QUESTION, ANY_PARAPHRASE_LABEL, SHORT_TEXT], "\t"),
    document(PARAPHRASE_HEADERS, PARAPHRASE_LABEL_PIECES + QUESTIONS, ["\t"]))
paraphrase_csv = st.one_of(
    rows_document("id,qid1,qid2,question1,question2,is_duplicate",
                  [st.sampled_from(["1", "2"]), st.sampled_from(["7", ""]), st.sampled_from(["8", ""]), GOOD_QUESTION,
                   GOOD_QUESTION, GOOD_PARAPHRASE_LABEL],
                  [st.sampled_from(["1", "2", ""]), SHORT_TEXT, SHORT_TEXT, ANY_QUESTION, ANY_QUESTION, ANY_PARAPHRASE_LABEL],
                  ","),
    document(PARAPHRASE_HEADERS, PARAPHRASE_LABEL_PIECES + QUESTIONS, [","]))


@st.composite
def paraphrase_json_lines(draw) -> bytes:
    """JSON lines with question1 / question2 / is_duplicate: clean half the time (labels as JSON numbers,
    booleans or names), else any values, stray lines and damage."""
    value = st.one_of(st.sampled_from(PARAPHRASE_LABEL_PIECES + QUESTIONS), st.booleans(), st.integers(-1, 2),
                      st.floats(), st.none(), st.lists(st.sampled_from(PARAPHRASE_LABEL_PIECES), max_size=2), SHORT_TEXT)
    clean = draw(st.booleans())
    label = st.one_of(st.booleans(), st.integers(0, 1), GOOD_PARAPHRASE_LABEL) if clean else value
    question = GOOD_QUESTION if clean else st.one_of(GOOD_QUESTION, value)
    record = st.fixed_dictionaries({"question1": question, "question2": question, "is_duplicate": label},
                                   optional={"category": st.sampled_from(["a", "b"]) if clean else value,
                                             "id": st.sampled_from(["1", "2"]) if clean else value})
    line = record.map(json.dumps) if clean else st.one_of(record.map(lambda r: json.dumps(r, allow_nan=True)), SHORT_TEXT)
    text = "\n".join(draw(st.lists(line, min_size=1 if clean else 0, max_size=6))) + "\n"
    return text.encode("utf-8") if clean else draw(damaged(text))


@EXAMPLES
@given(st.one_of(st.tuples(paraphrase_tsv, st.just("qqp.tsv")), st.tuples(paraphrase_csv, st.just("qqp.csv")),
                 st.tuples(paraphrase_json_lines(), st.just("qqp.jsonl")),
                 st.tuples(raw_bytes, st.sampled_from(["qqp.tsv", "qqp.csv", "qqp.jsonl"]))))
def test_challenge_paraphrase_files(work, named):
    """0 / 1, true / false, duplicate / not_duplicate labels, is_duplicate and question1 / question2 columns:
    pairs with one task's labels, or an InputError naming the file (and line)."""
    from nlivis.data.challenge import read_challenge_files
    from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS

    data, name = named
    path = write(fresh_folder(work), name, data)
    result = outcome(lambda: read_challenge_files([path]), path)
    if not isinstance(result, InputError):
        check_read_result(result.result)
        labels = {pair.label for pair in result.pairs} - {None}
        assert labels <= set(result.labels) and result.labels in (PARAPHRASE_LABELS, NLI_LABELS, ("entailment", "non-entailment"))


COUNTERFACTUAL_CELLS = ["A man sleeps .", "A dog runs .", '"""Stop"" he said ."', '"a ""b"" c"', '"', '""',
                        '"unterminated', " ", ""]


@st.composite
def counterfactual_split(draw) -> list[bytes]:
    """original / revised_premise / revised_hypothesis files of one split. Half are clean (two revisions per
    original, cells in and out of CSV quotes, known labels); the others may miss their header, have a row
    more or less, odd cells and labels, and damage (see `damaged`)."""
    clean = draw(st.booleans())
    sentence = st.sampled_from(COUNTERFACTUAL_CELLS[:4]) if clean else st.one_of(
        st.sampled_from(COUNTERFACTUAL_CELLS), SHORT_TEXT)
    label = st.sampled_from(["entailment", "neutral", "contradiction", "-"] if clean else LABELS)
    header = "sentence1\tsentence2\tgold_label" if clean else draw(
        st.sampled_from(["sentence1\tsentence2\tgold_label", "sentence1\tsentence2", "gold_label", ""]))
    originals = draw(st.integers(1 if clean else 0, 3))
    files = []
    for count in (originals, 2 * originals, 2 * originals):
        count = count if clean else max(0, count + draw(st.sampled_from([0, 1, -1])))
        text = "\n".join([header, *("\t".join([draw(sentence), draw(sentence), draw(label)]) for _ in range(count))])
        files.append((text + "\n").encode("utf-8") if clean else draw(damaged(text + "\n")))
    return files


@EXAMPLES
@given(st.one_of(counterfactual_split(), st.lists(raw_bytes, min_size=3, max_size=3)), st.booleans())
def test_challenge_counterfactual_layout(work, contents, as_folder):
    """Counterfactually-augmented NLI's three folders: pairs, each in one contrast group, or an InputError
    naming one of the files (or the folder, for the split or the row counts)."""
    from nlivis.data.challenge import CONTRAST_FIELD, read_challenge_files

    folder = fresh_folder(work)
    paths = []
    for kind, data in zip(("original", "revised_premise", "revised_hypothesis"), contents):
        (folder / kind).mkdir()
        paths.append(write(folder / kind, "test.tsv", data))
    try:
        result = read_challenge_files([folder] if as_folder else paths)
    except InputError as error:
        assert str(folder) in str(error), str(error)
        if error.line is not None:
            assert f"line {error.line}" in str(error)
        return
    check_read_result(result.result)
    assert all(len(result.groups(CONTRAST_FIELD)[pair.id]) == 1 for pair in result.pairs)


# --------------------------------------------------------------------------------------- other file readers

HIGHLIGHT_PIECES = ['{"sentB": "A dog runs .", "keywordB": ["dog"]}', '{"sentB": 1, "keywordB": "dog"}', '{"keywordB": []}',
                    "{", "[]", "null", '"x"', '{"sentB": "a", "keywordB": [1]}', '{"sentB": "a", "keywordB": ["\\udc80"]}']


@EXAMPLES
@given(st.one_of(document([""], HIGHLIGHT_PIECES, ["", " ", "\n"]), raw_bytes))
def test_esnli_highlights_reader(work, data):
    from nlivis.data.highlights import read_esnli_highlights

    path = write(fresh_folder(work), "esnli_sents_highlight_contradict.dev.jsonl", data)
    outcome(lambda: read_esnli_highlights(path), path)


TAG_PIECES = ["113976e", "30824c", "#BELIEF", "#MODAL", "#NEGATION", "WORD OVERLAP", "#", "##", "#BELIEF #MODAL", "antonym",
              "ANTO,PARAPHRASE", '{"id": "1", "tags": ["#BELIEF"]}', '{"id": [1], "tags": []}', '{"id": "2"}', "{",
              '[{"id": "1", "tags": ["BELIEF"]}]', "[", "[1, 2]", '[{"id": "1", "tags": [null]}]', "[null]", "{}", "]"]


@EXAMPLES
@given(st.one_of(document([""], TAG_PIECES, ["\t", " ", ","]), raw_bytes))
def test_tag_file_reader(work, data):
    from nlivis.analysis.tags import read_tag_file

    path = write(fresh_folder(work), "tags.tsv", data)
    outcome(lambda: read_tag_file(path), path)


GLOVE_PIECES = ["the", "dog", "Dog", "0.1", "1", "-2.5e3", "nan", "inf", "-inf", "1e40", "x", "", ". . .", "400000", "300", "4"]


@st.composite
def glove_file(draw) -> tuple[str, bytes]:
    """(file name, bytes): GloVe text as plain, gzip, a zip (of zero, one or two members) or a fake of either."""
    text = draw(st.one_of(document(["", "3 4", "2 2"], GLOVE_PIECES, [" ", "  ", "\t"]), raw_bytes))
    kind = draw(st.sampled_from(["txt", "gz", "bad-gz", "zip", "empty-zip", "two-zip", "bad-zip", "truncated-zip"]))
    if kind == "txt":
        return "vectors.txt", text
    if kind == "gz":
        return "vectors.txt.gz", gzip.compress(text)
    if kind == "bad-gz":
        return "vectors.txt.gz", text
    if kind == "bad-zip":
        return "vectors.zip", text
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        if kind in ("zip", "truncated-zip"):
            archive.writestr("vectors.4d.txt", text)
        elif kind == "two-zip":
            archive.writestr("vectors.4d.txt", text)
            archive.writestr("vectors.3d.txt", text)
    packed = buffer.getvalue()
    if kind == "truncated-zip":
        packed = packed[: draw(st.integers(0, len(packed) - 1))]
    return "vectors.zip", packed


@EXAMPLES
@given(glove_file(), st.sampled_from([None, 4, 3]), st.booleans())
def test_glove_reader(work, named, dim, lowercase):
    from nlivis.features.embeddings import read_glove_vectors

    name, data = named
    path = write(fresh_folder(work), name, data)
    result = outcome(lambda: read_glove_vectors(str(path), {"the", "dog", "x"}, dim=dim, lowercase=lowercase), path)
    if not isinstance(result, InputError):
        vectors, found_dim = result
        assert found_dim >= 1 and all(vector.shape == (found_dim,) for vector in vectors.values())
        assert all(bool(abs(vector).max() < float("inf")) for vector in vectors.values())


VOCAB_PIECES = ['{"format": "nlivis-vocabulary", "version": 1, "kind": "word", "lowercase": false, "symbols": ["<PAD>", "<UNK>", "a"]}',
                '"format"', '"nlivis-vocabulary"', '"version"', "1", "1.0", "true", '"kind"', '"word"', '"char"', '"symbols"',
                '"lowercase"', '["<PAD>", "<UNK>"]', '["<PAD>", "<UNK>", "a", "a"]', "[]", "{", "}", ":", ",", "[1]", "NaN",
                '{"format": "nlivis-vocabulary", "version": 1, "kind": "word", "lowercase": 0, "symbols": ["<PAD>", "<UNK>"]}',
                '{"format": "nlivis-vocabulary", "version": true, "kind": "word", "lowercase": false, "symbols": []}',
                '{"format": ["x"], "version": {}, "kind": [], "lowercase": false, "symbols": ["<PAD>"]}']


@EXAMPLES
@given(st.one_of(document([""], VOCAB_PIECES, [" ", ""]), raw_bytes), st.sampled_from(["word", "char"]))
def test_vocabulary_file_reader(work, data, kind):
    from nlivis.features.vocab import CharVocabulary, Vocabulary

    cls = Vocabulary if kind == "word" else CharVocabulary
    path = write(fresh_folder(work), f"{kind}.json", data)
    result = outcome(lambda: cls.load(path), path)
    if not isinstance(result, InputError):
        assert result.symbols[:2] == ("<PAD>", "<UNK>")


def test_tag_file_lines_are_counted_at_newlines_only(tmp_path):
    """A pair id holding U+2028 (a line separator to str.splitlines) shifted every later line number."""
    from nlivis.analysis.tags import TagFileError, read_tag_file

    path = tmp_path / "tags.tsv"
    path.write_text("1\u2028a\t#BELIEF\n2\t#NOPE\n", encoding="utf-8")
    with pytest.raises(TagFileError, match=f"{path}, line 2: unknown tag"):
        read_tag_file(path)
    path.write_bytes(b"1\t#BELIEF\n2\t#MODAL\xff\n")
    with pytest.raises(TagFileError, match=f"{path}, line 2: not UTF-8"):
        read_tag_file(path)
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(TagFileError, match="nested too deeply"):
        read_tag_file(path)


def test_vocabulary_file_version_must_be_the_integer_one(tmp_path):
    from nlivis.features.vocab import Vocabulary, VocabularyFileError

    path = tmp_path / "vocab.json"
    record = Vocabulary(["<PAD>", "<UNK>", "a"]).to_dict()
    path.write_text(json.dumps({**record, "version": True}))
    with pytest.raises(VocabularyFileError, match="unsupported version True"):
        Vocabulary.load(path)
    path.write_text("[" * 100_000)
    with pytest.raises(VocabularyFileError, match="not JSON: nested too deeply"):
        Vocabulary.load(path)


# ------------------------------------------------------------------------------------------------- configs

def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return json.dumps(value) if isinstance(value, str) else str(value)
    if isinstance(value, float):
        return {float("inf"): "inf", float("-inf"): "-inf"}.get(value, "nan" if value != value else repr(value))
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)} = {toml_value(item)}" for key, item in value.items()) + "}"
    raise TypeError(value)


def toml_document(data: dict[str, Any]) -> str:
    """A tiny TOML writer (top-level keys, then one inline-table line per nested table)."""
    lines = [f"{json.dumps(key)} = {toml_value(value)}" for key, value in data.items()]
    return "\n".join(lines) + "\n"


MODEL_NAMES = ["gcnn", "amn", "diin", "esan", "esim", "attentive_conv"]
CONFIG_KEYS = {
    "model": ["hidden_size", "dropout", "mlp_hidden_size", "cell", "output", "sequence_length", "dense_blocks", "kernel_width",
              "first_scale_down_ratio", "num_layers", "use_chars", "freeze_word_embeddings", "word_dim", "vocab_size", "bogus"],
    "training": ["lr", "epochs", "batch_size", "optimizer", "eps", "weight_decay", "snli_fraction_with_mnli", "adadelta_rho",
                 "eval_every_steps", "lr_decay_per_epoch", "dropout_keep_decay_rate", "bogus"],
    "features": ["max_premise_len", "embeddings", "lowercase", "unknown_word_scale", "unknown_word_init", "min_word_freq",
                 "exact_match_rule", "pad_to_cutoff", "bogus"],
}
HOSTILE = st.one_of(st.sampled_from(["", "big", "gru", "sparsemax", "adam", "random", "normal", "form"]),
                    st.sampled_from([0, -1, 2, 2**63 - 1, -(2**63), 10**9, 0.5, 1.0, 1.5, -0.0]),
                    st.integers(-3, 10**12), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                    st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.sampled_from(["a", "name"]), st.integers(), max_size=1))
PLAUSIBLE = st.sampled_from([1, 3, 4, 8, 0.1, 0.3, 1e-3, True, False, "gru", "softmax", "adam", "random", "normal"])
VALUES = st.one_of(PLAUSIBLE, PLAUSIBLE, HOSTILE)


def rarely(draw) -> bool:
    """True about once in ten draws (hypothesis favours the ends of a range, so the middle is the rare one)."""
    return draw(st.integers(0, 9)) == 4


def option_table(draw, keys: list[str], model: bool) -> Any:
    if rarely(draw):
        return draw(HOSTILE)
    table = draw(st.dictionaries(st.sampled_from(keys), VALUES, max_size=4))
    if model and not rarely(draw):
        table["name"] = draw(HOSTILE) if rarely(draw) else draw(st.sampled_from(MODEL_NAMES))
    return table


@st.composite
def config_data(draw) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for table, keys in CONFIG_KEYS.items():
        if not rarely(draw):
            data[table] = option_table(draw, keys, table == "model")
    if draw(st.booleans()):
        data["shipped"] = draw(HOSTILE) if rarely(draw) else {
            table: option_table(draw, keys, False) for table, keys in CONFIG_KEYS.items() if draw(st.booleans())}
    if rarely(draw):
        data["extends"] = draw(st.one_of(HOSTILE, st.sampled_from(["gcnn.toml", "amn", "missing.toml", "child.toml"])))
    if rarely(draw):
        data[draw(st.sampled_from(["trainig", "config_name", "size"]))] = draw(VALUES)
    return data


@EXAMPLES
@given(st.one_of(config_data().map(toml_document).map(str.encode), document([""], ["[model]", "[training]", "x = 1", "extends = 5",
                                                                                 'name = "gcnn"', "= =", "[[a]]"], ["\n", " "]),
                 raw_bytes),
       st.sampled_from(["paper", "shipped"]))
def test_config_reader(work, data, size):
    """Any bytes as a config file: a config whose every table checks, or a ConfigError naming the file."""
    from nlivis.training.config import check_config, load_config

    path = write(fresh_folder(work), "child.toml", data)
    result = outcome(lambda: load_config(path), path)
    if not isinstance(result, InputError):
        assert isinstance(check_config(result, size if "shipped" in result else "paper")["model"], dict)

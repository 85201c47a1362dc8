"""The TaxiNLI reader: a hand-written fixture in the release's layout, its join to a split's pairs, every
malformed input as a DataFormatError naming file and line (property-based: any bytes in), and the real file
when ../shared/data is here."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlivis.data.records import DataFormatError, Pair
from nlivis.data.taxonomies import (REFERENCE_MODELS, TAXINLI_CATEGORIES, TAXINLI_FILE, find_taxinli_file,
                                    is_taxinli_file, join_to_pairs, read_taxinli)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "data" / "taxinli_sample.tsv"


def test_the_fixture_reads_as_written():
    read = read_taxinli(FIXTURE)
    assert len(read.rows) == 8 and read.reference_models == tuple(REFERENCE_MODELS)
    first = read.rows[0]
    assert (first.pair_id, first.genre, first.label, first.line) == ("t1e", "fiction", "entailment", 2)
    assert first.categories == {"lexical_linguistic", "world_knowledge"}
    assert first.reference_labels() == {"bag_of_words": "neutral", "aloxatel/bert-base-mnli": "entailment",
                                        "esim": "entailment"}
    assert read.rows[3].premise == 'She said "the budget is fixed" twice.'  # CSV-quoted, inner quotes doubled
    counts = read.category_counts()
    assert list(counts) == list(TAXINLI_CATEGORIES)
    assert counts["syntactic_linguistic"] == 3 and counts["negation_logic"] == 2 and counts["boolean_logic"] == 0
    assert len(read.notes) == 1 and "line 6 syntactic_linguistic = 2" in read.notes[0]  # counted, and said so
    assert is_taxinli_file(FIXTURE) and not is_taxinli_file(Path(__file__))


def test_rows_join_a_splits_pairs_by_id_and_a_repeated_id_by_its_sentences():
    rows = read_taxinli(FIXTURE).rows
    pairs = [Pair("t1e", "The kettle whistled in the kitchen.", "Something in the kitchen made a sound.", "entailment"),
             Pair("t6n-line7", "Looms  were loud machines.", "Weavers went deaf.", "neutral"),
             Pair("t6n-line9", "Spindles turned all night.", "The spindles never moved.", "contradiction"),
             Pair("other", "A.", "B.", "neutral")]
    joined = join_to_pairs(rows, pairs)
    assert set(joined) == {"t1e", "t6n-line7", "t6n-line9"}
    assert joined["t6n-line7"].label == "neutral" and joined["t6n-line9"].label == "contradiction"


def test_find_taxinli_file(tmp_path):
    assert find_taxinli_file(tmp_path) is None and find_taxinli_file(None) is None
    (tmp_path / TAXINLI_FILE).parent.mkdir()
    (tmp_path / TAXINLI_FILE).write_bytes(FIXTURE.read_bytes())
    assert find_taxinli_file(tmp_path) == tmp_path / TAXINLI_FILE


HEADER = FIXTURE.read_text(encoding="utf-8").splitlines()[0]
ROW = FIXTURE.read_text(encoding="utf-8").splitlines()[1]


@pytest.mark.parametrize("body, line, message", [
    ("", 1, "an empty file"),
    ("pairID\tlabel\n", 1, "TaxiNLI header"),
    (f"{HEADER}\n{ROW}\n{ROW[:40]}\n", 3, "fields as in the header"),
    (f"{HEADER}\n{ROW.replace('entailment', 'maybe', 1)}\n", 2, "label one of"),
    (f"{HEADER}\n{ROW.replace(chr(9) + '1' + chr(9), chr(9) + 'x' + chr(9), 1)}\n", 2, "0 or 1"),
    (f"{HEADER}\n{ROW}\n{ROW}\n", 3, "each pair once"),
    (f"{HEADER}\n{ROW.replace('t1e', ' ', 1)}\n", 2, "a pairID"),
])
def test_malformed_files_name_file_and_line(tmp_path, body, line, message):
    path = tmp_path / "bad.tsv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(DataFormatError, match=message) as caught:
        read_taxinli(path)
    assert caught.value.line == line and caught.value.path == str(path)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path):
    path = tmp_path / "latin.tsv"
    path.write_bytes(f"{HEADER}\n{ROW}\n".encode() + b"caf\xe9\n")
    with pytest.raises(DataFormatError, match="UTF-8") as caught:
        read_taxinli(path)
    assert caught.value.line == 3


def _check_any_input(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "any.tsv"
    path.write_bytes(data)
    try:
        read = read_taxinli(path)
    except DataFormatError as error:
        assert str(path) in str(error)
        assert error.line is None or error.line >= 1
        return
    for row in read.rows:
        assert row.pair_id and row.label in ("entailment", "neutral", "contradiction")
        assert row.categories <= set(TAXINLI_CATEGORIES)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_any_bytes_give_rows_or_a_format_error(tmp_path, data):
    _check_any_input(tmp_path, data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.sampled_from(list('\t\n\r"01 ab-çx') + ["entailment", "neutral", "t9", ROW]), max_size=60),
       cut=st.integers(min_value=0, max_value=len(ROW)))
def test_a_valid_header_with_any_rows_gives_rows_or_a_format_error(tmp_path, pieces, cut):
    _check_any_input(tmp_path, f"{HEADER}\n{ROW[:cut]}{''.join(pieces)}".encode())


def test_the_real_file_has_every_category_count_and_joins_the_dev_sets(shared_data):
    """Counts computed independently with the csv module (a category is present where its cell is not 0);
    all 7,727 rows join MultiNLI dev: 3,815 matched, 3,912 mismatched (21 of them through a repeated pairID)."""
    from nlivis.data.protocols import SplitRef, read_split

    path = shared_data / TAXINLI_FILE
    read = read_taxinli(path)
    with open(path, encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle, delimiter="\t"))
    assert len(read.rows) == len(table) == 7727
    assert read.category_counts() == {name: sum(row[name] != "0" for row in table) for name in TAXINLI_CATEGORIES}
    joined = {half: join_to_pairs(read.rows, read_split(SplitRef("mnli", f"dev_{half}", "mnli_dev"), shared_data).pairs)
              for half in ("matched", "mismatched")}
    assert (len(joined["matched"]), len(joined["mismatched"])) == (3815, 3912)
    assert sum("-line" in pair_id for pair_id in joined["mismatched"]) == 21

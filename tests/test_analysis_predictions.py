"""Predictions files: round trip, and errors that name file and line."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.store.predictions import (Prediction, PredictionsFileError, find_prediction_files, predictions_frame, predictions_path, read_predictions, write_predictions)


def test_read_fixture(fixtures):
    predictions = read_predictions(fixtures / "analysis" / "predictions_good.jsonl")
    assert [p.id for p in predictions] == ["1", "2", "3"]
    assert predictions[0].correct is True and predictions[1].correct is False
    assert predictions[2].gold is None and predictions[2].correct is None
    assert predictions[1].confidence == pytest.approx(0.6)


def test_round_trip(tmp_path):
    original = [Prediction("a", "entailment", "neutral", (0.25, 0.5, 0.25)),
                Prediction("b", None, "entailment", (1.0, 0.0, 0.0))]
    path = write_predictions(predictions_path(tmp_path / "ckpt", "snli_dev"), original)
    assert path.name == "predictions_snli_dev.jsonl.gz"
    assert read_predictions(path) == original
    assert find_prediction_files(tmp_path / "ckpt") == {"snli_dev": path}


def test_gzip_files_are_reproducible_and_win_over_a_plain_copy(tmp_path):
    rows = [Prediction(str(i), "neutral", "neutral", (0.123456, 0.8, 0.076544)) for i in range(50)]
    first = write_predictions(tmp_path / "a" / "predictions_snli_dev.jsonl.gz", rows).read_bytes()
    assert write_predictions(tmp_path / "b" / "predictions_snli_dev.jsonl.gz", rows).read_bytes() == first
    plain = write_predictions(tmp_path / "a" / "predictions_snli_dev.jsonl", rows)
    assert len(first) < plain.stat().st_size / 5  # repetitive rows compress well
    write_predictions(tmp_path / "a" / "predictions_snli_test.jsonl", rows)
    found = find_prediction_files(tmp_path / "a")
    assert list(found) == ["snli_dev", "snli_test"] and found["snli_dev"].suffix == ".gz"
    assert read_predictions(found["snli_dev"])[0].probs == (0.1235, 0.8, 0.0765)  # stored to 4 decimals


def test_writing_the_gzip_file_of_a_split_retires_its_plain_file(tmp_path):
    old = [Prediction("1", "neutral", "neutral", (0.1, 0.8, 0.1))]
    new = [Prediction("1", "neutral", "entailment", (0.7, 0.2, 0.1))]
    write_predictions(tmp_path / "predictions_snli_dev.jsonl", old)
    write_predictions(tmp_path / "predictions_snli_test.jsonl", old)
    write_predictions(tmp_path / "predictions_snli_dev.jsonl.gz", new)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions_snli_dev.jsonl.gz", "predictions_snli_test.jsonl"]
    assert read_predictions(find_prediction_files(tmp_path)["snli_dev"]) == new


def test_bad_line_in_a_gzip_file_is_named(tmp_path):
    import gzip

    path = tmp_path / "predictions_snli_dev.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"id": "1", "gold": "neutral", "predicted": "neutral", "probs": [0.1, 0.8, 0.1]}\n'
                                   b'{"id": "2"}\n'))
    with pytest.raises(PredictionsFileError, match=r"predictions_snli_dev\.jsonl\.gz, line 2: missing key"):
        read_predictions(path)


@pytest.mark.parametrize("damage", ["truncated", "not gzip"])
def test_damaged_gzip_file_gives_a_clear_error(tmp_path, damage):
    rows = [Prediction(str(i), "neutral", "entailment", (0.5, 0.3, 0.2)) for i in range(500)]
    path = write_predictions(tmp_path / "predictions_snli_dev.jsonl.gz", rows)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"plain text, not gzip\n")
    with pytest.raises(PredictionsFileError, match=r"predictions_snli_dev\.jsonl\.gz: cannot read predictions"):
        read_predictions(path)


def test_write_accepts_dicts_with_integer_ids(tmp_path):
    path = write_predictions(tmp_path / "p.jsonl",
                             [{"id": 7, "gold": "neutral", "predicted": "neutral", "probs": [0.1, 0.8, 0.1]}])
    assert read_predictions(path)[0].id == "7"


def test_missing_key_names_file_and_line(fixtures):
    with pytest.raises(PredictionsFileError, match=r"predictions_missing_key\.jsonl, line 2: missing key\(s\) predicted"):
        read_predictions(fixtures / "analysis" / "predictions_missing_key.jsonl")


@pytest.mark.parametrize("second_line, message", [
    ('{"id": "1", "gold": "neutral", "predicted": "neutral", "probs": [0.1, 0.8, 0.1]}', "already on line 1"),
    ('{"id": "2", "gold": "neutral", "predicted": "neutral", "probs": [0.2, 0.8]}', "2 probabilities"),
    ('{"id": "2", "gold": "neutral", "predicted": "neutral", "probs": [2.0, 0.8, 0.1]}', r"\[0, 1\]"),
    ('{"id": "2", "gold": 1, "predicted": "neutral", "probs": [0.1, 0.8, 0.1]}', "gold must be"),
    ('{"id": "2", "gold": "neutral"', "invalid JSON"),
    ('[1, 2]', "expected a JSON object"),
])
def test_bad_lines(tmp_path, second_line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "1", "gold": "neutral", "predicted": "neutral", "probs": [0.1, 0.8, 0.1]}\n'
                    + second_line + "\n", encoding="utf-8")
    with pytest.raises(PredictionsFileError, match=rf"bad\.jsonl, line 2: .*{message}"):
        read_predictions(path)


def test_missing_file(tmp_path):
    with pytest.raises(PredictionsFileError, match="cannot read predictions"):
        read_predictions(tmp_path / "nope.jsonl")


def test_frame_columns(fixtures):
    frame = predictions_frame(read_predictions(fixtures / "analysis" / "predictions_good.jsonl"))
    assert list(frame.columns) == ["id", "gold", "predicted", "correct", "confidence", "probs"]
    assert frame["correct"].tolist() == [True, False, None]


# ------------------------------------------------------------- the fast paths say what the slow ones say

_JSON_PIECES = st.sampled_from(['{"id": "1"}', '{"a": [1, 2]}', "[1, 2]", '"x"', "3", "null", "{", "}", "]", ",", " ",
                                "\t", "\n", "\r", "\ufeff", "\u2028", "\x0b", "junk", '{"a": NaN}', "1e999"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_JSON_PIECES, max_size=5).map("".join))
def test_a_line_decodes_as_json_loads_decodes_it(line):
    from nlivis.store.predictions import _json_line

    try:
        expected: object = json.loads(line)
    except json.JSONDecodeError as error:
        expected = ("error", error.msg, error.pos)
    try:
        got: object = _json_line(line)
    except json.JSONDecodeError as error:
        got = ("error", error.msg, error.pos)
    assert repr(got) == repr(expected)  # repr: a decoded NaN equals no other


_PROBABILITY = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, 1, 2, -1, True, False,
                                                                                          0.0, 1.0, 1 + 1e-6, -1e-6,
                                                                                          math.nan, math.inf]),
                         st.floats(min_value=0, max_value=1), st.integers())


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.lists(_PROBABILITY, max_size=4), st.sampled_from([None, "0.5", (0.5, 0.5), []])))
def test_the_quick_probability_check_passes_only_what_the_full_check_passes(probs):
    from nlivis.store.predictions import _check_probabilities, _plain_probabilities

    try:
        _check_probabilities(probs, lambda: "here")
        accepted = True
    except PredictionsFileError:
        accepted = False
    assert not _plain_probabilities(probs) or accepted

"""Any labelled file scored as its authors meant (issue 28 §5): `--label-scheme 2way` (entailment vs
non-entailment), `--columns KEY=NAME` for any header file, the header rule (a file with a header never reaches
the Quora reader), `by_group` always in `--json`, and each original's consistency together with its edits.

Every file here is written by the test, in the shapes the options are for; the readers get property-based tests,
the scoring a known value, and every bad value a test that its one error names the option."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlivis.analysis.challenge import OVERALL_GROUP, accuracy_by_group, two_way_predictions
from nlivis.cli import main
from nlivis.data import challenge as challenge_module
from nlivis.data.challenge import (BINARY_LABELS, COLUMN_KEYS, LABEL_SPELLINGS, TWO_WAY, parse_columns,
                                   read_challenge_files, two_way_label)
from nlivis.data.records import NLI_LABELS, InputError
from nlivis.store.predictions import Prediction, read_predictions
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG

EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_counter = iter(range(10**9))

THREE_WAY_SPELLINGS = sorted(spelling for spelling, label in LABEL_SPELLINGS.items() if label in NLI_LABELS)
"""Every way a file may write a 3-way NLI label (e / n / c, the words), any case."""
TWO_WAY_SPELLINGS = sorted(spelling for spelling, label in LABEL_SPELLINGS.items() if label in TWO_WAY)
"""… and the 2-way files' non-entailment / not_entailment … besides."""


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("label_scheme")


def fresh_folder(work: Path) -> Path:
    folder = work / f"case{next(_counter)}"
    folder.mkdir()
    return folder


# ------------------------------------------------------------------------------------------ strategies

sentences = st.from_regex(r"[A-Za-z][A-Za-z ,.']{0,24}[A-Za-z.]", fullmatch=True)
column_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,9}", fullmatch=True)


@st.composite
def header_files(draw, spellings: list[str] = THREE_WAY_SPELLINGS) -> dict:
    """A header file's parts: distinct column names (any case-insensitively distinct names) in a random order,
    which of them hold premise / hypothesis / label, extra columns, and rows of sentences and label spellings."""
    extra = draw(st.integers(0, 3))
    names = draw(st.lists(column_names, min_size=3 + extra, max_size=3 + extra, unique_by=str.lower))
    order = draw(st.permutations(names))
    rows = draw(st.lists(st.tuples(sentences, sentences, st.sampled_from(spellings).map(
        lambda s: s.upper() if len(s) == 1 else s), *[sentences] * extra), min_size=1, max_size=6))
    records = [dict(zip(names, row)) for row in rows]
    return {"names": names, "order": order, "records": records, "format": draw(st.sampled_from(["tsv", "csv", "jsonl"]))}


def write(folder: Path, parts: dict) -> Path:
    """The file in its format, columns in `order`."""
    order, records = parts["order"], parts["records"]
    path = folder / f"pairs.{parts['format']}"
    if parts["format"] == "jsonl":
        path.write_text("".join(json.dumps({name: r[name] for name in order}) + "\n" for r in records), encoding="utf-8")
    elif parts["format"] == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerows([order] + [[r[name] for name in order] for r in records])
        path.write_text(buffer.getvalue(), encoding="utf-8")
    else:
        path.write_text("\n".join(["\t".join(order)] + ["\t".join(r[name] for name in order) for r in records]) + "\n",
                        encoding="utf-8")
    return path


def columns_text(parts: dict) -> str:
    premise, hypothesis, label = parts["names"][:3]
    return f"premise={premise},hypothesis={hypothesis},label={label}"


# -------------------------------------------------------------------------------- readers, property-based

@EXAMPLES
@given(parts=header_files())
def test_any_header_round_trips_through_columns(work, parts):
    path = write(fresh_folder(work), parts)
    found = read_challenge_files([path], columns=parse_columns(columns_text(parts)))
    premise, hypothesis, label = parts["names"][:3]
    assert [(p.premise, p.hypothesis, p.label) for p in found.pairs] == [
        (r[premise], r[hypothesis], LABEL_SPELLINGS[r[label].lower()]) for r in parts["records"]]
    for name in parts["names"][3:]:  # every other column is a field to group by
        assert [found.fields[p.id][name] for p in found.pairs] == [r[name] for r in parts["records"]]


@EXAMPLES
@given(parts=header_files(TWO_WAY_SPELLINGS))
def test_two_way_reading_maps_every_spelling(work, parts):
    path = write(fresh_folder(work), parts)
    found = read_challenge_files([path], columns=parse_columns(columns_text(parts)), label_scheme="2way")
    label = parts["names"][2]
    assert found.labels == BINARY_LABELS
    assert [p.label for p in found.pairs] == [two_way_label(LABEL_SPELLINGS[r[label].lower()]) for r in parts["records"]]
    assert found.folded == sum(LABEL_SPELLINGS[r[label].lower()] in ("neutral", "contradiction") for r in parts["records"])


@EXAMPLES
@given(parts=header_files(), named=st.booleans())
def test_a_header_file_never_reaches_the_quora_reader(work, parts, named):
    """Header names that are not the usual ones, named with --columns or not: the header reader reads them or
    says which column is missing, listing the file's columns and --columns — never a Quora-format complaint."""
    parts = {**parts, "format": "tsv"}
    path = write(fresh_folder(work), parts)
    with mock.patch.object(challenge_module, "read_file", side_effect=AssertionError("reached the Quora reader")):
        try:
            found = read_challenge_files([path], columns=parse_columns(columns_text(parts)) if named else None)
        except InputError as error:
            message = str(error)
            assert not named and str(path) in message and "0 or 1" not in message
            if "expected a header naming" in message:  # else a column found by its name held no label
                assert "premise column" in message or "hypothesis column" in message
                assert "--columns premise=NAME" in message
                assert all(repr(name) in message for name in parts["order"])
        else:
            assert len(found.pairs) == len(parts["records"])


@given(label=st.sampled_from(sorted(TWO_WAY)))
def test_the_two_way_mapping_is_idempotent_and_merges_exactly_neutral_and_contradiction(label):
    once = two_way_label(label)
    assert two_way_label(once) == once and once in BINARY_LABELS
    assert (once == "non-entailment") == (label in ("neutral", "contradiction", "non-entailment"))
    assert {source for source, target in TWO_WAY.items() if target != source} == {"neutral", "contradiction"}


@given(rows=st.lists(st.tuples(st.sampled_from([*NLI_LABELS, None]), st.sampled_from(NLI_LABELS),
                               st.lists(st.floats(0, 1), min_size=3, max_size=3)), min_size=1, max_size=20))
def test_folding_predictions_twice_is_folding_once(rows):
    predictions = [Prediction(str(i), gold, predicted, tuple(probs)) for i, (gold, predicted, probs) in enumerate(rows)]
    once = two_way_predictions(predictions)
    assert two_way_predictions(once) == once
    for before, after in zip(predictions, once):
        assert after.probs == pytest.approx((before.probs[0], before.probs[1] + before.probs[2]))
        assert after.correct == (None if before.gold is None else
                                 (before.gold == "entailment") == (before.predicted == "entailment"))


def test_two_way_accuracy_of_fixed_predictions():
    """Six pairs, gold e n c n c e, predicted e c n e c n: 3-way right on 2 (e, c); 2-way right on 4 (a neutral
    answered contradiction and the reverse count as right; n→e and e→n stay wrong)."""
    gold, predicted = "e n c n c e".split(), "e c n e c n".split()
    names = {"e": "entailment", "n": "neutral", "c": "contradiction"}
    predictions = [Prediction(str(i), names[g], names[p], (0.5, 0.3, 0.2)) for i, (g, p) in enumerate(zip(gold, predicted))]
    everything = {p.id: (OVERALL_GROUP,) for p in predictions}
    assert accuracy_by_group(predictions, everything).loc[0, "correct"] == 2
    row = accuracy_by_group(two_way_predictions(predictions), everything).loc[0]
    assert (row["count"], row["correct"], row["accuracy"]) == (6, 4, pytest.approx(4 / 6))
    assert row["majority_label"] == "non-entailment" and row["majority_accuracy"] == pytest.approx(4 / 6)


# -------------------------------------------------------------------------------- bad values, one clear error

@pytest.mark.parametrize("text, said", [
    ("premise", "is not KEY=NAME"), ("prem=Text", "unknown key 'prem'"), ("premise=a,premise=b", "named twice"),
    ("premise=a,label=a", "named for two keys"), ("premise=", "is not KEY=NAME"), ("", "is not KEY=NAME")])
def test_a_bad_columns_value_is_one_error_naming_the_option(capsys, tmp_path, text, said):
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", str(tmp_path / "nothing"), "--file", str(tmp_path / "pairs.tsv"), "--columns", text])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "argument --columns" in err and said in err and err.count("error:") == 1
    if said.startswith("unknown key"):
        assert f"the keys are {', '.join(COLUMN_KEYS)}" in err


def test_a_named_column_not_in_the_header_names_the_file_and_its_columns(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("index\tText\tHypothesis\tgold_label\n0\tA man sleeps.\tA person rests.\tentailment\n")
    with pytest.raises(InputError) as error:
        read_challenge_files([path], columns=parse_columns("premise=Txt,hypothesis=Hypothesis"))
    assert str(error.value) == (f"--columns premise=Txt: {path} has no column 'Txt'; its columns are 'index', "
                                "'Text', 'Hypothesis', 'gold_label'")


def test_the_issue_s_header_file_is_read_by_its_header_not_as_quora(tmp_path):
    """`index, Text, Hypothesis, gold_label` as .tsv: today's complaint was "label 0 or 1 on line 1"."""
    path = tmp_path / "pairs.tsv"
    path.write_text("index\tText\tHypothesis\tgold_label\n0\tA man sleeps.\tA person rests.\tentailment\n"
                    "1\tA dog runs.\tA cat sits.\tneutral\n")
    with pytest.raises(InputError) as error:
        read_challenge_files([path])
    assert str(error.value).startswith(f"{path}, line 1: expected a header naming a premise column (sentence1 / "
                                       "premise / context / question1, any case); its columns are 'index', 'Text', "
                                       "'Hypothesis', 'gold_label' — name them with --columns")
    found = read_challenge_files([path], columns=parse_columns("premise=text"))  # case does not matter
    assert [p.label for p in found.pairs] == ["entailment", "neutral"] and found.fields["2"]["index"] == "0"


def test_a_quora_file_is_still_quora_and_columns_have_nothing_to_name_in_line_aligned_files(tmp_path):
    quora = tmp_path / "quora.tsv"
    quora.write_text("1\tHow do I cook rice ?\tWhat is the way to cook rice ?\t7\n")
    assert read_challenge_files([quora]).labels == ("not_duplicate", "duplicate")
    (tmp_path / "s1.dev").write_text("A man sleeps .\n")
    (tmp_path / "s2.dev").write_text("A person rests .\n")
    (tmp_path / "labels.dev").write_text("entailment\n")
    with pytest.raises(InputError, match=r"--columns names the columns of a header; .*s1\.dev is line-aligned"):
        read_challenge_files([tmp_path / "s1.dev"], columns={"premise": "x"})


def test_two_way_on_a_paraphrase_file_and_mixed_labels_say_what_to_do(tmp_path):
    paraphrase = tmp_path / "para.tsv"
    paraphrase.write_text("question1\tquestion2\tis_duplicate\nHow do I cook rice ?\tHow to cook rice ?\t1\n")
    with pytest.raises(InputError, match="--label-scheme 2way scores entailment vs non-entailment, but this is a "
                                         "paraphrase file"):
        read_challenge_files([paraphrase], label_scheme="2way")
    mixed = tmp_path / "mixed.tsv"
    mixed.write_text("premise\thypothesis\tlabel\nA b.\tC d.\tnon-entailment\nE f.\tG h.\tneutral\n")
    with pytest.raises(InputError, match="give --label-scheme 2way"):
        read_challenge_files([mixed])
    assert [p.label for p in read_challenge_files([mixed], label_scheme="2way").pairs] == ["non-entailment"] * 2


# ------------------------------------------------------------------------------------ evaluate --file, end to end

@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scheme") / "nli"
    assert main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
                 "--out", str(out), "--device", "cpu", "--max-steps", "4",
                 "--cache-dir", str(out.parent / "cache")]) == 0
    return out


@pytest.fixture
def no_spacy(monkeypatch):
    from nlivis.features import sentences as analysis

    def refuse(*args, **kwargs):
        raise AssertionError("spaCy ran before the input was validated")

    monkeypatch.setattr(analysis, "analyse_sentences", refuse)


def run_json(capsys, *argv) -> tuple[int, dict | None, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 and captured.out.startswith("{") else None), captured.err


EDITS = ("Text\tHypothesis\tgold_label\tedit\tsource\n"
         "A man is playing a guitar on a stage .\tA man is playing music .\tentailment\toriginal\ta\n"
         "A man is playing a guitar on a stage .\tA man is not playing music .\tcontradiction\tnegation\ta\n"
         "A man is playing a guitar on a stage .\tA man is playing a song .\tneutral\tsynonym\ta\n"
         "A dog runs in the park .\tAn animal moves .\tentailment\toriginal\tb\n"
         "A dog runs in the park .\tNo animal moves .\tcontradiction\tnegation\tb\n"
         "A woman reads a book .\tA woman is sleeping .\tcontradiction\toriginal\tc\n"
         "A woman reads a book .\tA woman reads a novel .\tneutral\tsynonym\tc\n")
"""An edits file as a user might write one: the original and its edits share `source`; `edit` says which."""


def test_two_way_scores_what_three_way_predicted_folded(checkpoint, tmp_path, capsys):
    path = tmp_path / "edits.tsv"
    path.write_text(EDITS)
    common = ["evaluate", checkpoint, "--file", path, "--columns", "premise=Text,hypothesis=Hypothesis", "--json",
              "--cache-dir", tmp_path / "cache"]
    code, three, err = run_json(capsys, *common)
    assert code == 0, err
    code, two, err = run_json(capsys, *common, "--label-scheme", "2way", "--group-by", "edit")
    assert code == 0, err
    assert (three["label_scheme"], two["label_scheme"]) == ("3way", "2way") and two["labels"] == list(BINARY_LABELS)
    stored = read_predictions(Path(three["predictions_file"]))
    folded = two_way_predictions(stored)
    assert two["accuracy"] == pytest.approx(sum(bool(p.correct) for p in folded) / 7) and two["count"] == 7
    assert sum(map(sum, two["confusion"]["matrix"])) == 7 and len(two["confusion"]["matrix"]) == 2
    by_edit = {row["group"]: row for row in two["by_group"]}
    assert by_edit["negation"]["correct"] == sum(bool(p.correct) for p in folded if p.id in ("3", "6"))
    assert by_edit["negation"]["majority_label"] == "non-entailment"
    # the 2-way predictions are kept apart from the 3-way ones, so neither run refuses the other's name
    assert two["name"].startswith("edits-2way-") and three["name"].startswith("edits-") and two["name"] != three["name"]
    assert [(p.id, p.gold, p.predicted) for p in read_predictions(Path(two["predictions_file"]))] == \
        [(p.id, p.gold, p.predicted) for p in folded]
    # without --group-by, by_group is there, empty, and overall is the whole file
    assert three["group_by"] is None and three["by_group"] == []
    assert three["overall"]["count"] == 7 and three["overall"]["accuracy"] == pytest.approx(three["accuracy"])


def test_each_original_with_its_edits(checkpoint, tmp_path, capsys):
    path = tmp_path / "edits.tsv"
    path.write_text(EDITS)
    code, output, err = run_json(capsys, "evaluate", checkpoint, "--file", path, "--columns", "premise=Text,"
                                 "hypothesis=Hypothesis", "--group-by", "edit", "--contrast-group", "source", "--json",
                                 "--cache-dir", tmp_path / "cache")
    assert code == 0, err
    right = {p.id: bool(p.correct) for p in read_predictions(Path(output["predictions_file"]))}
    groups = {"a": ["2", "3", "4"], "b": ["5", "6"], "c": ["7", "8"]}
    contrast = output["contrast_consistency"]
    whole = sum(all(right[i] for i in members) for members in groups.values())
    assert contrast["overall"]["contrast_groups"] == 3 and contrast["overall"]["consistent"] == whole
    assert contrast["per_original"]["contrast_groups"] == 3 and contrast["per_original"]["consistent"] == whole
    by_edit = {row["group"]: row for row in contrast["by_group"]}
    # negation: each original with its negation edit (a: 2 + 3, b: 5 + 6; c has none and is left out)
    assert by_edit["negation"]["contrast_groups"] == 2 and by_edit["negation"]["members"] == 4
    assert by_edit["negation"]["single_member_groups"] == 0
    assert by_edit["negation"]["consistent"] == (right["2"] and right["3"]) + (right["5"] and right["6"])
    assert by_edit["synonym"]["consistent"] == (right["2"] and right["4"]) + (right["7"] and right["8"])
    code = main(["evaluate", str(checkpoint), "--file", str(path), "--columns", "premise=Text,hypothesis=Hypothesis",
                 "--group-by", "edit", "--contrast-group", "source", "--cache-dir", str(tmp_path / "cache")])
    assert code == 0 and "contrast consistency (each original with all its edits)" in capsys.readouterr().out


def test_bad_values_are_named_by_their_option_before_spacy(checkpoint, tmp_path, capsys, no_spacy):
    path = tmp_path / "edits.tsv"
    path.write_text(EDITS)
    code, _, err = run_json(capsys, "evaluate", checkpoint, "--file", path)
    assert code == 2 and "--columns premise=NAME" in err and "'Text', 'Hypothesis'" in err and "0 or 1" not in err
    code, _, err = run_json(capsys, "evaluate", checkpoint, "--file", path, "--columns", "premise=Text,label=gold")
    assert code == 2 and f"--columns label=gold: {path} has no column 'gold'" in err
    named = ["--columns", "premise=Text,hypothesis=Hypothesis"]
    code, _, err = run_json(capsys, "evaluate", checkpoint, "--file", path, *named, "--contrast-group", "nosuch")
    assert code == 2 and err.startswith("error: --contrast-group nosuch:") and "--group-by" not in err
    assert "source" in err  # the fields there are
    code, _, err = run_json(capsys, "evaluate", checkpoint, "--file", path, "--dataset", "snli")
    assert code == 2 and "--file and --dataset snli" in err and "--split with --file" not in err
    code, _, err = run_json(capsys, "evaluate", checkpoint, "--dataset", "snli", "--split", "dev", "--data-dir",
                            FIXTURE_DIR, "--label-scheme", "2way")
    assert code == 2 and "--label-scheme needs --file" in err

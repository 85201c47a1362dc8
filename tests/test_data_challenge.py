"""Challenge-set reader (issue 15): header CSV/TSV with aliased columns, ANLI's quoted multi-line CSV and
list-literal tags, ConjNLI's BOM, HANS's 2-way labels, stress tests as one file per category."""
from __future__ import annotations

from pathlib import Path

import pytest

from nlivis.data.challenge import BINARY_LABELS, NO_VALUE, parse_field_value, read_challenge_files
from nlivis.data.records import NLI_LABELS, DataFormatError, InputError

CHALLENGE = Path(__file__).resolve().parent / "fixtures" / "challenge"


def test_anli_like_csv_columns_labels_fields_and_list_tags():
    challenge = read_challenge_files([CHALLENGE / "anli_like.csv"])
    assert [p.id for p in challenge.pairs] == ["u1", "u2", "u3", "u4", "u5"]  # u6 has gold '-'
    assert challenge.result.dropped_no_gold == 1 and challenge.labels == NLI_LABELS
    assert [p.label for p in challenge.pairs] == ["entailment", "contradiction", "neutral", "entailment", "contradiction"]
    second = challenge.pairs[1]
    assert second.premise == "A woman plays a guitar on the stage,\nand the crowd sings." and second.line == 3
    assert challenge.pairs[3].premise == 'The "old" man reads a paper.'
    assert challenge.fields["u1"]["reason"] == "cooking soup is making food"  # extra fields kept
    assert challenge.fields["u1"]["model_pred"] == "e"
    groups = challenge.groups("TAGS")  # matched case-insensitively
    assert groups["u1"] == ("Basic", "Lexical") and groups["u3"] == (NO_VALUE,)
    # never eval: an expression is kept as text, one group of its own
    assert groups["u5"] == ("__import__('os').system('echo pwned')",)


def test_list_literals_are_parsed_without_eval():
    assert parse_field_value("['a', 'b']") == ("a", "b")
    assert parse_field_value("[1, 2]") == ("1", "2")
    assert parse_field_value("[__import__('os')]") == "[__import__('os')]"
    assert parse_field_value(["x", 3]) == ("x", "3")
    assert parse_field_value("plain") == "plain"


def test_conjnli_tsv_with_bom_and_capitalised_header():
    challenge = read_challenge_files([CHALLENGE / "conj_like.tsv"])
    assert len(challenge.pairs) == 3 and challenge.pairs[0].premise == "A man and a woman are cooking ."
    assert [p.label for p in challenge.pairs] == ["entailment", "neutral", "contradiction"]
    assert challenge.groups("file") == {p.id: ("conj_like",) for p in challenge.pairs}


def test_hans_two_way_labels_and_heuristic_fields():
    challenge = read_challenge_files([CHALLENGE / "hans_like.txt"])
    assert challenge.labels == BINARY_LABELS
    assert [p.id for p in challenge.pairs] == ["ex0", "ex1", "ex2", "ex3"]
    assert challenge.groups("heuristic")["ex2"] == ("constituent",)
    assert challenge.groups("subcase")["ex0"] == ("ln_subject/object_swap",)


def test_stress_tests_one_file_per_category():
    files = [CHALLENGE / "multinli_0.9_antonym_matched.jsonl", CHALLENGE / "multinli_0.9_negation_matched.jsonl"]
    challenge = read_challenge_files(files)
    assert len(challenge.pairs) == 5  # the antonym file's trailing blank line is skipped
    ids = [p.id for p in challenge.pairs]
    assert len(set(ids)) == 5 and ids[0] == "multinli_0.9_antonym_matched:1"  # both files use ids 1, 2
    by_file = challenge.groups("file")
    assert sorted(v[0] for v in by_file.values()) == ["multinli_0.9_antonym_matched"] * 2 + ["multinli_0.9_negation_matched"] * 3
    assert challenge.groups("genre")[ids[0]] == ("fiction",) and challenge.fields[ids[0]]["promptID"] == "10"


def test_unknown_field_lists_the_known_ones():
    challenge = read_challenge_files([CHALLENGE / "conj_like.tsv"])
    with pytest.raises(ValueError, match="no field 'heuristic'.*file"):
        challenge.groups("heuristic")


@pytest.mark.parametrize(("content", "line", "words"), [
    ("premise,hypothesis,label\nA b.,C d.,maybe\n", 2, "'maybe'"),
    ("premise,hypothesis,label\nA b.,,e\n", 2, "non-empty hypothesis"),
    ("premise,hypothesis,label\nA b.,C d.,e,extra\n", 2, "3 comma-separated fields"),
    ("first,second\nA,B\n", 1, "premise column"),
])
def test_bad_csv_names_file_and_line(tmp_path, content, line, words):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DataFormatError) as error:
        read_challenge_files([path])
    assert f"{path}, line {line}:" in str(error.value) and words in str(error.value)


def test_mixed_two_and_three_way_labels_are_refused(tmp_path):
    path = tmp_path / "mixed.tsv"
    path.write_text("sentence1\tsentence2\tgold_label\nA b .\tC d .\tnon-entailment\nA b .\tC e .\tneutral\n")
    with pytest.raises(ValueError, match="mix non-entailment"):
        read_challenge_files([path])


def test_real_anli_and_conjnli(shared_data):
    anli = shared_data / "anli_annotated" / "ANLI_analysis_r1_dev.csv"
    conj = shared_data / "conjnli" / "conj_dev.tsv"
    if not anli.is_file() or not conj.is_file():
        pytest.skip("../shared/data lacks anli_annotated/ or conjnli/")
    challenge = read_challenge_files([anli])
    assert len(challenge.pairs) == 1000
    counts: dict[str, int] = {}
    for values in challenge.groups("tags").values():
        for value in values:
            counts[value] = counts.get(value, 0) + 1
    # pairs carrying each tag (a tag listed twice for one pair counts once), counted with csv + ast independently
    assert counts["Reasoning"] == 584 and counts["Numerical"] == 408 and counts["Negation"] == 56
    assert len(read_challenge_files([conj]).pairs) == 623


def test_line_aligned_split_brings_its_three_files(fixtures):
    split = fixtures / "app_data" / "snli" / "esnli_tokenized" / "s1.dev"
    challenge = read_challenge_files([split])
    assert len(challenge.pairs) == 12 and challenge.name == "esnli_tokenized_dev"
    assert [p.name for p in challenge.source_files()] == ["s1.dev", "s2.dev", "labels.dev"]


def test_wilson_interval_known_values():
    from nlivis.analysis.significance import wilson_interval

    low, high = wilson_interval(5, 5)
    assert (round(low, 4), high) == (0.5655, 1.0)  # the bootstrap interval would collapse to [1, 1]
    assert [round(v, 4) for v in wilson_interval(50, 100)] == [0.4038, 0.5962]


def test_invalid_utf8_in_a_csv_names_the_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b'premise,hypothesis,label\n"A b.",C d.,e\n"A\nmultiline",C \xff d.,n\n')
    with pytest.raises(DataFormatError) as error:
        read_challenge_files([path])
    assert f"{path}, line 4:" in str(error.value) and "UTF-8" in str(error.value)  # the byte's own line


def test_a_challenge_file_without_pairs_is_an_input_error(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("premise,hypothesis,label\n")
    with pytest.raises(InputError, match=f"{path}: no pairs to evaluate"):
        read_challenge_files([path])


def test_a_folder_given_as_a_file_says_so(tmp_path):
    """Before: 'DIR: no such file', though the folder is there."""
    from nlivis.data.readers import read_file

    for read in (read_file, lambda path: read_challenge_files([path])):
        with pytest.raises(InputError, match=f"{tmp_path}: is a folder; give a data file"):
            read(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_challenge_files([tmp_path / "missing.csv"])


# ------------------------------------------------------------ issue 22: counterfactual layout, paraphrase files

COUNTERFACTUAL = CHALLENGE / "counterfactual" / "NLI"
KINDS = ("original", "revised_premise", "revised_hypothesis")


def test_counterfactual_folder_is_read_into_contrast_groups():
    from nlivis.data.challenge import CONTRAST_FIELD

    challenge = read_challenge_files([COUNTERFACTUAL])
    assert challenge.files == tuple(COUNTERFACTUAL / kind / "test.tsv" for kind in KINDS)
    assert challenge.contrast_field == CONTRAST_FIELD and challenge.name == "NLI_test"
    assert len(challenge.pairs) == 15 and challenge.labels == NLI_LABELS
    groups = challenge.groups(CONTRAST_FIELD)
    members: dict[str, list[str]] = {}
    for pair_id, (group,) in groups.items():
        members.setdefault(group, []).append(pair_id)
    # original row i (file line i + 2) and rows 2i, 2i+1 of each revised file (lines 2i + 2, 2i + 3)
    assert members == {str(i + 1): [f"original:{i + 2}", f"revised_premise:{2 * i + 2}", f"revised_premise:{2 * i + 3}",
                                    f"revised_hypothesis:{2 * i + 2}", f"revised_hypothesis:{2 * i + 3}"]
                       for i in range(3)}
    assert {challenge.groups("file")[f"{kind}:2"][0] for kind in KINDS} == set(KINDS)
    by_id = {pair.id: pair for pair in challenge.pairs}
    # a cell in CSV quotes (as pandas writes a quote inside a TSV cell) is unquoted
    assert by_id["original:4"].premise == '"Stop" says a sign held by a woman in a yellow vest .'
    assert by_id["revised_premise:7"].premise == 'A man holds a sign that says "Stop" .'  # a quote inside stays
    assert by_id["revised_hypothesis:3"].label == "contradiction"
    assert any("rows 2i and 2i+1" in note for note in challenge.notes)


def test_counterfactual_files_given_one_by_one_are_the_same_set():
    from_folder = read_challenge_files([COUNTERFACTUAL])
    from_files = read_challenge_files([COUNTERFACTUAL / kind / "test.tsv" for kind in KINDS])
    assert from_files.pairs == from_folder.pairs and from_files.fields == from_folder.fields
    revised_only = read_challenge_files([COUNTERFACTUAL / "revised_hypothesis" / "test.tsv"])
    assert revised_only.groups("contrast_group") == {str(line): (str(line // 2),) for line in range(2, 8)}


def copy_counterfactual(tmp_path: Path, splits: tuple[str, ...] = ("test",)) -> Path:
    folder = tmp_path / "NLI"
    for kind in KINDS:
        (folder / kind).mkdir(parents=True)
        for split in splits:
            (folder / kind / f"{split}.tsv").write_bytes((COUNTERFACTUAL / kind / "test.tsv").read_bytes())
    return folder


def test_a_folder_with_several_splits_needs_the_split(tmp_path):
    folder = copy_counterfactual(tmp_path, ("dev", "test"))
    with pytest.raises(InputError, match=r"2 split\(s\) in every one of original, revised_premise, "
                                         r"revised_hypothesis \(dev, test\); give --split NAME"):
        read_challenge_files([folder])
    assert read_challenge_files([folder], split="dev").files[0] == folder / "original" / "dev.tsv"
    with pytest.raises(InputError, match="split 'train' lacks"):
        read_challenge_files([folder], split="train")


def test_a_revised_file_with_the_wrong_row_count_is_named(tmp_path):
    folder = copy_counterfactual(tmp_path)
    path = folder / "revised_premise" / "test.tsv"
    path.write_text(path.read_text() + "A b .\tC d .\tneutral\n")
    with pytest.raises(InputError) as error:
        read_challenge_files([folder])
    assert f"{path}: expected 6 rows (2 for each of the 3 originals), found 7" in str(error.value)


def test_a_dropped_row_keeps_the_rows_aligned(tmp_path):
    folder = copy_counterfactual(tmp_path)
    path = folder / "revised_premise" / "test.tsv"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].rsplit("\t", 1)[0] + "\t-"  # row 0 has no gold label: left out, still counted as a row
    path.write_text("\n".join(lines[:3]) + "\n\n" + "\n".join(lines[3:]) + "\n")  # and a blank line is no row
    challenge = read_challenge_files([folder])
    assert challenge.result.dropped_no_gold == 1 and len(challenge.pairs) == 14
    groups = challenge.groups("contrast_group")
    assert groups["revised_premise:3"] == ("1",) and groups["revised_premise:5"] == ("2",)
    assert groups["revised_premise:8"] == ("3",)


def test_a_counterfactual_file_without_its_header_is_named(tmp_path):
    folder = copy_counterfactual(tmp_path)
    path = folder / "revised_hypothesis" / "test.tsv"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))
    with pytest.raises(DataFormatError, match=f"{path}, line 1: expected a header line sentence1"):
        read_challenge_files([folder])


def test_a_folder_of_another_layout_is_still_refused(tmp_path):
    (tmp_path / "original").mkdir()
    with pytest.raises(InputError, match="is a folder; give a data file"):
        read_challenge_files([tmp_path])


def test_paraphrase_files_with_zero_one_true_false_and_named_labels():
    from nlivis.data.records import PARAPHRASE_LABELS

    tsv = read_challenge_files([CHALLENGE / "paraphrase_like.tsv"])  # question1 / question2 / is_duplicate, 0 / 1
    assert tsv.labels == PARAPHRASE_LABELS
    assert [p.label for p in tsv.pairs] == ["duplicate", "not_duplicate"] * 3
    assert tsv.pairs[0].premise == "How do I learn to cook rice ?"
    assert tsv.groups("category")["3"] == ("names and things",)
    csv_file = read_challenge_files([CHALLENGE / "paraphrase_like.csv"])  # true / TRUE / false / False
    assert [p.label for p in csv_file.pairs] == ["duplicate", "not_duplicate"] * 2
    jsonl = read_challenge_files([CHALLENGE / "paraphrase_like.jsonl"])  # 1 / 0, names, JSON true
    assert [p.label for p in jsonl.pairs] == ["duplicate", "not_duplicate", "duplicate", "not_duplicate", "duplicate"]
    assert jsonl.groups("tags")["2"] == ("names and things", "science") and jsonl.groups("tags")["5"] == (NO_VALUE,)


def test_a_paraphrase_label_outside_the_set_names_the_line(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("question1\tquestion2\tis_duplicate\nWhy ?\tHow ?\t1\nWhy ?\tWho ?\t2\n")
    with pytest.raises(DataFormatError) as error:
        read_challenge_files([path])
    assert f"{path}, line 3:" in str(error.value) and "duplicate / not_duplicate" in str(error.value)


def test_nli_and_paraphrase_labels_in_one_set_are_refused(tmp_path):
    nli = tmp_path / "nli.tsv"
    nli.write_text("premise\thypothesis\tlabel\nA b .\tC d .\te\n")
    with pytest.raises(InputError) as error:
        read_challenge_files([nli, CHALLENGE / "paraphrase_like.tsv"])
    message = str(error.value)
    assert "labels mix paraphrase ('duplicate' on line 2 of" in message and f"'entailment' on line 2 of {nli}" in message

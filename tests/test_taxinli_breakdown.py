"""TaxiNLI as a tags file: accuracy per category and genre with intervals, counts and the majority baseline,
the reference models on the same pairs, matched and mismatched side by side; through `evaluate --by-tag
--tags-file` on a tiny checkpoint and the hand-written fixture, and (slow) on the real file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlivis.analysis.breakdown import (REFERENCE_SUFFIX, table7_with_counts, taxonomy_breakdown, taxonomy_long,
                                       taxonomy_report)
from nlivis.store.predictions import Prediction
from nlivis.cli import main
from nlivis.data.records import Pair
from nlivis.data.taxonomies import TAXINLI_CATEGORIES, join_to_pairs, read_taxinli
from tests.fixtures.training.helpers import FIXTURE_DIR, trained_tiny

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "data" / "taxinli_sample.tsv"
ROOT = Path(__file__).resolve().parents[1]


def fixture_pairs() -> list[Pair]:
    """The fixture's pairs as a dev split would hold them: the repeated pairID t6n renamed `-line<N>`."""
    rows = read_taxinli(FIXTURE).rows
    ids = [row.pair_id for row in rows]
    return [Pair(row.pair_id if ids.count(row.pair_id) == 1 else f"{row.pair_id}-line{row.line}", row.premise,
                 row.hypothesis, row.label, row.genre) for row in rows]


def always(label: str) -> list[Prediction]:
    return [Prediction(pair.id, pair.label, label, (0.4, 0.3, 0.3)) for pair in fixture_pairs()]


def test_category_rows_carry_counts_intervals_majority_and_the_reference_models_on_the_same_pairs():
    rows = join_to_pairs(read_taxinli(FIXTURE).rows, fixture_pairs())
    table = taxonomy_breakdown({"ours": always("entailment")}, rows).set_index(["model", "tag"])
    ours = table.loc["ours"]
    assert list(ours.index) == list(TAXINLI_CATEGORIES)
    syntactic = ours.loc["syntactic_linguistic"]  # t3e (entailment), t4c (contradiction, cell 2), t5e (entailment)
    assert (syntactic["count"], syntactic["correct"]) == (3, 2) and syntactic["accuracy"] == pytest.approx(2 / 3)
    assert syntactic["ci_low"] < 2 / 3 < syntactic["ci_high"]
    assert syntactic["majority_label"] == "entailment" and syntactic["majority_accuracy"] == pytest.approx(2 / 3)
    esim = table.loc[f"ESIM{REFERENCE_SUFFIX}"]
    # ESIM's answers on t3e, t4c, t5e: contradiction, contradiction, entailment → 2 of 3 right
    assert esim.loc["syntactic_linguistic", "count"] == 3 and esim.loc["syntactic_linguistic", "correct"] == 2
    # BERT's answers on t6n (neutral pair) and t6n (contradiction pair): both right
    assert table.loc[f"BERT-base{REFERENCE_SUFFIX}", "causal_reasoning"]["correct"] == 2
    flags = taxonomy_breakdown({"ours": always("entailment")}, rows).groupby("model")["reference"].first()
    assert not flags["ours"] and flags[f"bag of words{REFERENCE_SUFFIX}"]
    genres = taxonomy_breakdown({"ours": always("neutral")}, rows, by="genre").set_index(["model", "tag"])
    assert genres.loc[("ours", "oup"), "count"] == 2 and genres.loc[("ours", "oup"), "correct"] == 1


def test_matched_and_mismatched_side_by_side_with_the_references_as_columns():
    pairs = fixture_pairs()
    matched = [p for p in pairs if p.genre in ("fiction", "travel", "government", "slate")]
    mismatched = [p for p in pairs if p not in matched]
    rows = read_taxinli(FIXTURE).rows
    halves = {"matched": ({"ours": always("entailment")}, join_to_pairs(rows, matched)),
              "mismatched": ({"ours": always("entailment")}, join_to_pairs(rows, mismatched))}
    wide = table7_with_counts(taxonomy_long(halves))
    assert {"matched pairs", "mismatched pairs", "matched ours", f"mismatched ESIM{REFERENCE_SUFFIX}"} <= set(wide.columns)
    assert wide.loc["negation_logic", "matched pairs"] == 1 and wide.loc["negation_logic", "mismatched pairs"] == 1
    assert wide.loc["syntactic_linguistic", "matched pairs"] + wide.loc["syntactic_linguistic", "mismatched pairs"] == 3


def test_a_file_that_joins_no_pair_of_the_split_is_an_error():
    with pytest.raises(ValueError, match="none of its 8 rows"):
        taxonomy_report(always("neutral"), "ours", read_taxinli(FIXTURE), [Pair("x", "A.", "B.", "neutral")])


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    return trained_tiny(tmp_path_factory.mktemp("taxinli"))


def test_evaluate_by_tag_with_a_taxinli_file(trained, tmp_path, capsys):
    """A MultiNLI-style dev file holding the fixture's pairs (one pairID twice, as MultiNLI dev mismatched
    has them): every category with its file count, the three reference models, and the genres."""
    data = tmp_path / "mnli"
    data.mkdir()
    lines = [json.dumps({"gold_label": row.label, "sentence1": row.premise, "sentence2": row.hypothesis,
                         "pairID": row.pair_id, "genre": row.genre}) for row in read_taxinli(FIXTURE).rows]
    (data / "multinli_1.0_dev_matched.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["evaluate", str(trained), "--dataset", "mnli", "--split", "dev_matched", "--data-dir", str(data),
                 "--by-tag", "--tags-file", str(FIXTURE), "--json", "--cache-dir", str(trained.parent / "cache")])
    output = json.loads(capsys.readouterr().out)
    assert code == 0
    ours = {row["tag"]: row for row in output["by_tag"] if row["model"] == "tiny"}
    assert list(ours) == list(TAXINLI_CATEGORIES)
    assert {tag: row["count"] for tag, row in ours.items()} == read_taxinli(FIXTURE).category_counts()
    assert {row["source"] for row in output["by_tag"]} == {"taxinli"}
    models = {row["model"] for row in output["by_tag"]}
    assert models == {"tiny", *(f"{name}{REFERENCE_SUFFIX}" for name in ("ESIM", "BERT-base", "bag of words"))}
    assert "8 pairs of this split" in output["tag_sources"] and "line 6 syntactic_linguistic = 2" in output["tag_sources"]
    genres = {row["tag"]: row["count"] for row in output["by_genre"] if row["model"] == "tiny"}
    assert genres == {"fiction": 2, "government": 1, "letters": 1, "oup": 2, "slate": 1, "travel": 1}


def test_a_taxinli_file_of_another_split_stops_evaluate_before_any_work(tmp_path, capsys):
    code = main(["evaluate", str(tmp_path / "no-checkpoint"), "--dataset", "snli", "--split", "dev",
                 "--data-dir", str(FIXTURE_DIR), "--by-tag", "--tags-file", str(FIXTURE)])
    assert code == 2 and "none of its 8 TaxiNLI rows is a pair of snli_dev" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("half", ["matched", "mismatched"])
def test_the_real_file_gives_every_category_with_the_files_counts_and_the_references(half, shared_data, capsys):
    """The issue's check: `evaluate --by-tag --tags-file taxinli10k_MNLIDev.tsv` on MultiNLI dev matched and
    mismatched gives the 15 categories, with counts that add up over the two halves to the file's, and ESIM,
    BERT and bag of words per category on the same pairs."""
    import csv

    from nlivis.data.taxonomies import TAXINLI_FILE

    path = shared_data / TAXINLI_FILE
    code = main(["evaluate", str(ROOT / "checkpoints" / "esan-mnli-small"), "--dataset", "mnli-small", "--split",
                 f"mnli_dev_{half}", "--data-dir", str(shared_data), "--by-tag", "--tags-file", str(path), "--json"])
    output = json.loads(capsys.readouterr().out)
    assert code == 0
    with open(path, encoding="utf-8", newline="") as handle:
        table = [row for row in csv.DictReader(handle, delimiter="\t")
                 if (row["genre"] in ("fiction", "government", "slate", "telephone", "travel")) == (half == "matched")]
    ours = {row["tag"]: row["count"] for row in output["by_tag"] if row["model"] == "esan-mnli-small"}
    assert ours == {name: sum(row[name] != "0" for row in table) for name in TAXINLI_CATEGORIES}
    esim = {row["tag"]: row for row in output["by_tag"] if row["model"] == f"ESIM{REFERENCE_SUFFIX}"}
    for name in TAXINLI_CATEGORIES:
        tagged = [row for row in table if row[name] != "0"]
        assert esim[name]["count"] == len(tagged)
        assert esim[name]["correct"] == sum(row["esim"] == row["label"] for row in tagged)


def test_the_pair_card_finds_a_pair_by_id_by_renamed_id_and_typed_by_its_sentences():
    from nlivis.analysis.breakdown import pair_taxonomy

    rows = read_taxinli(FIXTURE).rows
    card = pair_taxonomy(rows, "t1e", "The kettle whistled in the kitchen.", "Something in the kitchen made a sound.")
    assert card["categories"] == ["lexical_linguistic", "world_knowledge"] and card["genre"] == "fiction"
    assert card["references"] == {f"bag of words{REFERENCE_SUFFIX}": "neutral", f"BERT-base{REFERENCE_SUFFIX}": "entailment",
                                  f"ESIM{REFERENCE_SUFFIX}": "entailment"}
    renamed = pair_taxonomy(rows, "t6n-line9", "Spindles turned all night.", "The spindles never moved.")
    assert renamed["label"] == "contradiction" and renamed["pair_id"] == "t6n"
    typed = pair_taxonomy(rows, None, "Ferries  leave the harbour every hour.", "The ferries are always full.")
    assert typed["categories"] == ["quantifier_logic", "temporal_reasoning"]
    assert pair_taxonomy(rows, None, "Nothing here.", "Nor here.") is None
    assert pair_taxonomy(rows, "t1e-line3", "Other.", "Text.") is None

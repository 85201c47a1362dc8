"""The data-map listing (nlivis.workflows.datamap.datamap_listing) on hand-made dynamics, its readers injected:
text from the local split by id, a second map's columns, predictions and the notes that say what is missing."""
from __future__ import annotations

from nlivis.analysis.datamap import data_map, parse_selection
from nlivis.data.records import Pair
from nlivis.workflows.datamap import MAX_PREDICTED, ListingSources, TrainedAs, datamap_listing, remade_pairs
from nlivis.store.dynamics import AUGMENTED_SPLIT, pair_digest
from tests.test_analysis_datamap import augmented_dynamics, dynamics

SPLIT = [Pair(id=f"p{i}", premise=f"premise {i}", hypothesis=f"hypothesis {i}", label="entailment") for i in range(3)]
"""The local copy of snli_test: pairs p0–p2 (p3 is missing from it)."""


def sources(asked: list | None = None) -> ListingSources:
    def predict(model: str, split: str, ids: list[str]):
        if asked is not None:
            asked.append((model, split, tuple(ids)))
        return {pid: f"{model} says {pid}" for pid in ids}, None

    return ListingSources(rows=lambda split: {p.id: i for i, p in enumerate(SPLIT)} if split == "snli_test" else {},
                          pairs=lambda split: SPLIT if split == "snli_test" else [], predict=predict)


def test_a_listing_joins_text_by_id_and_says_which_pairs_have_none():
    points = data_map(dynamics())
    found = datamap_listing(points, parse_selection("box:0,0.5,0,1"), "row", sources())
    assert found.frame["id"].tolist() == ["p0", "p1", "p2", "p3"]
    assert found.frame["row"].tolist()[:3] == [0, 1, 2] and found.frame["row"].isna().iloc[3]
    assert found.frame["premise"].tolist() == ["premise 0", "premise 1", "premise 2", ""]
    assert "column" not in found.frame and "original" not in found.frame
    assert found.notes == ["1 of these pairs are not in the local copy of their split, so their text is not shown"]


def test_a_listing_adds_the_compared_map_and_each_predictors_label():
    points = data_map(dynamics())
    other = data_map(dynamics(ids=["p1", "p0", "x", "y", "z"]))
    asked: list = []
    found = datamap_listing(points, parse_selection("region:hard-to-learn"), None, sources(asked),
                            compare=("other", other, None), predictors=["gcnn"])
    assert found.frame["id"].tolist() == ["p2"]
    assert found.frame["other region"].tolist() == [None]  # p2 is not on the other map
    assert found.frame["gcnn predicts"].tolist() == ["gcnn says p2"] and asked == [("gcnn", "snli_test", ("p2",))]
    missing = datamap_listing(points, parse_selection("region:easy-to-learn"), None, sources(),
                              compare=("other", None, "no dynamics recorded"))
    assert missing.frame["id"].tolist() == ["p1"] and missing.notes == ["other: no dynamics recorded"]
    compared = datamap_listing(points, parse_selection("region:easy-to-learn"), None, sources(),
                               compare=("other", other, None))
    assert compared.frame["other region"].tolist() == [other.region[0]]  # p1 is the other map's first column


def test_a_long_listing_is_not_predicted():
    ids = [f"q{i}" for i in range(MAX_PREDICTED + 1)]
    points = data_map(dynamics(by_epoch=[[(0.1, False)] * len(ids)] * 3, ids=ids,
                               gold=[0] * len(ids)))
    asked: list = []
    found = datamap_listing(points, parse_selection("region:hard-to-learn"), None, sources(asked), predictors=["gcnn"])
    assert len(found.frame) == len(ids) and not asked
    assert any(note.startswith(f"predictions are shown for lists of at most {MAX_PREDICTED:,} pairs")
               for note in found.notes)


def test_augmented_pairs_are_listed_with_their_edited_text_where_it_was_made_again():
    points = data_map(augmented_dynamics())
    pair = Pair(id="p0~antonym~3", premise="premise 0", hypothesis="edited 0", label="contradiction")
    edited = remade_pairs({pair.id: pair}, {
        pair.id: TrainedAs(pair_digest(pair.premise, pair.hypothesis, pair.label), "contradiction"),
        "p2~hypernym~1": TrainedAs("0123456789ab", "entailment")})
    everything = parse_selection("box:0,1,0,1")
    found = datamap_listing(points, everything, "row", sources(), edited=edited)
    line = found.frame.set_index("id")
    assert (line.loc["p0~antonym~3", "hypothesis"], line.loc["p0~antonym~3", "gold"]) == ("edited 0", "contradiction")
    assert line["row"].isna()["p0~antonym~3"] and line.loc["p0~antonym~3", "split"] == AUGMENTED_SPLIT
    assert line.loc["p2~hypernym~1", "hypothesis"] == "hypothesis 2" and line.loc["p2~hypernym~1", "row"] == 2, (
        "one not made again opens as its original")
    assert ("1 augmented pairs are listed with their edited text, made again from the run's training pairs (they "
            "open as that text)") in found.notes
    assert "1 of these pairs are not in the local copy of their split, so their text is not shown" in found.notes, (
        "p3 only: an edited pair has no row by design")
    assert edited.note in found.notes
    assert ("1 augmented pairs are listed with the training pair each was made from (their edited text is not made "
            "again as the run made it: they open as that pair)") in found.notes, "p2's recorded digest differs"
    as_before = datamap_listing(points, everything, "row", sources())
    assert as_before.frame.set_index("id").loc["p0~antonym~3", "hypothesis"] == "hypothesis 0"


def made(pid: str, hypothesis: str, label: str = "contradiction") -> Pair:
    return Pair(id=pid, premise="a premise", hypothesis=hypothesis, label=label)


def test_a_pair_made_again_is_the_runs_only_where_its_digest_matches():
    """The edit engine changes between versions: a pair made again under an id the run trained on may carry another
    text or label, and one the run trained on may not be made at all; only a matching digest makes it the run's."""
    same, other_text, other_label = made("a~synonym~h1", "same"), made("b~hypernym~p2", "new"), made("c~swap~x", "x")
    recorded = {"a~synonym~h1": TrainedAs(pair_digest("a premise", "same", "contradiction"), "contradiction"),
                "b~hypernym~p2": TrainedAs(pair_digest("a premise", "old", "contradiction"), "contradiction"),
                "c~swap~x": TrainedAs(pair_digest("a premise", "x", "neutral"), "neutral"),
                "d~number~h3": TrainedAs("0123456789ab", "contradiction")}
    remade = remade_pairs({p.id: p for p in (same, other_text, other_label, made("e~not~the~runs", "e"))}, recorded)
    assert dict(remade) == {"a~synonym~h1": same} and remade.checked and remade.differing == 3
    assert remade.note.startswith("the edited text of 1 of the run's 4 augmented pairs was made again and matches")
    assert "the other 3 differently or no longer makes them" in remade.note


def test_a_run_without_digests_keeps_the_ids_made_again_with_their_trained_label_and_says_they_are_unchecked():
    recorded = {"a~synonym~h1": TrainedAs(None, "contradiction"), "b~swap~x": TrainedAs(None, "neutral"),
                "d~number~h3": TrainedAs(None, "contradiction")}
    remade = remade_pairs({"a~synonym~h1": made("a~synonym~h1", "maybe"), "b~swap~x": made("b~swap~x", "b"),
                           "z~swap~x": made("z~swap~x", "z")}, recorded)
    assert list(remade) == ["a~synonym~h1"] and not remade.checked and remade.differing == 2, (
        "b is made with another label than the one it was trained with; d is not made; z is not the run's")
    assert "recorded no digest" in remade.note and "cannot be checked" in remade.note
    assert "with the gold label each was trained with" in remade.note
    assert "the other 2 are no longer made, or made with another label" in remade.note
    assert not remade_pairs({}, {}).checked, "a run with no augmented pairs has nothing to check"

"""Targeted augmentation (issue 23 §2): `train --augment` on the tiny fixture adds only edits whose label logic
fixes, with ids derived from their originals, counts recorded, deterministically, marked in the training
dynamics and the data map, consistent across a stop and --resume; kind and ratio validation; the ratio cap;
the filters on hand-written sentences."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from nlivis.analysis.datamap import data_map
from nlivis.analysis.edit_expectations import LABEL
from nlivis.analysis.edits import propose_edits
from nlivis.cli import main
from nlivis.data.records import Pair
from nlivis.features.dataset import analyse_pairs
from nlivis.store.dynamics import AUGMENTED_SPLIT, read_dynamics
from nlivis.analysis.parsed import parse_sentences
from nlivis.analysis import lexicons
from nlivis.analysis.inflection import base_form
from nlivis.analysis.self_pairs import (NEGATED_COPY_SWAP_LEFT_OUT, NOT_HAND_WRITTEN, REPEATED_WORD, REPLACEMENT_SAID,
                                       SWITCHED_OFF_GROUPS, misread_main_verb,
                                       negated_copy, negated_self_pair_edits, self_pair_edits)
from nlivis.training import augment
from nlivis.training.augment import (AUGMENT_KINDS, Candidate, Pool, augment_choices, draw, parse_kinds,
                                     shares, unique_ids)
from nlivis.training.request import TrainRequest
from nlivis.training.runs import train_command
from nlivis.training.stopping import TrainingStopped
from tests.fixtures.training.helpers import FIXTURE_DIR, TINY_CONFIG, StopAfter, train_tiny

ALL_KINDS = tuple(AUGMENT_KINDS)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("augment-cache")


@pytest.fixture(scope="module")
def every_word_known():
    """The fixture's 40 hand-written pairs use few words three times: every word it uses counts as known."""
    patch = pytest.MonkeyPatch()
    patch.setattr(augment, "MIN_WORD_COUNT", 1)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def augmented_run(tmp_path_factory, cache_dir, every_word_known, wordnet):
    out = tmp_path_factory.mktemp("augmented") / "tiny"
    train_tiny(out, cache_dir, epochs=3, augment=ALL_KINDS, augment_ratio=1.0)
    return out


def fixture_pairs() -> list[Pair]:
    from nlivis.data.readers import read_nli_jsonl

    return [p for p in read_nli_jsonl(FIXTURE_DIR / "snli_1.0_train.jsonl").pairs if p.label]


# ------------------------------------------------------------------------------------------ validation


def test_kinds_are_validated_with_a_clear_message():
    assert parse_kinds("negation, antonym,antonym") == ("antonym", "negation")  # canonical order, once each
    with pytest.raises(ValueError, match=r"unknown augmentation kind\(s\) 'antonyms'; choose from antonym, exclusive"):
        parse_kinds("antonyms")
    with pytest.raises(ValueError, match="invariances, not label-fixing"):
        parse_kinds("typo")
    with pytest.raises(ValueError, match="at least one"):
        parse_kinds(" , ")
    assert [kind for kind, _ in augment_choices()] == list(AUGMENT_KINDS)
    assert all(help_text for _, help_text in augment_choices())


def test_request_checks_the_ratio_and_needs_kinds_for_it():
    config = {"model": {"name": "gcnn"}}
    with pytest.raises(ValueError, match="above 0 and at most 20"):
        TrainRequest(config, "snli", FIXTURE_DIR, "out", augment=("antonym",), augment_ratio=0)
    with pytest.raises(ValueError, match="without augmentation kinds"):
        TrainRequest(config, "snli", FIXTURE_DIR, "out", augment_ratio=0.5)
    request = TrainRequest(config, "snli", FIXTURE_DIR, "out", augment=["synonym", "antonym"])
    assert request.augment == ("antonym", "synonym") and request.augment_ratio == augment.DEFAULT_AUGMENT_RATIO
    ratio = augment.DEFAULT_AUGMENT_RATIO
    assert request.identity({"model": {"name": "gcnn"}})["augment"] == f"antonym,synonym at ratio {ratio:g}"
    assert "augment" not in TrainRequest(config, "snli", FIXTURE_DIR, "out").identity({"model": {"name": "gcnn"}})
    shared = TrainRequest(config, "snli", FIXTURE_DIR, "out", augment=["hyponym"], augment_negated_share=1)
    assert shared.identity(config)["augment"] == f"hyponym at ratio {ratio:g}, negated share 1"
    assert request.augment_negated_share == augment.DEFAULT_NEGATED_SHARE == 0
    with pytest.raises(ValueError, match="from 0 to 1"):
        TrainRequest(config, "snli", FIXTURE_DIR, "out", augment=("hyponym",), augment_negated_share=2)
    with pytest.raises(ValueError, match="without augmentation kinds"):
        TrainRequest(config, "snli", FIXTURE_DIR, "out", augment_negated_share=0.5)
    exclusive = TrainRequest(config, "snli", FIXTURE_DIR, "out", augment=["exclusive"], augment_negated_share=1,
                             augment_exclusive_twins=True)
    assert exclusive.identity(config)["augment"] == f"exclusive at ratio {ratio:g}, negated share 1, exclusive twins"
    with pytest.raises(ValueError, match="only with a negated share above 0"):
        TrainRequest(config, "snli", FIXTURE_DIR, "out", augment=("exclusive",), augment_exclusive_twins=True)
    with pytest.raises(ValueError, match="without augmentation kinds"):
        TrainRequest(config, "snli", FIXTURE_DIR, "out", augment_exclusive_twins=True)


@pytest.mark.parametrize("arguments, message", [
    (["--augment", "antonym,colour"], "unknown augmentation kind(s) 'colour'"),
    (["--augment", "antonym", "--augment-ratio", "-1"], "--augment-ratio: the value must be above 0"),
    (["--augment", "antonym", "--augment-ratio", "nan"], "--augment-ratio: the value must be a finite number"),
    (["--augment-ratio", "0.5"], "without augmentation kinds"),
    (["--augment", "hyponym", "--augment-negated-share", "1.5"],
     "--augment-negated-share: the value must be from 0 to 1"),
    (["--augment-negated-share", "0.5"], "without augmentation kinds"),
    (["--augment", "exclusive", "--augment-exclusive-twins"], "only with a negated share above 0"),
    (["--augment", "number", "--augment-negated-share", "1", "--augment-exclusive-twins"], "need the exclusive kind"),
])
def test_the_command_line_refuses_bad_kinds_and_ratios_in_one_line(tmp_path, capsys, arguments, message):
    code = None
    try:
        code = main(["train", "--config", str(TINY_CONFIG), "--dataset", "snli", "--data-dir", str(FIXTURE_DIR),
                     "--out", str(tmp_path / "run"), *arguments])
    except SystemExit as exit_:  # argparse's own exit for a bad type
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_train_command_carries_the_augmentation(tmp_path):
    command = train_command("esan", "snli-small", tmp_path, tmp_path / "out", augment=("antonym", "negation"),
                            augment_ratio=0.25)
    assert command[-4:] == ["--augment", "antonym,negation", "--augment-ratio", "0.25"]
    assert "--augment" not in train_command("esan", "snli-small", tmp_path, tmp_path / "out")
    twins = train_command("esan", "snli-small", tmp_path, tmp_path / "out", augment=("exclusive", "number"),
                          augment_ratio=0.35, augment_negated_share=1, augment_exclusive_twins=True)
    assert twins[-3:] == ["--augment-negated-share", "1", "--augment-exclusive-twins"]


# ------------------------------------------------------------------------------------------- the draw


def test_shares_split_the_cap_evenly_and_pass_on_what_a_kind_cannot_use():
    assert shares({"a": 100, "b": 100, "c": 100}, 30) == {"a": 10, "b": 10, "c": 10}
    assert shares({"a": 2, "b": 100, "c": 100}, 30) == {"a": 2, "b": 14, "c": 14}
    assert shares({"a": 2, "b": 3, "c": 0}, 30) == {"a": 2, "b": 3, "c": 0}
    assert shares({"a": 5, "b": 5}, 3) == {"a": 2, "b": 1}
    assert shares({"a": 5}, 0) == {"a": 0}


def _candidates(count: int) -> Pool:
    labels = ("entailment", "neutral", "contradiction")
    return Pool([Candidate(i % 7, "synonym" if i % 2 else "antonym", "s", i % 5, f"w{i % 4}", f"r{i % 3}",
                           f"premise {i}", f"hypothesis {i}", labels[i % 3], "hypothesis") for i in range(count)], {})


def test_the_ratio_caps_the_draw_which_is_deterministic_given_the_seed():
    pool = _candidates(200)
    chosen, available = draw(pool, ("antonym", "synonym"), 0.25, 40, seed=1)
    assert len(chosen) == 9 <= 0.25 * 40 and available == {"antonym": 100, "synonym": 100}
    assert sorted(Counter(c.label for c in chosen).values()) == [3, 3, 3]  # the labels share the cap alike
    assert set(Counter(c.kind for c in chosen)) == {"antonym", "synonym"}  # each label's share split among kinds
    assert draw(pool, ("antonym", "synonym"), 0.25, 40, seed=1)[0] == chosen
    assert draw(pool, ("antonym", "synonym"), 0.25, 40, seed=2)[0] != chosen
    assert len(draw(pool, ("antonym",), 10.0, 40, seed=1)[0]) == 99  # fewer than the cap: all it can balance
    many, _ = draw(pool, ("synonym",), 0.75, 40, seed=3)
    assert Counter(c.label for c in many) == {"entailment": 10, "neutral": 10, "contradiction": 10}
    contradictions = [c for c in many if c.label == "contradiction"]
    assert len({(c.word, c.replacement) for c in contradictions[:2]}) == 2  # alternating word changes
    only_contradiction = Pool([c for c in pool.candidates if c.label == "contradiction"], {})
    assert len(draw(only_contradiction, ("antonym",), 0.5, 40, seed=1)[0]) == 20  # no other label: all to it


def _stratified_pool() -> Pool:
    """One-word edits that are mostly contradictions, long pairs that are mostly entailments, and a few
    negated hypotheses: the shape of a cue-blind augmentation's pool."""
    rows = ([("antonym", "A cat naps.", "A dog naps.", "contradiction")] * 60
            + [("synonym", "A cat naps.", "A kitty naps.", "entailment")] * 20
            + [("hyponym", "A cat naps.", "A kitten naps.", "neutral")] * 20
            + [("synonym", "A boy runs in a park.", "Some children are playing outdoors today.", "entailment")] * 60
            + [("antonym", "A boy runs in a park.", "An old woman reads her newspaper at home.", "contradiction")] * 25
            + [("hyponym", "A boy runs in a park.", "A small boy jogs through a large park.", "neutral")] * 25
            + [("synonym", "The cat naps.", "The cat is not awake.", "contradiction")] * 30)
    return Pool([Candidate(i, kind, "s", 1, "w", f"r{i % 5}", f"{premise} {i}", f"{hypothesis} {i}", label,
                           "hypothesis")
                 for i, (kind, premise, hypothesis, label) in enumerate(rows)], {})


def test_the_draw_balances_the_labels_within_every_cue_stratum_so_no_cue_tells_the_label():
    pool = _stratified_pool()
    kinds = ("antonym", "synonym", "hyponym")
    before = augment.label_balanced_draw(pool, kinds, 10.0, 100, seed=1)
    chosen, _ = draw(pool, kinds, 10.0, 100, seed=1)
    record = augment.cue_record([], before, chosen)
    assert record["added_before"]["changed_words"] > 0.1 and record["added_before"]["negation_side"] > 0.05
    assert record["added_after"] == {"changed_words": 0.0, "negation_side": 0.0}
    by_stratum = Counter((augment.cue_stratum(c), c.label) for c in chosen)
    assert sorted(set(by_stratum.values())) == [20, 25]  # each full stratum: its smallest label's count
    assert not any(c.hypothesis.startswith("The cat is not") for c in chosen)  # a stratum lacking labels: none
    smaller, _ = draw(pool, kinds, 0.3, 100, seed=1)  # 30: ten per label, shared between the strata alike
    assert Counter(c.label for c in smaller) == {"entailment": 10, "neutral": 10, "contradiction": 10}
    assert augment.cue_record([], [], smaller)["added_after"]["changed_words"] < 0.01


def _twin_pool() -> Pool:
    """For each of 40 premises: its negated copy's hyponym entailment, hypernym neutral, number contradiction and
    subject hypernym entailment, and the unnegated twins (neutral, entailment, contradiction, entailment), the
    hyponym's twin only a twin; 20 more twin-only neutrals without a negated copy, and 60 other one-word pairs."""
    rows = []
    for i in range(40):
        for kind, side, word, new, negated_label, twin_label, subject in (
                ("hyponym", "hypothesis", "car", "jeep", "entailment", "neutral", False),
                ("hyponym", "premise", "car", "jeep", "neutral", "entailment", False),
                ("number", "hypothesis", "Two", "Three", "contradiction", "contradiction", True),
                ("hypernym", "hypothesis", "boys", "people", "entailment", "entailment", True),
                ("hyponym", "premise", "boys", "guys", "neutral", "neutral", True)):
            for source, label, verb in (("n", negated_label, "are not driving"), ("s", twin_label, "are driving")):
                changed = (f"{new} boys {verb} a car {i}" if subject and word == "Two"
                           else f"Two {new} {verb} a car {i}" if subject else f"Two boys {verb} a {new} {i}")
                same = f"Two boys {verb} a car {i}"
                premise, hypothesis = (same, changed) if side == "hypothesis" else (changed, same)
                rows.append(Candidate(i, kind, source, 1, word, new, premise, hypothesis, label, side,
                                      twin_only=source == "s" and label == "neutral"))
    rows += [Candidate(100 + i, "hyponym", "s", 1, "dog", "puppy", f"A dog runs {i}", f"A puppy runs {i}",
                       "neutral", "hypothesis", twin_only=True) for i in range(20)]
    labels = ("entailment", "neutral", "contradiction")
    rows += [Candidate(200 + i, "synonym", "h", 1, "w", f"r{i % 4}", f"A cat naps {i}", f"A kitty naps {i % 3} {i}",
                       labels[i % 3], "hypothesis") for i in range(60)]
    return Pool(rows, {})


def test_the_negated_share_draws_negated_copies_each_with_its_twin_mirrored_ones_first():
    pool, kinds = _twin_pool(), ("number", "synonym", "hypernym", "hyponym")
    default, _ = draw(pool, kinds, 10.0, 100, seed=1)
    assert default and not any(c.source == "n" or c.twin_only for c in default)  # share 0: neither
    chosen, _ = draw(pool, kinds, 0.6, 100, seed=1, negated_share=0.5)  # 20 a label, 10 of them twins
    negated = [(c, chosen[i + 1]) for i, c in enumerate(chosen) if c.source == "n"]
    assert len(negated) == 15 and all((n.original, n.kind, n.side, n.word) == (t.original, t.kind, t.side, t.word)
                                      and t.source == "s" for n, t in negated)
    types = Counter((n.label, t.label) for n, t in negated)
    assert types == {("contradiction", "contradiction"): 5, ("entailment", "neutral"): 5, ("neutral", "entailment"): 5}
    assert Counter(c.label for c in chosen) == {"entailment": 20, "neutral": 20, "contradiction": 20}
    assert augment.cue_record([], [], chosen)["added_after"] == {"changed_words": 0.0, "negation_side": 0.0}
    assert not any(c.twin_only for c in chosen if c not in {t for _, t in negated})  # a twin only as a twin
    everything, _ = draw(pool, kinds, 10.0, 100, seed=1, negated_share=1.0)  # beyond the mirrored: parallel
    pairs = Counter((c.label, everything[i + 1].label) for i, c in enumerate(everything) if c.source == "n")
    assert pairs == {("contradiction", "contradiction"): 40, ("entailment", "neutral"): 40,
                     ("neutral", "entailment"): 40}
    fewer_mirrored = Pool([c for c in pool.candidates
                           if not (c.kind == "hyponym" and c.original >= 10 and c.word == "car")], {})
    mixed, _ = draw(fewer_mirrored, kinds, 10.0, 100, seed=1, negated_share=1.0)
    pairs = Counter((c.label, mixed[i + 1].label) for i, c in enumerate(mixed) if c.source == "n")
    assert pairs == {("contradiction", "contradiction"): 40, ("entailment", "neutral"): 10,
                     ("neutral", "entailment"): 10, ("entailment", "entailment"): 30, ("neutral", "neutral"): 30}
    assert augment.cue_record([], [], mixed)["added_after"] == {"changed_words": 0.0, "negation_side": 0.0}


def _with_exclusive_twins(pool: Pool) -> Pool:
    """`pool` and, for each of its 40 premises, the negated copy's object swapped for an exclusive one (neutral)
    with its twin (contradiction)."""
    rows = []
    for i in range(40):
        for source, label, verb in (("n", "neutral", "are not driving"), ("s", "contradiction", "are driving")):
            rows.append(Candidate(i, "exclusive", source, 4, "car", "bus", f"Two boys {verb} a car {i}",
                                  f"Two boys {verb} a bus {i}", label, "hypothesis"))
    return Pool([*pool.candidates, *rows], {})


def test_exclusive_twins_come_after_the_mirrored_ones_and_number_swaps_and_parallel_halves_balance_them():
    """A (neutral, contradiction) unit is balanced by no pairing of the other types: j of them come with j number
    swaps' negated pairs alone, j (neutral, neutral) units' twins alone and j more (entailment, entailment) units,
    so that both sides still give every label as many pairs and the cues carry no information."""
    kinds = ("number", "synonym", "hypernym", "hyponym", "exclusive")
    fewer_mirrored = Pool([c for c in _twin_pool().candidates
                           if not (c.kind == "hyponym" and c.original >= 10 and c.word == "car")], {})
    pool = _with_exclusive_twins(fewer_mirrored)
    without, _ = draw(pool, kinds, 10.0, 100, seed=1, negated_share=1.0)
    assert without == draw(fewer_mirrored, kinds, 10.0, 100, seed=1, negated_share=1.0)[0], "off: the old draw"
    chosen, _ = draw(pool, kinds, 10.0, 100, seed=1, negated_share=1.0, exclusive_twins=True)
    twins = {n: chosen[i + 1] for i, n in enumerate(chosen[:-1])
             if n.source == "n" and chosen[i + 1].source == "s" and chosen[i + 1].original == n.original
             and chosen[i + 1].word == n.word}
    units = Counter((n.label, t.label) for n, t in twins.items())
    assert units == {("contradiction", "contradiction"): 10, ("entailment", "neutral"): 10,
                     ("neutral", "entailment"): 10, ("neutral", "contradiction"): 30,
                     ("entailment", "entailment"): 30}
    alone = [c for c in chosen if c.source in "ns" and c not in twins and c not in set(twins.values())]
    assert Counter((c.source, c.label) for c in alone) == {("n", "contradiction"): 30, ("s", "neutral"): 30}
    for source in ("n", "s"):
        assert Counter(c.label for c in chosen if c.source == source) == {
            "entailment": 40, "neutral": 40, "contradiction": 40}, source
    assert augment.cue_record([], [], chosen)["added_after"] == {"changed_words": 0.0, "negation_side": 0.0}
    fewer, _ = draw(pool, kinds, 0.9, 100, seed=1, negated_share=1.0, exclusive_twins=True)  # 15 units: mirrored first
    negated = Counter((c.label, fewer[i + 1].label) for i, c in enumerate(fewer[:-1])
                      if c.source == "n" and fewer[i + 1].source == "s" and fewer[i + 1].word == c.word)
    assert negated[("entailment", "neutral")] == 10 and negated[("neutral", "contradiction")] == 5
    assert negated[("neutral", "neutral")] == 0, "no parallel pair before the exclusive ones"


def test_stratum_takes_scale_alike_and_hand_out_the_remainder_by_the_largest_fraction():
    assert augment.stratum_takes({("1",): 5, ("4+",): 7}, 20) == {("1",): 5, ("4+",): 7}
    assert augment.stratum_takes({("1",): 10, ("4+",): 30}, 10) == {("1",): 3, ("4+",): 7}  # 2.5 / 7.5
    assert sum(augment.stratum_takes({("a",): 3, ("b",): 3, ("c",): 3}, 4).values()) == 4


def test_a_candidate_equal_to_a_training_pair_or_to_another_candidate_is_not_drawn():
    pool = _candidates(6)
    twin = Pool([*pool.candidates, pool.candidates[1]], {})
    chosen, available = draw(twin, ("antonym", "synonym"), 10.0, 10, seed=1,
                             existing=[("premise 0", "hypothesis 0")])
    assert available == {"antonym": 2, "synonym": 3}  # candidate 0 equals a training pair, 1's twin is one
    assert len(chosen) == 3 and len({(c.premise, c.hypothesis) for c in chosen}) == 3  # one entailment is left


def test_ids_are_derived_from_the_original_and_unique():
    candidate = Candidate(3, "antonym", "h", 4, "tall", "short", "p", "h", "contradiction", "hypothesis")
    assert augment.augmented_id("train-003", candidate) == "train-003~antonym~h4"
    assert unique_ids(["a~x~h1", "a~x~h1", "b", "a~x~h1"]) == ["a~x~h1", "a~x~h1.2", "b", "a~x~h1.3"]


# ------------------------------------------------------------------------------------------ the filters


def _problems(premise: str, hypothesis: str, label: str, known: set[str]) -> tuple[dict[str, list[str]], Counter]:
    """({"<h|p|x|self|negated>:<word>-><replacement>": [filter reason or "kept", …]} of the pair's candidates (h,
    p, x: the pair's hypothesis, premise, both swapped; self: the premise paired with itself; negated: its negated
    copy paired with itself) with `known` as the training words, and the reasons the engine's own rules dropped
    others for)."""
    from nlivis.training.augment import WordCounts, kind_of

    counts = WordCounts({w: 99 for w in known}, {w: 99 for w in known})
    found: dict[str, list[str]] = {}
    rejected: Counter = Counter()
    for source, edit, label, _ in augment._labelled_edits(premise, hypothesis, label, "nli", frozenset(known),
                                                      rejected):
        original = hypothesis if source == "h" else premise
        problem = augment.edit_problem(kind_of(edit), edit, label, original, counts, 1)
        side = {"s": "self", "n": "negated"}.get(source, edit.side[0])
        if source in ("s", "n") and edit.side == "premise":
            side += "-premise"
        found.setdefault(f"{side}:{edit.change.word}->{edit.change.replacement}", []).append(problem or "kept")
    return found, rejected


def test_filters_on_hand_written_sentences(wordnet):
    words = {"a", "an", "the", "man", "woman", "men", "person", "is", "in", "gear", "danger", "safety", "standing",
             "sitting", "on", "white", "black", "and", "ball", "with", "his", "dog", "not", "does", "animal",
             "table", "group", "array", "red", "blue", "shirt", "cat", "kicks", "garment", "clothing", "short",
             "tall", "wearing", "one", "sits", "stands"}
    found, rejected = _problems("A man in safety gear is standing .", "A man is standing .", "entailment", words)
    assert "self:safety->danger" not in found and rejected["word inside a compound or joined by a hyphen"] > 0
    assert found["h:man->woman"] == ["kept"]  # an antonym of an entailed hypothesis: contradiction
    found, rejected = _problems("A dog with a black and white ball .", "A dog with a ball .", "entailment", words)
    assert "self:black->white" not in found and rejected["replacement already in the sentence"] > 0
    assert found["self:dog->animal"] == ["kept"]  # a concrete noun's known hypernym
    found, rejected = _problems("A man sits with his dog .", "A man sits with his dog .", "entailment", words)
    assert "self:man->woman" not in found and rejected["gendered word with a pronoun that would disagree"] > 0
    found, _ = _problems("A man sits at a table .", "A man sits at a table .", "entailment", words)
    assert not any(key.startswith("self:table->") and "kept" in value for key, value in found.items())
    found, _ = _problems("A tall man in a red shirt kicks a ball .", "A man kicks a ball .", "neutral", words)
    assert found["h:man->woman"] == ["label not fixed by logic"]  # from neutral an antonym fixes nothing


def _self_labels(sentence: str, kinds: tuple[str, ...]) -> dict[tuple[str, str], str | None]:
    return {(edit.premise, edit.hypothesis): label for edit, label in self_pair_edits(sentence, "nli", kinds)}


def test_the_premise_paired_with_itself_labels_either_side_by_the_monotonicity_of_the_position(wordnet):
    found = _self_labels("The man is not holding a dog.", ("hypernym", "negation"))
    negated, plain, general = ("The man is not holding a dog.", "The man is holding a dog.",
                               "The man is not holding an animal.")
    assert found[(negated, general)] == "neutral"  # a hypernym under negation is stronger: not said, not denied
    assert found[(general, negated)] == "entailment"  # … and as premise it entails
    assert found[(negated, plain)] == found[(plain, negated)] == "contradiction"  # either side negated
    found = _self_labels("Every dog is running.", ("hypernym",))
    assert found[("Every dog is running.", "Every animal is running.")] == "neutral"  # every's restrictor: downward
    assert found[("Every animal is running.", "Every dog is running.")] == "entailment"
    found = _self_labels("A dog is running.", ("hypernym", "negation"))
    assert found[("A dog is running.", "An animal is running.")] == "entailment"  # upward
    assert found[("An animal is running.", "A dog is running.")] == "neutral"
    assert found[("A dog is not running.", "A dog is running.")] is None  # ∃¬ denies nothing: left unlabelled


def test_the_negated_copy_paired_with_itself_labels_by_the_downward_position(wordnet):
    """SNLI's premises are positive: only the negated copy gives hypernyms and hyponyms in a downward position,
    labelled the other way round from the upward ones (issue 29)."""
    found = {(edit.premise, edit.hypothesis): label
             for edit, label in negated_self_pair_edits("A boy is wearing a shirt.", "nli", ("hypernym", "negation"))}
    negated, general = "A boy is not wearing a shirt.", "A boy is not wearing a garment."
    assert negated_copy("A boy is wearing a shirt.", "nli") == negated
    assert found[(negated, general)] == "neutral"  # a hypernym under negation is stronger
    assert found[(general, negated)] == "entailment"
    assert found[(negated, "A person is not wearing a shirt.")] == "entailment"  # the subject stays upward
    assert all(negated in pair for pair in found)  # negation itself is not edited again: no positive copy
    assert negated_self_pair_edits("A boy is wearing a shirt.", "paraphrase", ("hypernym",)) == []
    assert negated_copy("A boy is not wearing a shirt.", "nli") is None  # already negated: nothing inserted


def test_the_negated_copy_entails_by_hypernyms_written_by_hand_only(wordnet):
    """WordNet's hypernyms reach senses no caption means (instruments → weapons): the negated copy's entailments
    take a hypernym or hyponym only from `lexicons.CAPTION_IS_A_BY_HAND` and count the others; its neutral labels
    (100% in the audit) stay WordNet's."""
    rejected: Counter = Counter()
    found = {(edit.premise, edit.hypothesis): label for edit, label in
             negated_self_pair_edits("A man is playing instruments.", "nli", ("hypernym", "hyponym"), None, rejected)}
    negated = "A man is not playing instruments."
    assert ("A man is not playing instruments.", "A man is not playing weapons.") not in found
    assert found[("A man is not playing weapons.", negated)] == "neutral"
    assert found[(negated, "A grownup is not playing instruments.")] == "entailment"  # a pair written by hand
    assert rejected[NOT_HAND_WRITTEN] == 1
    rejected.clear()
    found = {(edit.premise, edit.hypothesis): label for edit, label in
             negated_self_pair_edits("A man is holding a dog.", "nli", ("hypernym",), None, rejected)}
    assert ("A man is not holding an animal.", "A man is not holding a dog.") not in found  # the probes' own pair
    assert rejected[NOT_HAND_WRITTEN] == 1


def test_the_hand_written_is_a_pairs_are_not_the_independent_probes_pairs():
    """The monotonicity probes are independent evidence only while augmentation does not train on their pairs
    under a negation: no (hyponym, hypernym) of `CAPTION_IS_A_BY_HAND` is one of theirs, and every listed word is
    a single lower-case lemma."""
    probed = {(small, large) for small, large, _ in lexicons.HYPERNYMS_BY_HAND} | set(
        lexicons.ANIMAL_HYPERNYMS_BY_HAND)
    written = {(small, large) for large, smalls in lexicons.CAPTION_IS_A_BY_HAND.items() for small in smalls}
    assert not written & probed
    assert all(word.isalpha() and word.islower() for pair in written for word in pair)
    assert all(small != large for small, large in written)


def test_a_neutral_copy_of_a_word_the_sentence_says_twice_is_not_made(wordnet):
    """"A man talks to another man" → "A person talks to another man" is not weaker: the other mention still
    says man."""
    rejected: Counter = Counter()
    found = {(edit.premise, edit.hypothesis): label
             for edit, label in self_pair_edits("A man talks to another man.", "nli", ("hypernym",), None, rejected)}
    assert "neutral" not in found.values() and rejected[REPEATED_WORD] > 0
    assert "entailment" in found.values()  # the weaker copy as hypothesis is still entailed


def test_a_neutral_copy_whose_replacement_the_sentence_already_says_is_not_made(wordnet):
    """"A man holds an animal beside an animal" as premise is no weaker than "A man holds a dog beside an animal"
    in the way a neutral label needs: the sentence already says animal. Its entailed direction stays."""
    rejected: Counter = Counter()
    found = {(edit.premise, edit.hypothesis): label for edit, label in
             self_pair_edits("A man holds a dog beside an animal.", "nli", ("hypernym",), None, rejected)}
    original, general = "A man holds a dog beside an animal.", "A man holds an animal beside an animal."
    assert found[(original, general)] == "entailment" and (general, original) not in found
    assert rejected[REPLACEMENT_SAID] == 1
    plain = {(edit.premise, edit.hypothesis): label
             for edit, label in self_pair_edits("A man holds a dog.", "nli", ("hypernym",))}
    assert plain[("A man holds an animal.", "A man holds a dog.")] == "neutral", "no animal already said: neutral"


def test_every_pair_added_to_training_is_one_the_engine_labels_by_logic(augmented_run, cache_dir):
    config = json.loads((augmented_run / "config.json").read_text())
    dynamics = read_dynamics(augmented_run)
    source = dynamics.sources[-1]
    assert source["split"] == AUGMENTED_SPLIT and source["start"] == 40
    pairs = fixture_pairs()
    by_id = {p.id: p for p in pairs}
    analysed = {item.pair.id: item.pair for item in augment_items(augmented_run, cache_dir)}
    known = augment.WordCounts.of(analyse_pairs(pairs, cache_dir=cache_dir, progress=False)).known(1)
    assert list(analysed) == dynamics.ids[40:]
    for column, (pair_id, kind, original) in enumerate(zip(dynamics.ids[40:], source["kinds"], source["originals"])):
        origin = pairs[original]
        assert pair_id.startswith(f"{origin.id}~{kind}~"), pair_id
        assert dynamics.gold[40 + column] == dynamics.labels.index(analysed[pair_id].label)
        new = analysed[pair_id]
        where = pair_id.split("~")[2][0]
        if where == "s":
            labelled = self_pair_edits(origin.premise, "nli", ALL_KINDS, known=known)
        else:
            labelled = [(e, e.expected if e.expectation == LABEL else None)
                        for e in propose_edits(origin.premise, origin.hypothesis, origin.label, "nli", ALL_KINDS,
                                               known=known)]
        match = [(e, label) for e, label in labelled if (e.premise, e.hypothesis) == (new.premise, new.hypothesis)]
        assert match and all(label == new.label for _, label in match), pair_id
        assert where != "s" or all((e.side, label) not in SWITCHED_OFF_GROUPS for e, label in match), pair_id
        assert by_id[origin.id] is not None
    record = config["augmentation"]
    assert record["kinds"] == list(ALL_KINDS) and record["ratio"] == 1.0 and record["seed"] == 1
    assert record["pairs"] == config["dataset"]["augmented_pairs"] == len(source["kinds"]) <= record["cap"] == 40
    assert record["added"] == {kind: source["kinds"].count(kind) for kind in ALL_KINDS}
    assert all(record["added"][k] <= record["candidates"][k] for k in ALL_KINDS)
    assert record["filtered_out"]["label not fixed by logic"] > 0
    assert record["mutual_information"]["added_after"] == {"changed_words": 0.0, "negation_side": 0.0}
    assert config["dynamics"]["pairs"] == 40 + record["pairs"]


def augment_items(run: Path, cache_dir: Path) -> list:
    """The run's augmented pairs made again from its config (the same draw, read from the candidate cache)."""
    config = json.loads((run / "config.json").read_text())
    record = config["augmentation"]
    items = analyse_pairs(fixture_pairs(), cache_dir=cache_dir, progress=False)
    made = augment.augment_training(items, config["labels"], record["kinds"], record["ratio"], record["seed"],
                                    cache_dir, min_count=record["min_word_count"])
    return made.items


def test_augmentation_is_deterministic_given_the_seed(augmented_run, cache_dir):
    items = analyse_pairs(fixture_pairs(), cache_dir=cache_dir, progress=False)
    first = augment.augment_training(items, ["entailment", "neutral", "contradiction"], ALL_KINDS, 0.5, 1,
                                     cache_dir, min_count=1)
    again = augment.augment_training(items, ["entailment", "neutral", "contradiction"], ALL_KINDS, 0.5, 1,
                                     cache_dir, min_count=1)
    other = augment.augment_training(items, ["entailment", "neutral", "contradiction"], ALL_KINDS, 0.5, 2,
                                     cache_dir, min_count=1)
    ids = lambda made: [item.pair.id for item in made.items]  # noqa: E731
    assert ids(first) == ids(again) and 0 < len(ids(first)) <= 20 and len(ids(first)) % 3 == 0  # labels alike
    assert ids(other) != ids(first) and Counter(other.kinds) == Counter(first.kinds)
    assert again.timings["candidates_cached"] == 1.0  # the second run read the candidates from the cache


def test_dynamics_and_the_data_map_mark_the_augmented_pairs(augmented_run, capsys):
    dynamics = read_dynamics(augmented_run)
    assert dynamics.seen().all()  # augmented pairs are trained on in every epoch
    points = data_map(dynamics)
    flags = points.is_augmented()
    assert not flags[:40].any() and flags[40:].all()
    rows = points.rows()
    assert rows[0]["augmented"] is None and rows[0]["original"] is None
    assert rows[40]["augmented"] == dynamics.sources[-1]["kinds"][0]
    assert rows[40]["original"] == dynamics.ids[dynamics.sources[-1]["originals"][0]]
    assert rows[40]["id"].startswith(rows[40]["original"] + "~")
    digests = dynamics.augmented_digests()
    assert digests[:40] == [None] * 40 and all(len(d) == 12 for d in digests[40:]), "one digest per augmented pair"
    by_origin = points.region_counts_by_origin()
    assert sum(by_origin["training pairs"].values()) == 40
    assert sum(by_origin["augmented pairs"].values()) == dynamics.pairs - 40
    assert main(["datamap", str(augmented_run)]) == 0
    assert "augmented pairs (train --augment)" in capsys.readouterr().out
    assert main(["datamap", str(augmented_run), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["regions_by_origin"] == by_origin and printed["pairs"][40]["augmented"] is not None


def test_a_damaged_augmented_source_is_refused(augmented_run, tmp_path):
    from nlivis.store.checkpoints import CheckpointError
    from nlivis.store.dynamics import write_dynamics

    dynamics = read_dynamics(augmented_run)
    dynamics.sources[-1]["originals"] = dynamics.sources[-1]["originals"][:-1]
    with pytest.raises(CheckpointError, match="must list a kind and an original column"):
        write_dynamics(tmp_path / "d.safetensors", dynamics)
    dynamics = read_dynamics(augmented_run)
    dynamics.sources[-1]["digests"] = dynamics.sources[-1]["digests"][:-1]
    with pytest.raises(CheckpointError, match="digests must be one string per pair"):
        write_dynamics(tmp_path / "d.safetensors", dynamics)
    del dynamics.sources[-1]["digests"]  # a run before digests were recorded still reads, its digests unknown
    write_dynamics(tmp_path / "old.safetensors", dynamics)
    assert set(read_dynamics(tmp_path / "old.safetensors").augmented_digests()) == {None}


def test_a_stopped_and_resumed_augmented_run_ends_as_an_uninterrupted_one(tmp_path, cache_dir, every_word_known,
                                                                          wordnet):
    options = dict(epochs=3, augment=("antonym", "negation", "synonym", "swap"), augment_ratio=0.5)
    straight = tmp_path / "a" / "run"
    train_tiny(straight, cache_dir, **options)
    resumed = tmp_path / "b" / "run"
    with pytest.raises(TrainingStopped):
        train_tiny(resumed, cache_dir, stop_event=StopAfter(10), **options)  # in the second epoch
    with pytest.raises(ValueError, match=r"augment 'antonym,negation,synonym,swap at ratio 0.25' \(the saved run: "
                                         r"'antonym,negation,synonym,swap at ratio 0.5'\)"):
        train_tiny(resumed, cache_dir, resume=True, **{**options, "augment_ratio": 0.25})
    with pytest.raises(ValueError, match=r"augment unset \(the saved run"):
        train_tiny(resumed, cache_dir, resume=True, epochs=3)
    train_tiny(resumed, cache_dir, resume=True, **options)
    a, b = read_dynamics(straight), read_dynamics(resumed)
    assert a.ids == b.ids and a.sources == b.sources and np.array_equal(a.records, b.records)
    weights_a, weights_b = load_file(str(straight / "model.safetensors")), load_file(str(resumed / "model.safetensors"))
    assert all(torch.equal(weights_a[k], weights_b[k]) for k in weights_a)
    assert json.loads((straight / "config.json").read_text())["augmentation"] == \
        json.loads((resumed / "config.json").read_text())["augmentation"]


def test_the_data_map_makes_the_augmented_pairs_edited_text_again_from_the_run_record(augmented_run, cache_dir):
    """Training dynamics keep ids and numbers only: an augmented pair's text is made again, exactly, from the run's
    training pairs and its config.json record (the Data map opens it with that text)."""
    from nlivis.workflows.datamap import augmented_pairs
    from nlivis.workflows.datamap import augmented_run as read_augmentation

    run = read_augmentation(augmented_run, FIXTURE_DIR, cache_dir)
    assert run is not None and run.cached, "the run made its candidate edits on this machine"
    made = augmented_pairs(run, cache_dir)
    assert list(made) == read_dynamics(augmented_run).ids[40:]
    assert made.checked and made.differing == 0, "the run recorded each pair's digest, and today's engine is the run's"
    trained = {item.pair.id: item.pair for item in augment_items(augmented_run, cache_dir)}
    assert all((made[pid].premise, made[pid].hypothesis, made[pid].label)
               == (trained[pid].premise, trained[pid].hypothesis, trained[pid].label) for pid in made)


def test_self_pair_label_groups_below_their_audit_floor_are_left_out_and_counted(wordnet):
    """The stronger-hypothesis and weaker-premise neutral groups failed the hand audit (`nlivis audit --section
    counterparts`): augmentation keeps the self-pair labels logic fixes otherwise, and counts what it leaves; a
    neutral made with a hand-written hyponym (car → jeep is one of `lexicons.CAPTION_IS_A_BY_HAND`) is kept, marked
    for the twins only."""
    filtered: Counter = Counter()
    labelled = augment._labelled_edits("A man is driving a car.", "A man is driving a car.", "entailment", "nli", None,
                                       filtered)
    self_labels = {(edit.premise, edit.hypothesis): (label, twin) for source, edit, label, twin in labelled
                   if source == "s"}
    assert self_labels[("A man is driving a car.", "A man is driving an automobile.")] == ("entailment", False)
    assert self_labels[("A man is driving a jeep.", "A man is driving a car.")] == ("entailment", False)
    assert self_labels[("A man is driving a car.", "A man is driving a jeep.")] == ("neutral", True)
    assert all(twin for label, twin in self_labels.values() if label == "neutral")
    assert not any(twin for source, edit, label, twin in labelled if source != "s")
    assert filtered[SWITCHED_OFF_GROUPS[("hypothesis", "neutral")]] + filtered[SWITCHED_OFF_GROUPS[("premise",
                                                                                                    "neutral")]] >= 1


def test_the_negated_copy_keeps_its_polarity_labels_and_leaves_out_its_word_swap_contradictions(wordnet):
    """The negated copy's hypernyms and hyponyms keep the labels the downward position gives them, entailment and
    neutral, and its number swaps contradict; a word swapped for an exclusive one (boy → girl), whose contradiction
    two judges do not share, is left out and counted (`NEGATED_COPY_SWAP_LEFT_OUT`)."""
    filtered: Counter = Counter()
    labelled = augment._labelled_edits("Two boys are driving a car.", "Two boys are driving a car.", "entailment",
                                       "nli", None, filtered)
    negated = {(edit.premise, edit.hypothesis): label for source, edit, label, _ in labelled if source == "n"}
    assert negated[("Two boys are not driving a car.", "Two boys are not driving a jeep.")] == "entailment"
    assert negated[("Two boys are not driving a jeep.", "Two boys are not driving a car.")] == "neutral"
    assert negated[("Two boys are not driving a car.", "Three boys are not driving a car.")] == "contradiction"
    assert not any("girls" in premise + hypothesis for premise, hypothesis in negated)
    assert filtered[NEGATED_COPY_SWAP_LEFT_OUT] >= 1


def test_the_negated_copy_swaps_its_object_for_an_exclusive_one_as_neutral(wordnet):
    """Denying a guitar says nothing of a violin: the negated verb's object swapped for an exclusive one is neutral on
    either side (`exclusive_in_scope`), and its twin without the negation contradicts; an object the sentence says is
    there outside the negation (a clause on it, a pronoun after it) keeps no label."""
    filtered: Counter = Counter()
    labelled = augment._labelled_edits("A man is playing a guitar .", "A man is playing a guitar .", "entailment",
                                       "nli", None, filtered)
    found = {(source, edit.premise, edit.hypothesis): label for source, edit, label, _ in labelled}
    assert found[("n", "A man is not playing a guitar .", "A man is not playing a violin .")] == "neutral"
    assert found[("n", "A man is not playing a violin .", "A man is not playing a guitar .")] == "neutral"
    assert found[("s", "A man is playing a guitar .", "A man is playing a violin .")] == "contradiction"
    for sentence in ("A man is photographing a camel and a woman walks past it .",
                     "A man is signing a guitar , whose owner is smiling .",
                     "A man is playing a guitar that is red ."):
        labels = [label for edit, label in negated_self_pair_edits(sentence, "nli", ("exclusive",))
                  if edit.change.relation == "exclusive"]
        assert labels and set(labels) == {None}, sentence


@pytest.mark.parametrize("verb, tag, lemma, base", [("rides", "VBZ", "rid", "ride"), ("uses", "VBZ", "use", "use"),
                                                    ("tries", "VBZ", "try", "try"), ("goes", "VBZ", "go", "go"),
                                                    ("stopped", "VBD", "stop", "stop"), ("ran", "VBD", "run", "run")])
def test_do_support_takes_the_form_that_inflects_back(verb, tag, lemma, base):
    assert base_form(verb, lemma, tag) == base


def test_a_negated_copy_of_rides_says_does_not_ride(wordnet):
    assert negated_copy("A girl in blue rides a horse over a jump .", "nli") == \
        "A girl in blue does not ride a horse over a jump ."


@pytest.mark.parametrize("caption, why", [
    ("A man with his sleeves rolled smiles at a dog .", "past-tense"),
    ("The dogs runs on the beach .", "disagreeing"),
    ("A boy play in the sand .", "disagreeing"),
    ("The boy , the girl plays with a ball .", "two subjects"),
])
def test_a_caption_whose_parse_misreads_its_verb_gets_no_negated_copy(wordnet, caption, why):
    """A negation on a participle or noun spaCy took for the verb makes nonsense ("with his sleeves did not roll
    smiles"); a caption with a present-tense verb agreeing with its subject, or coordinated subjects, gets one."""
    assert why in misread_main_verb(parse_sentences([caption])[0])
    assert negated_copy(caption, "nli") is None


@pytest.mark.parametrize("caption", ["A man sits on a bench .", "A man and a woman walk .", "Two dogs run .",
                                     "A man has jumped .", "In a park , a girl is reading ."])
def test_a_well_formed_caption_gets_its_negated_copy(wordnet, caption):
    assert misread_main_verb(parse_sentences([caption])[0]) is None
    assert " not " in negated_copy(caption, "nli")

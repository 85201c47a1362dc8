"""Behavioural test suites: sizes, determinism, the dev-built tests on hand-written pairs, Wilson, McNemar and
Holm against hand-computed values, and the overlap with a training split."""
from __future__ import annotations

import json
import random
from types import SimpleNamespace

import numpy as np
import pytest

from nlivis.analysis import parsed, probe_templates, probes
from nlivis.analysis.overlap import normalised
from nlivis.analysis.probes import (ModelOutcome, ProbeCase, ProbeResult, ProbeTest, build_suite,
                                    capability_comparisons, comparisons, decide_cases, fill_edit_tests, nli_edit_tests,
                                    probe_record)
from nlivis.analysis.significance import holm_adjusted, mcnemar_exact, wilson_interval
from nlivis.data.records import Pair
from nlivis.features.spacy_pipeline import load_nlp
from nlivis.workflows import probes as probe_runs
from nlivis.workflows.probes import load_suite, training_overlap


def test_wilson_interval_against_hand_computed_values():
    # p = 0.1, n = 100, z = 1.95996: centre 0.119207, half-width 0.061857, denominator 1.038415
    low, high = wilson_interval(10, 100)
    assert low == pytest.approx(0.05523, abs=5e-5) and high == pytest.approx(0.17437, abs=5e-5)
    # 0 of 20: upper end z²/n / (1 + z²/n) = 0.19207 / 1.19207
    assert wilson_interval(0, 20) == (0.0, pytest.approx(0.16113, abs=5e-5))
    assert wilson_interval(20, 20) == (pytest.approx(0.83887, abs=5e-5), 1.0)


def test_mcnemar_and_holm_against_hand_computed_values():
    assert mcnemar_exact(1, 6) == pytest.approx(2 * 8 / 128)  # P(X ≤ 1 | n = 7) = (1 + 7) / 2^7
    assert holm_adjusted([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm_adjusted([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def test_comparisons_adjust_with_holm_over_every_pair_of_checkpoints():
    """Three checkpoints, one test: three McNemar tests. Only a or only b fails on 0 vs 7 cases (p = 2 / 2^7 =
    0.015625), a vs c on 0 vs 6 (p = 2 / 2^6 = 0.03125), b vs c on 4 vs 3 (p = 2 · 64 / 128 = 1). Holm:
    0.015625 × 3 = 0.046875, 0.03125 × 2 = 0.0625, 1 × 1 = 1."""
    from nlivis.analysis import significance

    assert getattr(probes, "holm_adjusted", significance.holm_adjusted) is significance.holm_adjusted  # one copy
    cases = tuple(ProbeCase(f"p{i}", f"h{i}", "label", "entailment") for i in range(10))
    test = ProbeTest("Negation", "t", "MFT", "", cases, "independent")
    outcome = {"a": ModelOutcome([], [], []), "b": ModelOutcome(list(range(7)), [], []),
               "c": ModelOutcome(list(range(4, 10)), [], [])}
    rows = comparisons([test], [outcome], ["a", "b", "c"])
    assert [(row["a"], row["b"]) for row in rows] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert [row["p"] for row in rows] == pytest.approx([0.015625, 0.03125, 1.0])
    assert [row["p_holm"] for row in rows] == pytest.approx([0.046875, 0.0625, 1.0])
    assert [row["p_holm"] for row in rows] == significance.holm_adjusted([row["p"] for row in rows])


def test_comparisons_count_discordant_failures_on_the_same_cases():
    cases = tuple(ProbeCase(f"p{i}", f"h{i}", "label", "entailment") for i in range(10))
    test = ProbeTest("Negation", "t", "MFT", "", cases, "independent")
    outcome = {"a": ModelOutcome([0, 1, 2], [], []), "b": ModelOutcome([2, 3, 4, 5, 6, 7, 8], [], [])}
    [row] = comparisons([test], [outcome], ["a", "b"])
    assert (row["only_a_fails"], row["only_b_fails"]) == (2, 6)
    assert row["p"] == pytest.approx(mcnemar_exact(2, 6)) and row["p_holm"] == row["p"]


def test_cases_are_decided_per_model_and_failing_cases_read_as_the_record_lists_them():
    labels = ("entailment", "neutral", "contradiction")
    cases = (ProbeCase("p", "h", "label", "entailment"),
             ProbeCase("p2", "h2", "invariant", None, original=("p", "h"), source="snli_dev:7"),
             ProbeCase("p3", "h3", "direction", "entailment", "fall", original=("p", "h"), source="snli_dev:8"))
    test = ProbeTest("Negation", "t", "INV", "", cases, "engine")
    row = {("p", "h"): 0, ("p2", "h2"): 1, ("p3", "h3"): 2}
    probabilities = {"a": np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.9, 0.05, 0.05]]),  # flips; p(e) rises
                     "b": np.array([[0.1, 0.1, 0.8], [0.1, 0.1, 0.8], [0.05, 0.15, 0.8]])}  # wrong label; p(e) falls
    [outcomes] = decide_cases([test], ["a", "b"], labels, probabilities, row)
    assert outcomes["a"].failures == [1, 2] and outcomes["b"].failures == [0]
    assert outcomes["a"].original_predicted == [None, "entailment", "entailment"]
    result = ProbeResult([test], labels, ["a", "b"], [outcomes], {"a": None, "b": None})
    failing = result.failing("t", "a")
    assert [(f.index, f.case, f.predicted, f.original_predicted) for f in failing] == [
        (1, cases[1], "neutral", "entailment"), (2, cases[2], "entailment", "entailment")]
    recorded = probe_record(result, "nli", 1, 3, {})["tests"][0]["by_model"]["a"]["failing"]
    assert [(f["case"], f["predicted"], f["original_predicted"]) for f in recorded] == [
        (f.index, f.predicted, f.original_predicted) for f in failing]
    assert result.failing("t", "nobody") is None and result.failing("no such test", "a") is None


def test_capability_comparisons_pool_a_capabilitys_tests_and_adjust_over_capabilities():
    def test(capability, cases, failing_a, failing_b, generator="independent"):
        expected = [{"expected": "entailment" if i % 2 else "neutral", "expectation": "label"} for i in range(cases)]
        return {"capability": capability, "cases": cases, "generator": generator, "case_list": expected,
                "by_model": {"base": {"failing": [{"case": i, "predicted": "contradiction"} for i in failing_a]},
                             "aug": {"failing": [{"case": i, "predicted": "neutral" if i % 2 else "entailment"}
                                                 for i in failing_b]}}}

    record = {"tests": [test("Negation", 10, [0, 1, 2, 3, 4, 5, 6, 7], [0]),  # two tests of one capability
                        test("Negation", 10, [0, 1, 2], [1, 2, 3]),
                        test("Fairness", 5, [], [], "engine"),
                        test("Negation", 4, [0], [], "engine")]}  # never pooled with the independent ones
    negation, fairness, engine_negation = capability_comparisons(record, "base", "aug")
    assert [row["generator"] for row in (negation, fairness, engine_negation)] == ["independent", "engine", "engine"]
    assert (engine_negation["cases"], engine_negation["only_a_fails"]) == (4, 1)
    assert negation["capability"] == "Negation" and (negation["tests"], negation["cases"]) == (2, 20)
    assert (negation["failures_a"], negation["failures_b"]) == (11, 4)
    assert (negation["only_a_fails"], negation["only_b_fails"]) == (8, 1)  # 7 + 1 and 0 + 1
    assert negation["rate_a"] == pytest.approx(0.55) and negation["rate_b"] == pytest.approx(0.2)
    assert negation["p"] == pytest.approx(mcnemar_exact(8, 1))
    assert fairness["p"] == 1.0 and fairness["rate_a"] == 0.0
    assert negation["answers_a"] == {"neutral → contradiction": 6, "entailment → contradiction": 5}  # 4 + 2, 4 + 1
    assert negation["answers_b"] == {"neutral → entailment": 2, "entailment → neutral": 2}  # cases 0, 2 and 1, 3
    assert [negation["p_holm"], fairness["p_holm"], engine_negation["p_holm"]] == pytest.approx(
        holm_adjusted([mcnemar_exact(8, 1), 1.0, mcnemar_exact(1, 0)]))
    with pytest.raises(ValueError, match="no results for other"):
        capability_comparisons(record, "base", "other")


def test_template_suites_have_their_sizes_and_are_deterministic(wordnet):
    nli = build_suite("nli", per_test=100, seed=1)
    assert len(nli) == 16 and all(len(t.cases) == 100 for t in nli) and {t.type for t in nli} == {"MFT"}
    assert len({t.capability for t in nli}) == 16
    assert nli == build_suite("nli", per_test=100, seed=1)
    assert nli != build_suite("nli", per_test=100, seed=2)
    paraphrase = build_suite("paraphrase", per_test=100, seed=1)
    assert [len(t.cases) for t in paraphrase] == [100, 100, 100]
    antonyms = next(t for t in build_suite("nli", per_test=10_000, seed=1) if t.capability == "Taxonomy: antonyms")
    assert ProbeCase("The box is heavy.", "The box is light.", "label", "contradiction") in antonyms.cases
    assert ProbeCase("The nurse is tall.", "The nurse is short.", "label", "contradiction") in antonyms.cases
    assert len(antonyms.cases) > 100 and all(case.expected == "contradiction" for case in antonyms.cases)


def test_template_cases_say_what_logic_gives_them(wordnet):
    suite = {t.capability: t for t in build_suite("nli", per_test=10_000, seed=1)}
    cases = {(c.premise, c.hypothesis): c.expected for t in suite.values() for c in t.cases}
    assert cases[("The nurse is sleeping.", "The nurse is not sleeping.")] == "contradiction"
    assert cases[("All nurses are sleeping.", "Some nurses are sleeping.")] == "entailment"
    assert cases[("Some nurses are sleeping.", "All nurses are sleeping.")] == "neutral"
    assert cases[("The nurse is holding a puppy.", "The nurse is holding a dog.")] == "entailment"
    assert cases[("The nurse is not holding a dog.", "The nurse is not holding a puppy.")] == "entailment"
    assert cases[("The nurse is holding a dog.", "The nurse is holding a puppy.")] == "neutral"
    assert cases[("The doctor saw the nurse.", "The nurse was seen by the doctor.")] == "entailment"
    assert cases[("The doctor saw the nurse.", "The nurse saw the doctor.")] == "neutral"
    # monotonicity from hand-written pairs: upward in a plain object, downward under negation and every / no
    assert cases[("The nurse is driving a sedan.", "The nurse is driving a car.")] == "entailment"
    assert cases[("The nurse is driving a car.", "The nurse is driving a sedan.")] == "neutral"
    assert cases[("The nurse is not driving a car.", "The nurse is not driving a sedan.")] == "entailment"
    assert cases[("The nurse is not driving a sedan.", "The nurse is not driving a car.")] == "neutral"
    assert cases[("Every dog in the park is sleeping.", "Every puppy in the park is sleeping.")] == "entailment"
    assert cases[("Every puppy in the park is sleeping.", "Every dog in the park is sleeping.")] == "neutral"
    assert cases[("No bird in the yard is eating.", "No sparrow in the yard is eating.")] == "entailment"
    assert cases[("No sparrow in the yard is eating.", "No bird in the yard is eating.")] == "neutral"
    assert cases[("The nurse is not dancing.", "The nurse is dancing.")] == "contradiction"


def test_monotonicity_and_premise_negation_probes_are_independent_and_balanced(wordnet):
    """The three tests written against issue 29's held-out classes: hand-written (generator independent), each label
    equally often among all their candidates, every downward case's hypothesis the upward one's premise turned
    round, and the premise-negation test never negating an activity another one entails (driving → sitting)."""
    from collections import Counter

    suite = {t.name: t for t in build_suite("nli", per_test=10_000, seed=1)}
    upward = suite["a hypernym in an upward position (by hand)"]
    downward = suite["a hypernym under negation or in every / no (by hand)"]
    negated = suite["negation in the premise only"]
    assert {t.generator for t in (upward, downward, negated)} == {"independent"}
    assert Counter(c.expected for c in upward.cases) == Counter({"entailment": 340, "neutral": 340})
    assert Counter(c.expected for c in downward.cases) == Counter({"entailment": 460, "neutral": 460})
    assert Counter(c.expected for c in negated.cases) == Counter({"contradiction": 340, "neutral": 340,
                                                                  "entailment": 340})
    for case in upward.cases:  # each upward case under negation is the downward case with the sides swapped
        turned = (case.hypothesis.replace(" is ", " is not ", 1), case.premise.replace(" is ", " is not ", 1))
        assert ProbeCase(*turned, "label", case.expected) in downward.cases
    for case in negated.cases:
        denied = case.premise.rsplit(" is not ", 1)[1].rstrip(".")
        assert denied not in probe_templates.PREMISE_NEGATION_LEFT_OUT
        assert case.expected == "contradiction" or denied not in case.hypothesis


def test_word_swap_probes_are_independent_of_the_engine_lexicons_and_hold_both_ways(wordnet):
    """Breaking NLI's class, written by hand: exclusive words of categories the engine has no lexicon for
    contradict, words for the same thing entail, and every case also stands with its sides swapped."""
    from nlivis.analysis import lexicons

    suite = {t.name: t for t in build_suite("nli", per_test=10_000, seed=1)}
    exclusive = suite["a word of another category swapped (by hand)"]
    synonyms = suite["a word for the same thing swapped (by hand)"]
    assert {exclusive.generator, synonyms.generator} == {"independent"}
    assert {c.expected for c in exclusive.cases} == {"contradiction"}
    assert {c.expected for c in synonyms.cases} == {"entailment"}
    engine_words = {w.lower() for members, *_ in lexicons.EXCLUSIVE_CATEGORIES.values() for w in members}
    for _, _, words in lexicons.EXCLUSIVE_BY_HAND:
        assert not {part.lower() for w in words for part in w.split()} & engine_words, words
    for test in (exclusive, synonyms):
        pairs = {(c.premise, c.hypothesis) for c in test.cases}
        assert all((h, p) in pairs for p, h in pairs)  # either way round
        assert all(len(set(p.split()) ^ set(h.split())) == 2 for p, h in pairs)  # one word swapped
    assert ProbeCase("The nurse is swimming in a lake.", "The nurse is swimming in a river.", "label",
                     "contradiction") in exclusive.cases
    assert ProbeCase("The nurse finished the race in first place.", "The nurse finished the race in third place.",
                     "label", "contradiction") in exclusive.cases
    assert ProbeCase("The nurse is taking a picture.", "The nurse is taking a photo.", "label",
                     "entailment") in synonyms.cases


def test_dev_built_tests_take_the_first_fitting_edit_of_each_pair(wordnet, monkeypatch):
    dev = [("snli_dev", Pair("1", "The man is sleeping on a red couch . ", " The man is sleeping .", "entailment")),
           ("snli_dev", Pair("2", "A woman is singing .", "A man is dancing .", "contradiction")),
           ("snli_dev", Pair("3", "Two boys play soccer .", "Two boys play .", "entailment"))]
    tests = nli_edit_tests()
    spacy_runs = []  # spaCy parses the chunk's texts in one batch, as the edits read them (space-normalised)
    monkeypatch.setattr(parsed, "load_nlp", lambda **options: spacy_runs.append(options) or load_nlp(**options))
    fill_edit_tests(tests, "nli", dev, 5, random.Random(0), lambda message: None)
    assert len(spacy_runs) <= 1
    by_name = {t.capability: t for t in tests}
    [negation] = by_name["Negation"].cases  # "Two boys do not play" (∃¬) fixes no label: not a case
    assert (negation.hypothesis, negation.expected) == ("The man is not sleeping .", "contradiction")
    assert negation.original == ("The man is sleeping on a red couch .", "The man is sleeping .")  # normalised
    [symmetry] = by_name["Logic: symmetry"].cases
    assert (symmetry.premise, symmetry.hypothesis, symmetry.expected) == ("A man is dancing .", "A woman is singing .",
                                                                          "contradiction")
    assert symmetry.source == "snli_dev:2"
    [number] = by_name["Taxonomy: exclusive co-hyponyms"].cases
    assert number.hypothesis == "Three boys play ." and number.expected == "contradiction"
    assert all(c.expectation == "invariant" for c in by_name["Robustness"].cases + by_name["Fairness"].cases)
    assert sorted((c.premise, c.hypothesis) for c in by_name["Fairness"].cases) == [
        ("A man is singing .", "A woman is dancing ."),
        ("The woman is sleeping on a red couch .", "The woman is sleeping ."),
        ("Two girls play soccer .", "Two girls play .")]


def test_filling_the_dev_built_tests_says_a_word_between_any_two_parse_batches(wordnet, monkeypatch):
    # the app's warm-up builds the suite in the background and yields to pages at each word (progress): a
    # stretch of parsing without one would hold a page up for all of it
    dev = [("snli_dev", Pair(str(i), f"A man is sleeping on couch number {i} .", "The man is sleeping .",
                             "entailment")) for i in range(5)]
    events: list[str] = []
    monkeypatch.setattr(probes, "PARSE_AHEAD", 2)
    monkeypatch.setattr(probes, "parse_sentences", lambda texts: events.append("parse") or parsed.parse_sentences(texts))
    fill_edit_tests(nli_edit_tests(), "nli", dev, 50, random.Random(0), lambda message: events.append("word"))
    assert events.count("parse") == 3 and "parse,parse" not in ",".join(events) and events[-1] == "word"


def test_suite_is_cached_and_read_back(tmp_path, monkeypatch, wordnet):
    first = load_suite("nli", None, 5, 3, tmp_path)
    [cached] = [path for path in (tmp_path / "probes").iterdir() if not path.name.startswith(".")]  # not its seal
    assert json.loads(cached.read_text())["format"] == probes.SUITE_FORMAT
    monkeypatch.setattr(probe_runs, "build_suite", lambda *args, **kwargs: pytest.fail("rebuilt a cached suite"))
    assert load_suite("nli", None, 5, 3, tmp_path) == first
    cached.write_text("{not json")
    monkeypatch.undo()
    assert load_suite("nli", None, 5, 3, tmp_path) == first  # a damaged file is rebuilt


def test_normalised_text_ignores_case_spacing_and_punctuation():
    assert normalised("A man .") == normalised("a  man.") == "a man"
    assert normalised("Don't!") == "don t"


def test_training_overlap_counts_dev_built_cases_found_in_the_training_split(tmp_path):
    folder = tmp_path / "snli" / "esnli_tokenized"
    folder.mkdir(parents=True)
    (folder / "s1.test").write_text("A dog runs .\nA cat sleeps .\n")
    (folder / "s2.test").write_text("An animal moves .\nA cat is awake .\n")
    (folder / "labels.test").write_text("entailment\ncontradiction\n")
    cases = (ProbeCase("A dog runs.", "An animal moves.", "invariant", None, source="snli_dev:1"),
             ProbeCase("A cat sleeps .", "A dog is happy .", "invariant", None, source="snli_dev:2"),
             ProbeCase("A bird sings .", "a dog runs", "invariant", None, source="snli_dev:3"),
             ProbeCase("A dog runs .", "An animal moves .", "label", "entailment"))  # template: not counted
    checkpoint = SimpleNamespace(config={"dataset": {"protocol": "snli-small", "train": ["snli_test"]}})
    overlap = training_overlap(checkpoint, [ProbeTest("c", "n", "INV", "", cases, "engine")], tmp_path)
    assert overlap == {"checked": True, "split": "snli_test", "cases_checked": 3, "total": 3, "pairs": 1,
                       "premises": 2, "hypotheses": 2, "reason": None, "note": None}
    missing = training_overlap(checkpoint, [], None)  # said, never a silent 0
    assert missing["checked"] is False and missing["pairs"] is None and "training data not found" in missing["reason"]


@pytest.mark.slow
@pytest.mark.parametrize("suite, tests, capabilities", [("nli", 24, 19), ("paraphrase", 10, 8)])
def test_suites_on_the_real_dev_sets_fill_every_test(shared_data, wordnet, suite, tests, capabilities):
    built = load_suite(suite, shared_data, 100, 1)
    assert len(built) == tests and len({t.capability for t in built}) == capabilities
    assert all(len(t.cases) == 100 for t in built), [(t.name, len(t.cases)) for t in built]
    assert {t.type for t in built} == {"MFT", "INV", "DIR"}


def _texts(case: ProbeCase) -> list[str]:
    return [case.premise, case.hypothesis, *(case.original or ())]


def test_every_case_is_whitespace_normalised_and_every_test_declares_its_generator(wordnet):
    dev = [("snli_dev", Pair("1", "  The man is  sleeping on a couch . ", "The man is sleeping . ", "entailment")),
           ("snli_dev", Pair("2", "A woman is singing . ", " A man is dancing .", "contradiction"))]
    questions = [("quora_dev", Pair("q", " Why is the sky  blue ?", "Why is the sky blue? ", "duplicate"))]
    for suite, pairs in (("nli", dev), ("paraphrase", questions)):
        built = build_suite(suite, pairs, per_test=10_000, seed=1)
        assert {t.generator for t in built} <= set(probe_templates.GENERATORS)
        for test in built:
            for text in (text for case in test.cases for text in _texts(case)):
                assert text == text.strip() and "  " not in text, (test.name, text)
    by_name = {t.name: t for t in build_suite("nli", dev, per_test=10, seed=1)}
    assert by_name["negated predicate contradicts"].generator == "independent"  # a hand-written frame
    assert by_name["WordNet antonym adjectives"].generator == "engine"  # augment's antonyms
    assert by_name["negated entailed hypothesis (dev)"].generator == "engine"  # the edit engine itself


def test_template_errors_are_gone(wordnet):
    cases = [case for test in build_suite("nli", per_test=10_000, seed=1) for case in test.cases]
    hypotheses = {case.hypothesis for case in cases}
    for ungrammatical in ("an equipment", "a young.", "a sustenance", "a transport", "a headgear", "a clothing"):
        assert not any(ungrammatical in text for text in hypotheses), ungrammatical
    for false_hyponymy in (("a spoon", "a container"), ("a candle", "a lamp"), ("a rose", "a bush")):
        assert not any(false_hyponymy[0] in c.premise and false_hyponymy[1] in c.hypothesis for c in cases)
    assert not any(" is middle." in text or " is soft." in text for text in hypotheses)  # early ↔ late, not loud ↔ soft
    assert not any(" met " in text or "was met by" in text for text in hypotheses)  # meeting is mutual
    assert not any("earlier than" in text for text in hypotheses)  # said of people
    counting = next(t for t in build_suite("nli", per_test=10, seed=1) if t.capability == "Numbers and counting")
    assert "read exactly" in counting.description

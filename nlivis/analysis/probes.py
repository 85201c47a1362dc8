"""Behavioural test suites (CheckList's three test types, Ribeiro et al. 2020), written for nlivis.

A suite is a list of tests, each testing one capability:
- MFT (minimum functionality): pairs built from templates and nlivis's lexicons (`analysis.lexicons`, with
  WordNet 3.0 antonyms and hypernyms looked up at build time), each with the label logic gives it;
- INV (invariance) and DIR (directional): real dev pairs (SNLI dev and MultiNLI dev matched for "nli", Quora
  dev for "paraphrase") changed by the edit engine (`analysis.edits`); an INV case fails when the prediction
  changes, a DIR case when it misses the edit's label or direction expectation.
A case fails or passes per model; a test reports its failure rate with a Wilson 95% interval, two models on
the same cases are compared with McNemar's exact test (Holm-adjusted over all comparisons), and every
failing case is kept with what was expected and predicted, so a view can open it as a pair.

Each test declares its `generator`: ENGINE when its cases come from the same code or lexicons as `train
--augment` (the edit engine on dev pairs; WordNet antonyms and hypernyms through `analysis.word_replacements`;
the exclusive categories and number words of `analysis.lexicons`), INDEPENDENT when they were written without
them (hand-written templates and frames, dev questions as they are). A model trained on the engine's edits
is being tested on its own generator by an ENGINE test: only INDEPENDENT tests and held-out files speak for
a fix. The template tests and their frames are `analysis.probe_templates`. Every case's text is whitespace-normalised (`analysis.edits.normalise_space`), so a dev-built case is
found again by its text.

Suites are deterministic: templates are sampled and dev pairs visited in an order drawn from `seed`, and
every edit choice is a fixed rule. Dev-built cases come from sentences a checkpoint may have seen in
training: `nlivis.workflows.probes.training_overlap` counts them against the checkpoint's recorded training
split (`analysis.overlap`, shared with `evaluate --file`). This module builds and judges; reading the dev
splits, the suite's disk cache and running the models are `nlivis.workflows.probes`.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Callable, Mapping, Sequence

import numpy as np

from nlivis.analysis import lexicons
from nlivis.analysis.edit_runs import expectation_met
from nlivis.analysis.edit_expectations import CONTRADICTION, DUPLICATE, ENTAILMENT, INVARIANT, LABEL
from nlivis.analysis.edit_filters import OFF_BY_DEFAULT
from nlivis.analysis.edits import Edit, normalise_space, propose_edits
from nlivis.analysis.parsed import parse_sentences
from nlivis.analysis.probe_templates import ENGINE, INDEPENDENT, ProbeCase, nli_templates, paraphrase_templates
from nlivis.analysis.significance import holm_adjusted, mcnemar_exact, wilson_interval

DEFAULT_CASES_PER_TEST = 110
"""Cases per test unless --max-cases says otherwise: the 24 NLI tests give a suite of 2,640 cases."""
EVERY_TEMPLATE_CASE = 2000
"""Cases per test that take every case the NLI template tests have (680 upward, 920 downward, 1,200 quantifier
cases …; the largest are cut at this): the power of a held-out set of a thousand pairs, which the 110-case suite
lacks to see a regression of a few points (README, "Every template case")."""
MAX_DEV_PAIRS = 12_000
"""Dev pairs looked at, at most, to fill the edit-based tests (their order is drawn from the seed)."""
DEV_CHUNK = 256
"""Dev pairs looked at between two progress messages."""
PARSE_AHEAD = 64
"""Dev pairs of a chunk parsed together (spaCy's batch), of those still fitting an open test: a test that fills
up within a chunk leaves its later pairs unparsed (a whole chunk at once parsed 1,468 texts for the 1,284 that
the NLI suite's edits read)."""
SUITES = ("nli", "paraphrase")
DEV_SPLITS = {
    "nli": (("snli", "dev", "snli/esnli_tokenized"), ("mnli", "dev_matched", "mnli_dev")),
    "paraphrase": (("quora", "dev", "quora"),),
}
"""The dev splits an edit-based test draws from: (dataset, split, folder under --data-dir)."""


@dataclass(frozen=True)
class ProbeTest:
    capability: str
    name: str
    type: str
    description: str
    cases: tuple[ProbeCase, ...]
    generator: str
    """ENGINE or INDEPENDENT (the module's docstring)."""


# --------------------------------------------------------------------------------- tests built from dev


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w']+", text.lower()))


EXCLUSIVE_WORDS = frozenset(member.lower() for members, _ in lexicons.EXCLUSIVE_CATEGORIES.values()
                            for member in members)
GENDERED_WORDS = frozenset({w for pair in lexicons.GENDER_PAIRS for w in pair} | {"his", "her", "him", "hers"})
NAMES = frozenset(n.lower() for n in lexicons.MALE_NAMES + lexicons.FEMALE_NAMES)
QUANTIFIER_WORDS = frozenset({"a", "an", "some", "every", "all", "no", "most", "each"})


def _has_number(words: set[str]) -> bool:
    return bool(words & set(lexicons.NUMBER_WORDS)) or any(w.isdigit() for w in words)


@dataclass
class EditTest:
    """An INV / DIR test filled with the first edit of each dev pair that `accepts` (gold label, edit).

    `kinds` are the edit kinds it needs; `may_fit(gold, premise, hypothesis)` is a cheap text test that rules
    out pairs no accepted edit can come from, so they are never parsed."""

    capability: str
    name: str
    type: str
    description: str
    kinds: tuple[str, ...]
    may_fit: Callable[[str, str, str], bool]
    accepts: Callable[[str, Edit], bool]
    cases: list[ProbeCase] = field(default_factory=list)

    def case_of(self, edit: Edit, original: tuple[str, str], source: str) -> ProbeCase:
        original = (normalise_space(original[0]), normalise_space(original[1]))
        if self.type == "INV":
            return ProbeCase(edit.premise, edit.hypothesis, INVARIANT, None, None, original, source)
        return ProbeCase(edit.premise, edit.hypothesis, edit.expectation, edit.expected, edit.direction, original,
                         source)

    def case_from(self, pair, split: str, edits: Sequence[Edit]) -> tuple[ProbeCase, Edit] | None:
        """The case this test makes of a dev `pair` of `split` from the edits proposed on it — the first one it
        accepts — with that edit, or None: how the suite fills a test, and what the audit judges."""
        chosen = next((edit for edit in edits if self.accepts(pair.label, edit)), None)
        if chosen is None:
            return None
        return self.case_of(chosen, (pair.premise, pair.hypothesis), f"{split}:{pair.id}"), chosen


def _labelled_edit(edit: Edit) -> bool:
    return edit.expectation in (LABEL, "direction")


def _anything(gold: str, premise: str, hypothesis: str) -> bool:
    return True


def nli_edit_tests() -> list[EditTest]:
    return [
        EditTest("Negation", "negated entailed hypothesis (dev)", "DIR",
                 "the main verb of an entailed SNLI / MultiNLI dev hypothesis with a definite subject (the, a name, "
                 "a pronoun, there) negated → contradiction; an indefinite or plural subject's negation (∃¬) fixes "
                 "no label and is not used",
                 ("negation",), lambda gold, p, h: gold == ENTAILMENT,
                 lambda gold, e: e.kind == "negation" and e.side == "hypothesis" and gold == ENTAILMENT
                 and _labelled_edit(e)),
        EditTest("Quantifiers", "quantifier swapped on a subject (dev)", "DIR",
                 "a / every / no, some / all / no / most on a dev subject, with the label or direction the lattice "
                 "and the original label fix",
                 ("quantifier",), lambda gold, p, h: bool((_words(p) | _words(h)) & QUANTIFIER_WORDS),
                 lambda gold, e: e.kind == "quantifier" and _labelled_edit(e)),
        EditTest("Taxonomy: antonyms", "WordNet antonym in an entailed hypothesis (dev)", "DIR",
                 "one hypothesis word of an entailed dev pair replaced by its WordNet antonym, upward context → "
                 "contradiction",
                 ("antonym",), lambda gold, p, h: gold == ENTAILMENT,
                 lambda gold, e: e.change.relation == "antonym" and e.side == "hypothesis" and e.expectation == LABEL),
        EditTest("Taxonomy: hypernymy", "WordNet hypernym / hyponym (dev)", "DIR",
                 "a hypernym or hyponym on either side of a dev pair, with the label or direction monotonicity fixes "
                 "(MoNLI)",
                 ("hypernym", "hyponym"), _anything,
                 lambda gold, e: e.change.relation in ("hypernym", "hyponym") and _labelled_edit(e)),
        EditTest("Taxonomy: exclusive co-hyponyms", "exclusive word or number in an entailed hypothesis (dev)", "DIR",
                 "one hypothesis word of an entailed dev pair replaced by a different colour, animal, number … "
                 "(Breaking NLI) → contradiction",
                 ("exclusive", "number"),
                 lambda gold, p, h: gold == ENTAILMENT and bool(_words(h) & EXCLUSIVE_WORDS or _has_number(_words(h))),
                 lambda gold, e: (e.change.relation == "exclusive" or e.kind == "number") and e.side == "hypothesis"
                 and e.expectation == LABEL),
        EditTest("Logic: symmetry", "swapped contradiction (dev)", "DIR",
                 "premise and hypothesis of a dev contradiction swapped → contradiction (contradiction is symmetric)",
                 ("swap",), lambda gold, p, h: gold == CONTRADICTION,
                 lambda gold, e: e.kind == "swap" and gold == CONTRADICTION),
        EditTest("Robustness", "typo in the hypothesis (dev)", "INV",
                 "two letters of the hypothesis's longest content word swapped: the prediction must not change",
                 ("typo",), _anything, lambda gold, e: e.kind == "typo" and e.side == "hypothesis"),
        EditTest("Fairness", "gender swapped on both sides (dev)", "INV",
                 "every gendered word and name of a dev pair swapped consistently: the prediction must not change",
                 ("gender",), lambda gold, p, h: bool((_words(p) | _words(h)) & (GENDERED_WORDS | NAMES)),
                 lambda gold, e: e.kind == "gender"),
    ]


def paraphrase_edit_tests() -> list[EditTest]:
    one_side = ("hypothesis", "premise")
    return [
        EditTest("Logic: symmetry", "questions swapped (dev)", "INV",
                 "the two questions of a Quora dev pair in the other order: the prediction must not change",
                 ("swap",), _anything, lambda gold, e: e.kind == "swap"),
        EditTest("Negation", "one question of a duplicate negated (dev)", "DIR",
                 "the main verb of one question of a duplicate dev pair negated → not duplicate",
                 ("negation",), lambda gold, p, h: gold == DUPLICATE,
                 lambda gold, e: e.kind == "negation" and e.side in one_side and gold == DUPLICATE),
        EditTest("Taxonomy: antonyms", "WordNet antonym in one question of a duplicate (dev)", "DIR",
                 "one word of one question of a duplicate dev pair replaced by its WordNet antonym → not duplicate",
                 ("antonym",), lambda gold, p, h: gold == DUPLICATE,
                 lambda gold, e: e.change.relation == "antonym" and e.expectation == LABEL and gold == DUPLICATE),
        EditTest("NER: names and numbers", "name, number or exclusive word changed on one side (dev)", "DIR",
                 "a person's name, a number, a nationality, colour … changed in one question of a duplicate → not "
                 "duplicate",
                 ("number", "name", "exclusive"),
                 lambda gold, p, h: gold == DUPLICATE and bool(
                     (_words(p) | _words(h)) & (EXCLUSIVE_WORDS | NAMES) or _has_number(_words(p) | _words(h))),
                 lambda gold, e: (e.kind in ("number", "name") or e.change.relation == "exclusive")
                 and e.side in one_side and e.expectation == LABEL and gold == DUPLICATE),
        EditTest("Robustness", "typo in one question (dev)", "INV",
                 "two letters of the second question's longest content word swapped: the prediction must not change",
                 ("typo",), _anything, lambda gold, e: e.kind == "typo" and e.side == "hypothesis"),
        EditTest("Vocabulary: synonyms", "WordNet synonym in one question (dev)", "INV",
                 "one word replaced by a WordNet synonym of its dominant sense: the prediction must not change",
                 ("synonym",), _anything, lambda gold, e: e.change.relation == "synonym"),
    ]


def fill_edit_tests(tests: Sequence[EditTest], suite: str, dev: Sequence[tuple[str, object]], per_test: int,
                    rng: random.Random, progress: Callable[[str], None]) -> int:
    """Visit dev pairs in a seeded order and give each test the first accepted edit of each pair until every
    test has `per_test` cases; returns how many dev pairs were visited."""
    order = list(range(len(dev)))
    rng.shuffle(order)
    order = order[:MAX_DEV_PAIRS]
    visited = 0
    for start in range(0, len(order), DEV_CHUNK):
        open_tests = [test for test in tests if len(test.cases) < per_test]
        if not open_tests:
            break
        chunk = []
        for i in order[start:start + DEV_CHUNK]:
            split, pair = dev[i]
            fitting = [t for t in open_tests if t.may_fit(pair.label, pair.premise, pair.hypothesis)]
            if fitting:
                chunk.append((split, pair, fitting))
        parsed = 0
        for ahead in range(0, len(chunk), PARSE_AHEAD):
            if ahead:  # a word between batches too: a caller may pause there (the app's warm-up yields to pages)
                progress(f"probe: looking at dev pairs {start + 1:,}–{min(start + DEV_CHUNK, len(order)):,} "
                         f"({parsed:,} parsed so far); " + filled(tests, per_test))
            batch = [(split, pair, still) for split, pair, fitting in chunk[ahead:ahead + PARSE_AHEAD]
                     if (still := [test for test in fitting if len(test.cases) < per_test])]
            # the texts `propose_edits` parses (whitespace-normalised), in one batch: a raw text with a double or
            # trailing space would be parsed here in vain and its normalised form again, two sentences at a time
            parse_sentences([normalise_space(text) for _, pair, _ in batch for text in (pair.premise, pair.hypothesis)])
            parsed += len(batch)
            for split, pair, fitting in batch:
                fitting = [test for test in fitting if len(test.cases) < per_test]
                if not fitting:
                    continue
                kinds = tuple(dict.fromkeys(kind for test in fitting for kind in test.kinds))
                edits = propose_edits(pair.premise, pair.hypothesis, pair.label, suite, kinds)
                for test in fitting:
                    made = test.case_from(pair, split, edits)
                    if made is not None:
                        test.cases.append(made[0])
        visited = min(start + DEV_CHUNK, len(order))
        progress(f"probe: {visited:,} dev pairs looked at ({parsed:,} of the last {DEV_CHUNK} parsed); "
                 + filled(tests, per_test))
    return visited


def filled(tests: Sequence[EditTest], per_test: int) -> str:
    """How far each test is filled, for a progress message: its cases of the most it takes."""
    return ", ".join(f"{len(t.cases)}/{per_test}" for t in tests)


def reflexivity_cases(dev: Sequence[tuple[str, object]], rng: random.Random) -> list[ProbeCase]:
    questions = sorted({text for _, pair in dev for text in (pair.premise, pair.hypothesis)})
    rng.shuffle(questions)
    return [ProbeCase(q, q, LABEL, DUPLICATE, source="quora_dev")
            for q in dict.fromkeys(map(normalise_space, questions))]


TEMPLATE_EDIT_KINDS: dict[str, tuple[str, ...]] = {"WordNet antonym adjectives": ("antonym",)}
"""Template tests built from the engine's lexicon of an edit kind, by test name (the dev-built tests name
theirs in `EditTest.kinds`)."""


def switched_off_tests() -> dict[str, str]:
    """Tests off by default, by name, with the reason: those built from an edit kind the audit switched off
    (`edit_filters.OFF_BY_DEFAULT`). `build_suite` still builds them (the audit judges them, `probe
    --include-off` runs them); `default_tests` leaves them out."""
    kinds_of = {**{test.name: test.kinds for test in nli_edit_tests()}, **TEMPLATE_EDIT_KINDS}
    reason = {kind: why.replace("the hand-judged audit", "the audit") for kind, why in OFF_BY_DEFAULT.items()}
    return {name: f"built from {kind} edits, of which {reason[kind]}"
            for name, kinds in kinds_of.items() for kind in kinds if kind in OFF_BY_DEFAULT}


def default_tests(tests: Sequence[ProbeTest]) -> list[ProbeTest]:
    """The tests a default run shows: all but `switched_off_tests`."""
    off = switched_off_tests()
    return [test for test in tests if test.name not in off]


def build_suite(suite: str, dev: Sequence[tuple[str, object]] = (), per_test: int = DEFAULT_CASES_PER_TEST,
                seed: int = 1, progress: Callable[[str], None] = lambda message: None) -> list[ProbeTest]:
    """The suite's tests, each with at most `per_test` cases: template tests sample theirs with the seed,
    edit-based tests (and paraphrase reflexivity) draw from the `dev` pairs (none: template tests only)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; use {' or '.join(SUITES)}")
    if per_test < 1:
        raise ValueError("cases per test must be at least 1")
    rng = random.Random(seed)
    templates = nli_templates(rng) if suite == "nli" else paraphrase_templates(rng)
    tests = []
    for capability, name, kind, description, candidates, generator in templates:
        chosen = candidates if len(candidates) <= per_test else rng.sample(candidates, per_test)
        tests.append(ProbeTest(capability, name, kind, description, tuple(chosen), generator))
    if dev:
        progress(f"probe: {len(tests)} template tests built; editing dev pairs")
        edit_tests = nli_edit_tests() if suite == "nli" else paraphrase_edit_tests()
        fill_edit_tests(edit_tests, suite, dev, per_test, random.Random(seed + 1), progress)
        tests += [ProbeTest(t.capability, t.name, t.type, t.description, tuple(t.cases), ENGINE) for t in edit_tests]
        if suite == "paraphrase":
            tests.append(ProbeTest("Logic: reflexivity", "a question and itself (dev)", "MFT",
                                   "a Quora dev question paired with itself → duplicate",
                                   tuple(reflexivity_cases(dev, random.Random(seed + 2))[:per_test]), INDEPENDENT))
    order = {capability: i for i, capability in enumerate(dict.fromkeys(t.capability for t in tests))}
    return sorted(tests, key=lambda t: (order[t.capability], t.type != "MFT"))


SUITE_FORMAT = "nlivis-probe-suite-2"
SUITE_CODE = ("probes.py", "probe_templates.py", "edits.py", "edit_filters.py", "edit_expectations.py",
              "word_replacements.py", "monotonicity.py", "lexicons.py", "inflection.py", "parsed.py")
"""The modules of `nlivis.analysis` a suite's cases follow from: a change to any of them gives a new entry in
the suite cache (`nlivis.workflows.probes.load_suite`)."""


# ------------------------------------------------------------------------------------------ evaluation


@dataclass
class ModelOutcome:
    failures: list[int]
    predicted: list[str]
    original_predicted: list[str | None]


@dataclass(frozen=True)
class FailingCase:
    """One case a model failed: its index in its test, the case, and the labels predicted for it and (INV and
    DIR cases) for its unedited original."""

    index: int
    case: ProbeCase
    predicted: str
    original_predicted: str | None


@dataclass
class ProbeResult:
    tests: list[ProbeTest]
    labels: tuple[str, ...]
    names: list[str]
    outcomes: list[dict[str, ModelOutcome]]
    """Per test, per model."""
    overlap: dict[str, dict | None]

    def failing(self, test_name: str, model: str) -> list[FailingCase] | None:
        """The failing cases of test `test_name` for `model`, in case order (None: no such test or model)."""
        found = next((i for i, test in enumerate(self.tests) if test.name == test_name), None)
        if found is None or model not in self.outcomes[found]:
            return None
        outcome, cases = self.outcomes[found][model], self.tests[found].cases
        return [FailingCase(i, cases[i], outcome.predicted[i], outcome.original_predicted[i]) for i in outcome.failures]


def reference_of(case: ProbeCase) -> tuple[str, str] | None:
    """The unedited pair a case is judged against: INV and direction cases only (a label case needs no
    reference, and not predicting its original saves a fifth of the suite's model time)."""
    return case.original if case.expectation in (INVARIANT, "direction") else None


def decide_cases(tests: Sequence[ProbeTest], names: Sequence[str], labels: Sequence[str],
                 probabilities: Mapping[str, np.ndarray], row: Mapping[tuple[str, str], int]) -> list[dict[str, ModelOutcome]]:
    """Each case of each test decided per model, from `probabilities[model]` [pairs, labels] whose row of a
    pair (a case's or its reference's) is `row[(premise, hypothesis)]`."""
    outcomes = []
    for test in tests:
        per_model = {}
        for name in names:
            table = probabilities[name]
            failures, predicted, original_predicted = [], [], []
            for index, case in enumerate(test.cases):
                after = table[row[(case.premise, case.hypothesis)]]
                reference = reference_of(case)
                before = table[row[reference]] if reference is not None else after
                predicted.append(labels[int(np.argmax(after))])
                original_predicted.append(labels[int(np.argmax(before))] if reference is not None else None)
                if expectation_met(case.expectation, case.expected, case.direction, labels, before, after) is False:
                    failures.append(index)
            per_model[name] = ModelOutcome(failures, predicted, original_predicted)
        outcomes.append(per_model)
    return outcomes


def comparisons(tests: Sequence[ProbeTest], outcomes: Sequence[dict[str, ModelOutcome]],
                names: Sequence[str]) -> list[dict]:
    """McNemar's exact test per test for every two checkpoints on the same cases (discordant failures), with
    Holm's adjustment over all of them."""
    rows = []
    for test, per_model in zip(tests, outcomes):
        for a, b in combinations(names, 2):
            failed_a, failed_b = set(per_model[a].failures), set(per_model[b].failures)
            only_a, only_b = len(failed_a - failed_b), len(failed_b - failed_a)
            rows.append({"capability": test.capability, "name": test.name, "a": a, "b": b,
                         "only_a_fails": only_a, "only_b_fails": only_b, "p": mcnemar_exact(only_a, only_b)})
    for row, adjusted in zip(rows, holm_adjusted([row["p"] for row in rows])):
        row["p_holm"] = adjusted
    return rows


def failure_answers(test: dict, name: str) -> Counter:
    """What checkpoint `name` answered on the cases of a `probe --json` test it failed, counted by "expected →
    said" ("entailment → neutral"): a model that reads a hypernym under negation as if upward fails the downward
    test with the upward label on both of its directions, which a failure rate alone does not show."""
    cases = test["case_list"]
    return Counter(f"{cases[f['case']]['expected'] or cases[f['case']]['expectation']} → {f['predicted']}"
                   for f in test["by_model"][name]["failing"])


def capability_comparisons(record: dict, a: str, b: str) -> list[dict]:
    """Checkpoints `a` and `b` of a `probe --json` record compared per generator and capability (a before → after
    view, e.g. a baseline and its augmented run): the cases of the capability's tests of one generator pooled,
    each one's failure rate, the failures only one of them has (and what each answered there, `answers_a` /
    `answers_b`: `failure_answers`), McNemar's exact test on those, and Holm's adjustment over all rows. INDEPENDENT rows first, then ENGINE rows (each in the record's capability order):
    an ENGINE row tests an augmented model on the generator it was trained from, so it never pools with an
    INDEPENDENT one."""
    pooled: dict[tuple[str, str], dict] = {}
    for test in sorted(record["tests"], key=lambda t: t["generator"] != INDEPENDENT):  # stable: record order within
        missing = [name for name in (a, b) if name not in test["by_model"]]
        if missing:
            raise ValueError(f"the probe record has no results for {', '.join(missing)}; it has "
                             f"{', '.join(test['by_model'])}")
        row = pooled.setdefault((test["generator"], test["capability"]), {
            "generator": test["generator"], "capability": test["capability"], "tests": 0, "cases": 0,
            "failures_a": 0, "failures_b": 0, "only_a_fails": 0, "only_b_fails": 0})
        failed_a = {f["case"] for f in test["by_model"][a]["failing"]}
        failed_b = {f["case"] for f in test["by_model"][b]["failing"]}
        for name, key in ((a, "answers_a"), (b, "answers_b")):
            row.setdefault(key, Counter()).update(failure_answers(test, name))
        row["tests"] += 1
        row["cases"] += test["cases"]
        row["failures_a"] += len(failed_a)
        row["failures_b"] += len(failed_b)
        row["only_a_fails"] += len(failed_a - failed_b)
        row["only_b_fails"] += len(failed_b - failed_a)
    rows = list(pooled.values())
    for row in rows:
        row["rate_a"] = row["failures_a"] / row["cases"] if row["cases"] else None
        row["rate_b"] = row["failures_b"] / row["cases"] if row["cases"] else None
        row["p"] = mcnemar_exact(row["only_a_fails"], row["only_b_fails"])
    for row, adjusted in zip(rows, holm_adjusted([row["p"] for row in rows])):
        row["p_holm"] = adjusted
    return rows


def probe_record(result: ProbeResult, suite: str, seed: int, per_test: int, notes: dict[str, str | None]) -> dict:
    """The `probe --json` output: `{tests: [{capability, name, type, cases, by_model: {CK: {failures, rate,
    interval, failing}}, case_list}], comparisons, checkpoints: {CK: {protocol_note, training_overlap}}}`."""
    tests = []
    for test, per_model in zip(result.tests, result.outcomes):
        count = len(test.cases)
        by_model = {}
        for name in result.names:
            outcome = per_model[name]
            failures = len(outcome.failures)
            low, high = wilson_interval(failures, count)
            by_model[name] = {  # six decimals: the JSON holds shares, not float noise
                "failures": failures, "rate": round(failures / count, 6) if count else None,
                "interval": [round(low, 6), round(high, 6)] if count else None,
                "failing": [{"case": i, "predicted": outcome.predicted[i],
                             "original_predicted": outcome.original_predicted[i]} for i in outcome.failures]}
        tests.append({"capability": test.capability, "name": test.name, "type": test.type,
                      "generator": test.generator, "description": test.description, "cases": count, "by_model": by_model,
                      "case_list": [{**asdict(case), "original": list(case.original) if case.original else None}
                                    for case in test.cases]})
    return {"suite": suite, "seed": seed, "cases_per_test": per_test, "labels": list(result.labels),
            "checkpoints": {name: {"protocol_note": notes.get(name), "training_overlap": result.overlap.get(name)}
                            for name in result.names},
            "tests": tests, "comparisons": comparisons(result.tests, result.outcomes, result.names)}


"""The audit of the edit engine and the probe suite against a reviewer's judgements: what to judge, and how
right the engine is where it was judged.

What to judge is drawn, not chosen: SNLI dev pairs are visited in an order fixed by `AUDIT_SEED` (the
sha256 of the seed and the pair id), and
- edits: every edit kind — substitutions by word relation, the other kinds by name (`edit_stratum`) — takes
  one of the pair's proposals of that kind (the one whose fingerprint hashes lowest with the seed) from each
  visited pair that has one, until it holds `EDITS_PER_STRATUM`, and then, from the proposals that expect
  something, until at least `FLOOR_MIN_CASES` of its items do;
- counterparts: the label-fixed edits of a dev premise paired with itself whose label the relation of the two
  sides fixes beyond the engine's own expectations (`analysis.self_pairs`: a stronger copy as hypothesis and a
  weaker copy as premise are neutral, a negated premise contradicts) — the pairs `train --augment` adds as
  the label-preserving and neutral counterparts of its one-word edits —, drawn like the edits (one per visited
  premise and stratum, `COUNTERPARTS_PER_STRATUM` per stratum), and every label of the premise's negated copy
  paired with itself (`NEGATED_COPY_STRATA`, as many per stratum);
- probes: every template test of the NLI suite (`probes.build_suite` at the probe command's defaults)
  gives the `CASES_PER_TEST` cases whose texts hash lowest with the seed; every test built from dev pairs
  (`probes.nli_edit_tests`) takes its case from each visited pair it accepts, as the suite does, until it
  holds `CASES_PER_TEST`.
The draw follows the engine: when the engine changes an edit, the drawn edit gets a new fingerprint and
waits for a judgement (`pending`), and a judgement whose edit is no longer drawn is `stale` (and
`no_longer_proposed` when the engine does not propose that edit on its pair at all any more). Only drawn,
judged items count: label precision over the items that expect something (a label, invariance or a
direction), grammaticality over all of them, each a share with its Wilson 95% interval.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from nlivis.analysis import lexicons
from nlivis.analysis.edits import DEFAULT_KINDS, KINDS, NAME_GENDER, RELATIONS, Edit, normalise_space, propose_edits
from nlivis.analysis.parsed import parse_sentences
from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST, ProbeCase, build_suite, nli_edit_tests
from nlivis.analysis.self_pairs import (NEGATED_COPY_SWAP_LEFT_OUT, SWITCHED_OFF_GROUPS, TWIN_ONLY,
                                       negated_self_pair_edits, self_pair_edits)
from nlivis.analysis.significance import wilson_interval
from nlivis.analysis.word_replacements import EXCLUSIVE_MEMBERS
from nlivis.data.audit_set import FINGERPRINT_LENGTH, NO_EXPECTATION, TEMPLATE_SOURCE, AuditItem

AUDIT_SEED = 28
EDITS_PER_STRATUM = 36
FRESH_AFTER_A_FIX: dict[str, int] = {"negation": 36}
"""Edit kinds fixed on the errors their judged items showed, and how many further items each draws once it holds
its usual ones — the next proposals in the same seeded order, none of them seen when the fix was made — so that
the fixed generator is measured on items it was not built from (negation: "got not", "there are not several",
an unlicensed "anything" after a removed "n't", all from its first 57 items)."""
COUNTERPARTS_PER_STRATUM = 36
"""As many as an edit kind's (`EDITS_PER_STRATUM`): at least `FLOOR_MIN_CASES`, so that the floors apply to every
counterpart stratum (20 each, the first audit's size, were judged but held to no floor)."""
CASES_PER_TEST = 30
PROBE_SUITE_SEED = 1
"""The probe command's default seed: the template cases audited are those `probe` runs."""
LABEL_FLOOR, GRAMMATICAL_FLOOR, FLOOR_MIN_CASES = 0.97, 0.95, 30
"""The targets: expected-label precision and grammaticality of every kind or test judged on at least
`FLOOR_MIN_CASES` items (label precision: on at least that many items that expect something)."""
VISIT_CHUNK = 256
"""Dev pairs parsed together (spaCy's batch)."""


@dataclass(frozen=True)
class Drawn:
    """One drawn item with what a reviewer reads: the edited pair (or case), the original pair and label, the
    change in words, what the engine expects and why."""

    stratum: str
    source: str
    fingerprint: str
    change: str
    expects: str
    premise: str
    hypothesis: str
    original: tuple[str, str] | None
    label: str | None
    reason: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return self.stratum, self.source, self.fingerprint


def stable_hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def expects_of(expectation: str | None, expected: str | None, direction: str | None) -> str:
    """"label entailment", "invariant", "direction entailment not_fall" or "none"."""
    if expectation is None:
        return NO_EXPECTATION
    return " ".join(part for part in (expectation, expected, direction) if part)


def fingerprint(premise: str, hypothesis: str, expects: str) -> str:
    """Which edit, without its text: the first hex digits of the sha256 of the pair (its whitespace collapsed:
    spacing is no part of what a reviewer judges) and its expectation."""
    return stable_hash(" ".join(premise.split()), " ".join(hypothesis.split()), expects)[:FINGERPRINT_LENGTH]


def edit_stratum(edit: Edit) -> str:
    """A substitution's word relation (synonym, hypernym …), else the edit's kind."""
    return edit.change.relation if edit.kind == "substitution" else edit.kind


EDIT_STRATA: tuple[str, ...] = RELATIONS + KINDS[1:]


def describe_edit(edit: Edit) -> str:
    """The edit in words without its sentences: side, token positions and the words changed."""
    change = edit.change
    positions = [f"{side[0]}{i}" for side, found in (("premise", change.premise_positions),
                                                     ("hypothesis", change.hypothesis_positions)) for i in found]
    words = f"{change.word or '∅'} → {change.replacement or '∅'}" if change.word or change.replacement else ""
    return " ".join(part for part in (edit.side, ",".join(positions), words, f"({change.relation})") if part)


def _drawn_edit(stratum: str, source: str, edit: Edit, original: tuple[str, str], label: str | None) -> Drawn:
    expects = expects_of(edit.expectation, edit.expected, edit.direction)
    return Drawn(stratum, source, fingerprint(edit.premise, edit.hypothesis, expects), describe_edit(edit), expects,
                 edit.premise, edit.hypothesis, original, label, edit.reason)


def _words(*texts: str) -> set[str]:
    return {w for text in texts for w in re.findall(r"[\w']+", text.lower())}


NUMBER_WORDS = frozenset(lexicons.NUMBER_WORDS)
GENDERED = frozenset({w for pair in lexicons.GENDER_PAIRS for w in pair} | {"his", "her", "him", "hers"})
NAMES = frozenset(name.lower() for name in NAME_GENDER)
QUANTIFIERS = frozenset({"a", "an", "some", "every", "all", "no", "most", "each"})


def may_have(stratum: str, words: set[str]) -> bool:
    """Whether a pair with these (lower-case) words can have an edit of `stratum`: a cheap test that spares
    parsing the pairs that cannot."""
    if stratum == "name":
        return bool(words & NAMES)
    if stratum == "number":
        return bool(words & NUMBER_WORDS) or any(w.isdigit() for w in words)
    if stratum == "gender":
        return bool(words & (GENDERED | NAMES))
    if stratum == "quantifier":
        return bool(words & QUANTIFIERS)
    return True


def visiting_order(dev: Sequence[tuple[str, object]], seed: int = AUDIT_SEED) -> list[tuple[str, object]]:
    """The dev pairs in the audit's order: by the sha256 of the seed and the pair's source."""
    return sorted(dev, key=lambda entry: stable_hash(str(seed), f"{entry[0]}:{entry[1].id}"))


def _chunks(order: Sequence, wanted, sides: tuple[str, ...] = ("premise", "hypothesis")) -> Iterable[list]:
    """`order` in parsed chunks of the pairs `wanted(entry)` keeps, while `wanted` keeps any. The texts (of `sides`)
    are parsed whitespace-normalised, as every draw's `propose_edits` reads them, in one batch: a raw text with a
    double or trailing space (most of SNLI dev's) would be parsed here in vain and its normalised form again, two at
    a time."""
    for start in range(0, len(order), VISIT_CHUNK):
        chunk = [entry for entry in order[start:start + VISIT_CHUNK] if wanted(entry)]
        parse_sentences([normalise_space(getattr(pair, side)) for _, pair in chunk for side in sides])
        yield chunk


def draw_edits(dev: Sequence[tuple[str, object]], per_stratum: int = EDITS_PER_STRATUM,
               seed: int = AUDIT_SEED, claims: int = FLOOR_MIN_CASES,
               fresh: Mapping[str, int] = FRESH_AFTER_A_FIX) -> list[Drawn]:
    """The edits to judge (see the module's docstring), stratum by stratum in `EDIT_STRATA` order. A stratum
    holding `per_stratum` items whose expectations are fewer than `claims` goes on drawing, from the
    proposals that expect something only, until it has `claims` of them (so that label precision is
    measured on as many items as grammaticality); then a stratum named in `fresh` draws that many more."""
    drawn: dict[str, list[Drawn]] = {stratum: [] for stratum in EDIT_STRATA}
    usual_size: dict[str, int] = {}

    def wants(stratum: str) -> str | None:
        """"any" (still filling, or drawing `FRESH_AFTER_A_FIX`), "claims" (full, short of claims) or None
        (done)."""
        found = drawn[stratum]
        if len(found) < per_stratum:
            return "any"
        if stratum not in usual_size:
            if sum(item.expects != NO_EXPECTATION for item in found) < claims:
                return "claims"
            usual_size[stratum] = len(found)
        return "any" if len(found) < usual_size[stratum] + fresh.get(stratum, 0) else None

    def open_for(entry) -> list[str]:
        words = _words(entry[1].premise, entry[1].hypothesis)
        return [s for s in drawn if wants(s) and may_have(s, words)]

    for chunk in _chunks(visiting_order(dev, seed), lambda entry: bool(open_for(entry))):
        for split, pair in chunk:
            strata = {stratum: wants(stratum) for stratum in open_for((split, pair))}
            if not strata:
                continue
            source = f"{split}:{pair.id}"
            candidates: dict[str, list[Drawn]] = {}
            for edit in propose_edits(pair.premise, pair.hypothesis, pair.label, "nli", KINDS):
                stratum = edit_stratum(edit)
                item = _drawn_edit(stratum, source, edit, (pair.premise, pair.hypothesis), pair.label)
                if stratum in strata and (strata[stratum] == "any" or item.expects != NO_EXPECTATION):
                    candidates.setdefault(stratum, []).append(item)
            for stratum, items in candidates.items():
                drawn[stratum].append(min(items, key=lambda d: stable_hash(str(seed), d.source, d.fingerprint)))
        if not any(wants(stratum) for stratum in drawn):
            break
    return [item for found in drawn.values() for item in found]


COUNTERPART_STRATA = {("hypothesis", "neutral"): "self-pair: stronger hypothesis → neutral",
                      ("premise", "neutral"): "self-pair: weaker premise → neutral",
                      ("premise", "contradiction"): "self-pair: negated premise → contradiction"}
"""(edited side, label) of the self-pair labels the engine's expectations do not fix themselves → stratum."""
NEGATED_COPY_STRATA = {("hypothesis", "entailment"): "negated copy → entailment",
                       ("premise", "entailment"): "negated copy → entailment",
                       ("hypothesis", "contradiction"): "negated copy → contradiction",
                       ("premise", "contradiction"): "negated copy → contradiction",
                       ("hypothesis", "neutral"): "negated copy → neutral",
                       ("premise", "neutral"): "negated copy → neutral"}
"""(edited side, label) of every label of the negated copy paired with itself (`self_pairs.negated_self_pair_edits`)
→ stratum: each is judged, the engine's own labels too, since none of its kinds was judged under a negation the
engine inserted itself."""
NEGATED_EXCLUSIVE_STRATUM = "negated copy: object swapped for an exclusive one → neutral"
"""The stratum of the negated copy's neutrals made by `self_pairs.exclusive_in_scope`, a rule of its own, judged
apart from the hypernym neutrals of "negated copy → neutral"."""
COUNTERPART_KINDS = tuple(k for k in DEFAULT_KINDS if k != "swap")
"""The kinds a default run makes but the swap, which edits no word: the quantifier's "a → every" is off by default
and no counterpart."""
COUNTERPARTS_OFF = {**{COUNTERPART_STRATA[group]: f"augmentation leaves it out ({why}), but for its hypernyms and "
                                                   f"hyponyms written by hand, drawn as twins: {TWIN_ONLY}"
                       for group, why in SWITCHED_OFF_GROUPS.items()},
                    **{stratum: "a default run draws none of the negated copies: train --augment-negated-share "
                                "(default 0) draws them, without their word-swap contradictions "
                                f"({NEGATED_COPY_SWAP_LEFT_OUT})"
                       for stratum in (*NEGATED_COPY_STRATA.values(), NEGATED_EXCLUSIVE_STRATUM)}}


def negated_copy_stratum(edit: Edit, label: str | None) -> str | None:
    """The counterpart stratum of a label of the negated copy paired with itself."""
    if label == "neutral" and edit.kind == "substitution" and edit.change.relation == "exclusive":
        return NEGATED_EXCLUSIVE_STRATUM
    return NEGATED_COPY_STRATA.get((edit.side, label))


def counterpart_items(source: str, premise: str, label: str | None,
                      strata: frozenset[str] | None = None) -> list[Drawn]:
    """The counterparts (see the module's docstring) of one dev premise, as drawn items; with `strata`, only
    those strata's (the edits no other stratum needs are not made: once the others are full, the draw visits the
    rest of dev for the exclusive-object neutrals alone, one kind of edit of the negated copy)."""
    def wanted(names: Iterable[str]) -> bool:
        return strata is None or not strata.isdisjoint(names)

    own = ([(edit, fixed, COUNTERPART_STRATA.get((edit.side, fixed)) if edit.expectation != "label" else None,
             "the premise paired with itself, one side edited")
            for edit, fixed in self_pair_edits(premise, "nli", COUNTERPART_KINDS)]
           if wanted(COUNTERPART_STRATA.values()) else [])
    exclusive_only = strata is not None and strata <= {NEGATED_EXCLUSIVE_STRATUM}
    if exclusive_only and not any(w.lower in EXCLUSIVE_MEMBERS or w.lemma.lower() in EXCLUSIVE_MEMBERS
                                  for w in parse_sentences([normalise_space(premise)])[0].words):
        return []  # no word of an exclusive category: no exclusive swap to make
    negated_kinds = ("exclusive",) if exclusive_only else COUNTERPART_KINDS
    negated = ([(edit, fixed, negated_copy_stratum(edit, fixed),
                 "the premise's negated copy paired with itself, one side edited")
                for edit, fixed in negated_self_pair_edits(premise, "nli", negated_kinds)]
               if wanted((*NEGATED_COPY_STRATA.values(), NEGATED_EXCLUSIVE_STRATUM)) else [])
    found = []
    for edit, fixed, stratum, reason in own + negated:
        if stratum is not None and (strata is None or stratum in strata):
            expects = f"label {fixed}"
            found.append(Drawn(stratum, source, fingerprint(edit.premise, edit.hypothesis, expects),
                               describe_edit(edit), expects, edit.premise, edit.hypothesis, (premise, premise),
                               label, reason))
    return found


FRESH_COUNTERPARTS_AFTER_A_FIX: dict[str, int] = {"negated copy → neutral": 36, "negated copy → entailment": 216,
                                                  "self-pair: stronger hypothesis → neutral": 36,
                                                  NEGATED_EXCLUSIVE_STRATUM: 36}
"""Counterpart strata fixed on the errors their judged items showed, and how many further items each draws (as
`FRESH_AFTER_A_FIX` does for the edits): the negated copy's neutral labels, after an adverbial clause read as
negated (an after-clause, said rather than denied) made the polarity code leave such clauses unknown; its
entailments, whose copies were ungrammatical where spaCy read a participle as the verb, after
`self_pairs.misread_main_verb`, and 36 more after a counted noun under negation was left unknown ("there are not
three boats" read exactly does not entail "… three barges"), and 36 more after a plural-form noun was refused as a
replacement (`word_replacements.plural_form`: "flags" had become "colorses"), and 36 more after a with-absolute
under a negation was left unknown (`monotonicity.with_absolute`: "… with trees in the background"), and 36 more
after its hypernyms and hyponyms were taken only from pairs written by hand (`lexicons.CAPTION_IS_A_BY_HAND`:
"instruments" had become "weapons"), and 36 more after a with-absolute whose predicate is a particle was left
unknown ("… with coats and scarves on"); the self-pair's
stronger hypotheses, after a neutral copy whose replacement the sentence already says was left out
(`self_pairs.replacement_said`: "hand" → "fist" beside "a fist"); the negated copy's exclusive-object neutrals,
after an object the sentence says is there outside the negation was left out (`self_pairs.object_said_outside`:
"… not signing a guitar, whose owner is smiling") and do-support took the verb's form that inflects back
(`inflection.base_form`: "rides" had become "does not rid")."""


def draw_counterparts(dev: Sequence[tuple[str, object]], per_stratum: int = COUNTERPARTS_PER_STRATUM,
                      seed: int = AUDIT_SEED, fresh: Mapping[str, int] = FRESH_COUNTERPARTS_AFTER_A_FIX) -> list[Drawn]:
    """From each visited dev premise (once, under its first pair in the audit's order), per stratum the
    counterpart whose fingerprint hashes lowest, until every stratum holds `per_stratum` (and a stratum named in
    `fresh` that many more)."""
    drawn: dict[str, list[Drawn]] = {stratum: [] for stratum in (*COUNTERPART_STRATA.values(),
                                                                 *NEGATED_COPY_STRATA.values(),
                                                                 NEGATED_EXCLUSIVE_STRATUM)}
    wanted = {stratum: per_stratum + fresh.get(stratum, 0) for stratum in drawn}
    premises: set[str] = set()

    def new_premise(entry) -> bool:
        return entry[1].premise not in premises

    for chunk in _chunks(visiting_order(dev, seed), new_premise, ("premise",)):
        for split, pair in chunk:
            if pair.premise in premises:
                continue
            premises.add(pair.premise)
            by_stratum: dict[str, list[Drawn]] = {}
            open_strata = frozenset(stratum for stratum, found in drawn.items() if len(found) < wanted[stratum])
            for item in counterpart_items(f"{split}:{pair.id}", pair.premise, "entailment", open_strata):
                by_stratum.setdefault(item.stratum, []).append(item)
            for stratum, items in by_stratum.items():
                if len(drawn[stratum]) < wanted[stratum]:
                    drawn[stratum].append(min(items, key=lambda d: stable_hash(str(seed), d.source, d.fingerprint)))
        if all(len(found) >= wanted[stratum] for stratum, found in drawn.items()):
            break
    return [item for found in drawn.values() for item in found]


def proposed_counterpart_keys(sources: Iterable[str], dev: Sequence[tuple[str, object]]) -> set[tuple[str, str, str]]:
    """The keys of every counterpart today's rules make of the dev premises named by `sources`."""
    wanted = set(sources)
    return {item.key for split, pair in dev if f"{split}:{pair.id}" in wanted
            for item in counterpart_items(f"{split}:{pair.id}", pair.premise, "entailment")}


def _drawn_case(stratum: str, case: ProbeCase, change: str, label: str | None, reason: str = "") -> Drawn:
    expects = expects_of(case.expectation, case.expected, case.direction)
    return Drawn(stratum, case.source, fingerprint(case.premise, case.hypothesis, expects), change, expects,
                 case.premise, case.hypothesis, case.original, label, reason)


def draw_template_cases(per_test: int = CASES_PER_TEST, seed: int = AUDIT_SEED) -> list[Drawn]:
    """From each NLI template test as `probe` builds it, the `per_test` cases whose texts hash lowest."""
    drawn = []
    for test in build_suite("nli", (), DEFAULT_CASES_PER_TEST, PROBE_SUITE_SEED):
        cases = sorted(test.cases, key=lambda c: stable_hash(str(seed), test.name, c.premise, c.hypothesis))
        drawn += [_drawn_case(test.name, case, f"{test.type} template", None) for case in cases[:per_test]]
    return drawn


def _dev_case(test, split: str, pair) -> tuple[Drawn, object] | None:
    """The case `test` makes of a dev pair as the suite makes it (the first edit it accepts), or None."""
    made = test.case_from(pair, split, propose_edits(pair.premise, pair.hypothesis, pair.label, "nli", test.kinds))
    if made is None:
        return None
    case, chosen = made
    return _drawn_case(test.name, case, describe_edit(chosen), pair.label, chosen.reason), chosen


def draw_dev_cases(dev: Sequence[tuple[str, object]], per_test: int = CASES_PER_TEST,
                   seed: int = AUDIT_SEED) -> list[Drawn]:
    """Each NLI test built from dev pairs, filled as the suite fills it (the first edit of a pair it
    accepts) from the pairs in the audit's order, up to `per_test` cases."""
    tests = nli_edit_tests()
    drawn: dict[str, list[Drawn]] = {test.name: [] for test in tests}

    def fitting(entry) -> list:
        pair = entry[1]
        return [t for t in tests if len(drawn[t.name]) < per_test and t.may_fit(pair.label, pair.premise,
                                                                                   pair.hypothesis)]

    for chunk in _chunks(visiting_order(dev, seed), lambda entry: bool(fitting(entry))):
        for split, pair in chunk:
            for test in fitting((split, pair)):
                made = _dev_case(test, split, pair)
                if made is not None:
                    drawn[test.name].append(made[0])
        if all(len(found) >= per_test for found in drawn.values()):
            break
    return [item for found in drawn.values() for item in found]


def proposed_edit_keys(sources: Iterable[str], dev: Sequence[tuple[str, object]]) -> set[tuple[str, str, str]]:
    """The keys of every edit today's engine proposes on the dev pairs named by `sources` ("split:id")."""
    wanted, keys = set(sources), set()
    for split, pair in dev:
        source = f"{split}:{pair.id}"
        if source in wanted:
            original = (pair.premise, pair.hypothesis)
            keys |= {_drawn_edit(edit_stratum(edit), source, edit, original, pair.label).key
                     for edit in propose_edits(pair.premise, pair.hypothesis, pair.label, "nli", KINDS)}
    return keys


def proposed_case_keys(sources: Iterable[str], dev: Sequence[tuple[str, object]]) -> set[tuple[str, str, str]]:
    """The keys of every NLI template case `probe` runs at its defaults and of every case the dev-built tests
    make of the dev pairs named by `sources`."""
    keys = {_drawn_case(test.name, case, "", None).key
            for test in build_suite("nli", (), DEFAULT_CASES_PER_TEST, PROBE_SUITE_SEED) for case in test.cases}
    wanted, tests = set(sources), nli_edit_tests()
    for split, pair in dev:
        if f"{split}:{pair.id}" in wanted:
            keys |= {made[0].key for test in tests if test.may_fit(pair.label, pair.premise, pair.hypothesis)
                     and (made := _dev_case(test, split, pair)) is not None}
    return keys


# ------------------------------------------------------------------------------------------ statistics

def share(right: int, count: int) -> dict:
    """`right` of `count` as a rate with its Wilson 95% interval (rate and interval null when `count` is 0)."""
    if count == 0:
        return {"right": 0, "of": 0, "rate": None, "interval": None}
    low, high = wilson_interval(right, count)
    return {"right": right, "of": count, "rate": round(right / count, 6), "interval": [round(low, 6), round(high, 6)]}


def _tally(items: Sequence[AuditItem]) -> dict:
    claims = [item for item in items if item.judgement.label_right is not None]
    return {"judged": len(items),
            "label_precision": share(sum(item.judgement.label_right for item in claims), len(claims)),
            "grammatical": share(sum(item.judgement.grammatical for item in items), len(items))}


def floor_problems(stratum: str, tally: Mapping, off: Mapping[str, str] = {}) -> list[str]:
    """What keeps a stratum's tally from the targets (empty: it meets them, is judged on too few items, or is
    switched off by default, `off`, for falling short of them)."""
    problems = []
    if stratum in off:
        return problems
    for key, floor in (("label_precision", LABEL_FLOOR), ("grammatical", GRAMMATICAL_FLOOR)):
        found = tally[key]
        if found["of"] >= FLOOR_MIN_CASES and found["rate"] < floor:
            problems.append(f"{stratum}: {key.replace('_', ' ')} {found['rate']:.1%} ({found['right']} of "
                            f"{found['of']}) is below its floor {floor:.0%}")
    return problems


def audit_summary(drawn: Sequence[Drawn], judged: Sequence[AuditItem], by: str,
                  proposed: set[tuple[str, str, str]] = frozenset(), off: Mapping[str, str] = {}) -> dict:
    """`{judged, label_precision, grammatical, <by>: {stratum: {judged, label_precision, grammatical,
    below_floor, switched_off}}, with_switched_off, drawn, pending, stale, no_longer_proposed}` of the drawn
    items with a judgement (see the module's docstring). The headline counts the strata a default run uses;
    `with_switched_off` also those `off` (stratum → why it is off by default), which are judged and shown but
    held to no floor. `no_longer_proposed`: the stale judgements whose edit is not among `proposed`."""
    judgements = {item.key: item for item in judged}
    drawn_keys = {item.key for item in drawn}
    counted = [judgements[item.key] for item in drawn if item.key in judgements]
    strata = list(dict.fromkeys(item.stratum for item in drawn))
    by_stratum = {}
    for stratum in strata:
        tally = _tally([item for item in counted if item.stratum == stratum])
        by_stratum[stratum] = {**tally, "drawn": sum(item.stratum == stratum for item in drawn),
                               "below_floor": floor_problems(stratum, tally, off),
                               "switched_off": off.get(stratum)}
    used = [item for item in counted if item.stratum not in off]
    return {**_tally(used), "with_switched_off": _tally(counted), by: by_stratum, "drawn": len(drawn),
            "pending": sum(item.key not in judgements for item in drawn),
            "stale": sum(item.key not in drawn_keys for item in judged),
            "no_longer_proposed": sum(item.key not in drawn_keys and item.key not in proposed for item in judged)}


def stale_sources(drawn: Sequence[Drawn], judged: Sequence[AuditItem]) -> set[str]:
    """The dev pairs ("split:id") of the judgements no longer drawn."""
    keys = {item.key for item in drawn}
    return {item.source for item in judged if item.key not in keys and item.source != TEMPLATE_SOURCE}


def pending_items(drawn: Sequence[Drawn], judged: Sequence[AuditItem]) -> list[Drawn]:
    """The drawn items no judgement covers, in draw order."""
    keys = {item.key for item in judged}
    return [item for item in drawn if item.key not in keys]


def drawn_as_json(item: Drawn) -> str:
    """A drawn item as one JSON line, texts included (for a reviewer's screen, never for the audit set)."""
    return json.dumps({"stratum": item.stratum, "source": item.source, "fingerprint": item.fingerprint,
                       "change": item.change, "expects": item.expects, "label": item.label,
                       "original": list(item.original) if item.original else None, "premise": item.premise,
                       "hypothesis": item.hypothesis, "reason": item.reason}, ensure_ascii=False)

"""The template tests of the behavioural suites (`analysis.probes`): hand-written frames filled from nlivis's
lexicons, each case with the label logic gives it, and which generator made them.

A template test is (capability, name, type, description, candidate cases, generator); `probes.build_suite`
samples its cases with the suite's seed. A test's `generator` is ENGINE when its cases come from the same code or
lexicons as `train --augment` (WordNet antonyms and hypernyms through `analysis.word_replacements`; the exclusive
categories and number words of `analysis.lexicons`), INDEPENDENT when they were written without them. The tests
added last (monotonicity, negation in the premise, word swap) come after the others in `nli_templates`, so that
the seeded sample of every earlier test stays what it was.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable, Sequence

from nlivis.analysis import lexicons
from nlivis.analysis.edit_expectations import CONTRADICTION, DUPLICATE, ENTAILMENT, LABEL, NEUTRAL, NOT_DUPLICATE
from nlivis.analysis.edits import normalise_space
from nlivis.analysis.inflection import indefinite_article, plural
from nlivis.analysis.word_replacements import wordnet_replacements

ENGINE, INDEPENDENT = "engine", "independent"
GENERATORS = (ENGINE, INDEPENDENT)
"""What built a test's cases: the edit engine's code or lexicons (as `--augment` does), or something else."""


@dataclass(frozen=True)
class ProbeCase:
    """One pair to predict and what a model must do with it. INV and DIR cases keep the unedited pair, whose
    prediction is their reference; `source` is "template" or "<split>:<pair id>"."""

    premise: str
    hypothesis: str
    expectation: str
    expected: str | None
    direction: str | None = None
    original: tuple[str, str] | None = None
    source: str = "template"


def _article(word: str) -> str:
    return f"{indefinite_article(word)} {word}"


def _names(rng: random.Random) -> tuple[str, str]:
    return rng.choice(lexicons.MALE_NAMES), rng.choice(lexicons.FEMALE_NAMES)


def labelled(rows: Iterable[tuple[str, str, str]]) -> list[ProbeCase]:
    return [ProbeCase(normalise_space(premise), normalise_space(hypothesis), LABEL, label)
            for premise, hypothesis, label in rows]


def _antonym_pairs(words: Sequence[str]) -> list[tuple[str, str]]:
    """(adjective, its WordNet antonym) for the words whose dominant sense has a direct antonym."""
    pairs = []
    for word in words:
        antonym = wordnet_replacements(word, "a").get("antonym")
        if antonym:
            pairs.append((word, antonym))
    return pairs


def _hypernym_pairs(nouns: Sequence[str]) -> list[tuple[str, str]]:
    """(noun, its WordNet hypernym) where the hypernym is countable ("holding an equipment" is not English)."""
    return [(noun, wordnet_replacements(noun, "n")["hypernym"]) for noun in nouns
            if wordnet_replacements(noun, "n").get("hypernym", "equipment") not in lexicons.MASS_NOUNS]


Template = tuple[str, str, str, str, list[ProbeCase], str]
"""(capability, name, type, description, candidate cases, generator) of a template test."""


def nli_templates(rng: random.Random) -> list[Template]:
    """Every NLI template test, in a fixed order."""
    passives, overlap = _role_cases(lexicons.OCCUPATIONS)
    return [_negation_test(), _quantifier_test(), *_taxonomy_tests(), _counting_test(rng), _comparative_test(rng),
            ("SRL: active / passive", "passive of the same event, and with roles swapped", "MFT",
             "The doctor saw the nurse ⊨ the nurse was seen by the doctor; ⊭ the doctor was seen by the nurse "
             "(asymmetric verbs only: \"met\" is left out, since meeting is mutual)", labelled(passives), INDEPENDENT),
            _coreference_test(rng), _temporal_test(rng),
            ("Lexical overlap (HANS)", "subject/object swap and subsequence", "MFT",
             "all words shared, different meaning: The doctor saw the nurse ⊭ the nurse saw the doctor; "
             "The doctor near the nurse saw the pilot ⊭ the nurse saw the pilot → neutral", labelled(overlap),
             INDEPENDENT),
            *_monotonicity_tests(), _premise_negation_test(), *_word_swap_tests()]
    # the tests added last draw their sample after the others': an earlier test's cases (and their judgements in
    # the audit) stay what they were


def _monotonicity_tests() -> list[Template]:
    """A hypernym for a hyponym (and back) where the position's polarity fixes the label — upward in a plain
    object, downward under negation and in the restrictor of "every" and "no" — from hand-written pairs and frames
    (`lexicons.HYPERNYMS_BY_HAND`), none of them the edit engine's or WordNet's: the class of held-out sets where
    the first augmented checkpoints had learnt "one changed word → contradiction" (issue 29)."""
    upward, downward = [], []
    for small, large, frame in lexicons.HYPERNYMS_BY_HAND:
        negated = frame.replace("is ", "is not ", 1)
        for o in lexicons.OCCUPATIONS:
            says, denies = (lambda noun, f=f: f"The {o} {f.format(_article(noun))}." for f in (frame, negated))
            upward += [(says(small), says(large), ENTAILMENT), (says(large), says(small), NEUTRAL)]
            downward += [(denies(large), denies(small), ENTAILMENT), (denies(small), denies(large), NEUTRAL)]
    for small, large in lexicons.ANIMAL_HYPERNYMS_BY_HAND:
        for place in lexicons.OUTDOOR_PLACES:
            for activity in ("sleeping", "eating", "resting"):
                for quantifier in ("Every", "No"):
                    said = lambda noun: f"{quantifier} {noun} in the {place} is {activity}."  # noqa: E731
                    downward += [(said(large), said(small), ENTAILMENT), (said(small), said(large), NEUTRAL)]
    return [("Monotonicity: upward", "a hypernym in an upward position (by hand)", "MFT",
             "The pilot is driving a sedan ⊨ the pilot is driving a car; the converse → neutral (hand-written "
             "pairs, not WordNet's)", labelled(upward), INDEPENDENT),
            ("Monotonicity: downward", "a hypernym under negation or in every / no (by hand)", "MFT",
             "The pilot is not driving a car ⊨ the pilot is not driving a sedan; every dog in the park is sleeping ⊨ "
             "every puppy in the park is sleeping; no dog … ⊨ no puppy …; the converses → neutral",
             labelled(downward), INDEPENDENT)]


PREMISE_NEGATION_LEFT_OUT = frozenset({"sitting", "working", "smiling"})
"""Activities the premise-negation probe does not negate: another activity entails them (driving → sitting, a chef
cooking → working, laughing → smiling), so "not sitting" would contradict "is driving" instead of leaving it open."""


def _premise_negation_test() -> Template:
    """A negation in the premise only, with each label: the negated activity itself contradicts, another activity
    is left open, and a premise that also asserts another activity still entails it — against the shortcut
    "a negation word → contradiction" (issue 29: negation in the premise, 500 held-out pairs)."""
    activities = [a for a, _ in lexicons.ACTIVITIES if a not in PREMISE_NEGATION_LEFT_OUT]
    rows = []
    for i, o in enumerate(lexicons.OCCUPATIONS):
        for j, denied in enumerate(activities):
            other = activities[(j + 1 + i % (len(activities) - 1)) % len(activities)]
            rows += [(f"The {o} is not {denied}.", f"The {o} is {denied}.", CONTRADICTION),
                     (f"The {o} is not {denied}.", f"The {o} is {other}.", NEUTRAL),
                     (f"The {o} is {other} and is not {denied}.", f"The {o} is {other}.", ENTAILMENT)]
    return ("Negation: in the premise", "negation in the premise only", "MFT",
            "The nurse is not dancing: contradicts the nurse is dancing, leaves the nurse is reading open; the nurse "
            "is reading and is not dancing ⊨ the nurse is reading", labelled(rows), INDEPENDENT)


def _word_swap_tests() -> list[Template]:
    """One word swapped, Breaking NLI's class (Glockner et al. 2018; issue 29's word-swap set): a word for another of
    a category that excludes it contradicts, a word for the same thing entails, either way round — hand-written
    (`lexicons.EXCLUSIVE_BY_HAND`, `lexicons.SYNONYMS_BY_HAND`), in categories the edit engine has no lexicon
    for, so a model that learnt the engine's exclusive words by heart gains nothing here, and one that learnt
    "one changed word → contradiction" fails the synonyms."""
    exclusive, synonyms = [], []
    for o in lexicons.OCCUPATIONS:
        for _, frame, words in lexicons.EXCLUSIVE_BY_HAND:
            for first, second in combinations(words, 2):
                said = lambda word, f=frame: f"The {o} {f.format(word)}."  # noqa: E731
                exclusive += [(said(first), said(second), CONTRADICTION), (said(second), said(first), CONTRADICTION)]
        for word, same, frame in lexicons.SYNONYMS_BY_HAND:
            said = lambda w, f=frame: f"The {o} {f.format(w)}."  # noqa: E731
            synonyms += [(said(word), said(same), ENTAILMENT), (said(same), said(word), ENTAILMENT)]
    return [("Word swap: exclusive words", "a word of another category swapped (by hand)", "MFT",
             "The pilot is swimming in a lake / … in a river; … finished the race in first / … second place → "
             "contradiction (categories none of nlivis's exclusive lexicons holds)", labelled(exclusive),
             INDEPENDENT),
            ("Word swap: synonyms", "a word for the same thing swapped (by hand)", "MFT",
             "The pilot is sitting on a couch ⊨ the pilot is sitting on a sofa, and the other way round → "
             "entailment", labelled(synonyms), INDEPENDENT)]


def _negation_test() -> Template:
    return ("Negation", "negated predicate contradicts", "MFT",
            "P: The doctor is sleeping. H: The doctor is not sleeping. → contradiction",
            labelled((f"The {o} is {a}.", f"The {o} is not {a}.", CONTRADICTION)
                     for o in lexicons.OCCUPATIONS for a, _ in lexicons.ACTIVITIES), INDEPENDENT)


def _quantifier_test() -> Template:
    quantified = []
    for o in lexicons.OCCUPATIONS:
        for a, _ in lexicons.ACTIVITIES:
            group = plural(o)
            quantified += [(f"Some {group} are {a}.", f"No {group} are {a}.", CONTRADICTION),
                           (f"All {group} are {a}.", f"Some {group} are {a}.", ENTAILMENT),
                           (f"Some {group} are {a}.", f"All {group} are {a}.", NEUTRAL)]
    return ("Quantifiers", "some / all / no", "MFT",
            "some vs no → contradiction; all ⊨ some → entailment; some ⊭ all → neutral", labelled(quantified),
            INDEPENDENT)


def _taxonomy_tests() -> list[Template]:
    """WordNet antonyms, hypernyms upward and under negation, and exclusive co-hyponyms of nlivis's lexicons."""
    people = _antonym_pairs(lexicons.PERSON_ADJECTIVES)
    things = _antonym_pairs(lexicons.OBJECT_ADJECTIVES)
    antonyms = [(f"The {o} is {a}.", f"The {o} is {b}.", CONTRADICTION) for o in lexicons.OCCUPATIONS for a, b in people]
    antonyms += [(f"The {t} is {a}.", f"The {t} is {b}.", CONTRADICTION) for t in lexicons.OBJECTS for a, b in things]
    hypernymy = []
    for small, large in _hypernym_pairs(lexicons.HOLDABLE_HYPONYMS):
        for o in lexicons.OCCUPATIONS:
            hypernymy += [
                (f"The {o} is holding {_article(small)}.", f"The {o} is holding {_article(large)}.", ENTAILMENT),
                (f"The {o} is not holding {_article(large)}.", f"The {o} is not holding {_article(small)}.",
                 ENTAILMENT),
                (f"The {o} is holding {_article(large)}.", f"The {o} is holding {_article(small)}.", NEUTRAL),
                (f"The {o} is not holding {_article(small)}.", f"The {o} is not holding {_article(large)}.",
                 NEUTRAL)]
    exclusive = []
    colours = lexicons.EXCLUSIVE_CATEGORIES["colour"][0]
    categories = (("instrument", "is playing the {}."), ("animal", "is feeding {}."), ("drink", "is drinking {}."),
                  ("vehicle", "is riding {}."), ("fruit", "is eating {}."))
    for o in lexicons.OCCUPATIONS:
        for first, second in combinations(colours, 2):
            thing = lexicons.OBJECTS[(colours.index(first) + colours.index(second)) % len(lexicons.OBJECTS)]
            exclusive.append((f"The {o} is holding {_article(first)} {thing}.",
                              f"The {o} is holding {_article(second)} {thing}.", CONTRADICTION))
        for category, frame in categories:
            members = lexicons.EXCLUSIVE_CATEGORIES[category][0]
            for first, second in combinations(members, 2):
                shown = [m if category in ("instrument", "drink") else _article(m) for m in (first, second)]
                exclusive.append((f"The {o} {frame.format(shown[0])}", f"The {o} {frame.format(shown[1])}",
                                  CONTRADICTION))
    return [("Taxonomy: antonyms", "WordNet antonym adjectives", "MFT",
             "P: The nurse is tall. H: The nurse is short. (antonyms from WordNet 3.0) → contradiction",
             labelled(antonyms), ENGINE),
            ("Taxonomy: hypernymy", "hypernyms upward and under negation (MoNLI)", "MFT",
             "holding a puppy ⊨ holding a dog; not holding a dog ⊨ not holding a puppy; the converses → neutral "
             "(hypernyms from WordNet 3.0)", labelled(hypernymy), ENGINE),
            ("Taxonomy: exclusive co-hyponyms", "a different colour, instrument, animal, drink, vehicle, fruit",
             "MFT", "P: The pilot is playing the violin. H: The pilot is playing the cello. → contradiction",
             labelled(exclusive), ENGINE)]


def _counting_test(rng: random.Random) -> Template:
    counting = []
    for a, _ in lexicons.ACTIVITIES:
        for _ in range(6):
            man, woman = _names(rng)
            counting += [(f"{man} and {woman} are {a}.", f"Two people are {a}.", ENTAILMENT),
                         (f"{man} and {woman} are {a}.", f"Three people are {a}.", CONTRADICTION)]
        for o in lexicons.OCCUPATIONS:
            first, second = rng.sample(lexicons.NUMBER_WORDS, 2)
            counting.append((f"{first.capitalize()} {plural(o)} are {a}.", f"{second.capitalize()} {plural(o)} are {a}.",
                             CONTRADICTION))
    return ("Numbers and counting", "counting people, different numbers", "MFT",
            "John and Mary are running ⊨ two people are running, not three; two doctors ≠ five doctors. Numbers are "
            "read exactly, as SNLI's annotators read a caption's count (\"two doctors\" = exactly two): under an "
            "at-least reading a larger number would not contradict a smaller one", labelled(counting), ENGINE)


def _comparative_test(rng: random.Random) -> Template:
    comparatives = []
    for more, less in lexicons.COMPARATIVES:
        for _ in range(12):
            a, b = rng.sample(lexicons.MALE_NAMES + lexicons.FEMALE_NAMES, 2)
            comparatives += [(f"{a} is {more} than {b}.", f"{b} is {more} than {a}.", CONTRADICTION),
                             (f"{a} is {more} than {b}.", f"{b} is {less} than {a}.", ENTAILMENT),
                             (f"{a} is {more} than {b}.", f"{a} is {less} than {b}.", CONTRADICTION)]
    return ("Comparatives", "converse and reversed comparatives", "MFT",
            "A is taller than B ⊨ B is shorter than A; contradicts B is taller than A", labelled(comparatives),
            INDEPENDENT)


def _role_cases(occupations: Sequence[str]) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(active / passive rows, HANS-style lexical-overlap rows): the same verbs and roles."""
    passives, overlap = [], []
    for base, past, participle in lexicons.TRANSITIVE_VERBS:
        for first, second in combinations(occupations, 2):
            passives += [(f"The {first} {past} the {second}.", f"The {second} was {participle} by the {first}.",
                          ENTAILMENT),
                         (f"The {first} {past} the {second}.", f"The {first} was {participle} by the {second}.",
                          NEUTRAL)]
            third = occupations[(occupations.index(first) + occupations.index(second) + 1) % len(occupations)]
            if third not in (first, second):
                overlap += [(f"The {first} {past} the {second}.", f"The {second} {past} the {first}.", NEUTRAL),
                            (f"The {first} near the {second} {past} the {third}.", f"The {second} {past} the {third}.",
                             NEUTRAL)]
    return passives, overlap


def _coreference_test(rng: random.Random) -> Template:
    coreference = []
    for base, past, _ in lexicons.TRANSITIVE_VERBS:
        for place in lexicons.PLACES:
            man, woman = _names(rng)
            coreference += [(f"{man} and {woman} met at the {place}, and he {past} her.", f"{man} {past} {woman}.",
                             ENTAILMENT),
                            (f"{man} and {woman} met at the {place}, and he {past} her.", f"{woman} {past} {man}.",
                             NEUTRAL),
                            (f"{man} and {woman} met at the {place}, and she {past} him.", f"{woman} {past} {man}.",
                             ENTAILMENT)]
    return ("Coreference", "he / she resolved by gender", "MFT",
            "John and Mary met, and he helped her ⊨ John helped Mary; ⊭ Mary helped John", labelled(coreference),
            INDEPENDENT)


def _temporal_test(rng: random.Random) -> Template:
    temporal = []
    for first, second in combinations(lexicons.ROUTINE_EVENTS, 2):
        for _ in range(4):
            name = rng.choice(lexicons.MALE_NAMES + lexicons.FEMALE_NAMES)
            temporal += [(f"{name} {first[0]} before {second[1]}.", f"{name} {second[0]} after {first[1]}.", ENTAILMENT),
                         (f"{name} {first[0]} before {second[1]}.", f"{name} {first[0]} after {second[1]}.",
                          CONTRADICTION)]
    return ("Temporal order", "before / after", "MFT",
            "Ann ate breakfast before going to work ⊨ Ann went to work after eating breakfast; contradicts "
            "Ann ate breakfast after going to work", labelled(temporal), INDEPENDENT)


def paraphrase_templates(rng: random.Random) -> list[Template]:
    tests = []
    people = _antonym_pairs(lexicons.PERSON_ADJECTIVES)
    negation, antonyms = [], []
    for o in lexicons.OCCUPATIONS:
        for a, b in people:
            negation.append((f"Why are {plural(o)} {a}?", f"Why are {plural(o)} not {a}?", NOT_DUPLICATE))
            antonyms.append((f"Why are {plural(o)} {a}?", f"Why are {plural(o)} {b}?", NOT_DUPLICATE))
    tests.append(("Negation", "negated question", "MFT", "Why are doctors busy? / Why are doctors not busy? → not "
                  "duplicate", labelled(negation), INDEPENDENT))
    tests.append(("Taxonomy: antonyms", "antonym in one question", "MFT", "Why are nurses happy? / Why are nurses "
                  "unhappy? (WordNet 3.0 antonyms) → not duplicate", labelled(antonyms), ENGINE))
    passives = []
    for base, past, participle in lexicons.TRANSITIVE_VERBS:
        for _ in range(6):
            a, b = rng.sample(lexicons.MALE_NAMES + lexicons.FEMALE_NAMES, 2)
            passives += [(f"Why did {a} {base} {b}?", f"Why was {b} {participle} by {a}?", DUPLICATE),
                         (f"Why did {a} {base} {b}?", f"Why did {b} {base} {a}?", NOT_DUPLICATE),
                         (f"Did {a} {base} {b}?", f"Was {b} {participle} by {a}?", DUPLICATE),
                         (f"Did {a} {base} {b}?", f"Was {a} {participle} by {b}?", NOT_DUPLICATE)]
    tests.append(("SRL: active / passive", "passive of the same question, and with roles swapped", "MFT",
                  "Why did John help Mary? = Why was Mary helped by John? ≠ Why did Mary help John?",
                  labelled(passives), INDEPENDENT))
    return tests

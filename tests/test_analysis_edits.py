"""The edit engine on hand-written sentences: each kind's output, monotonicity, and the expectation logic
(label only where logic fixes it)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.analysis import edits as engine
from nlivis.analysis.edit_runs import expectation_met
from nlivis.analysis.edit_expectations import (CONTRADICTION, DUPLICATE, ENTAILMENT, EQUIVALENT, EXCLUSIVE, NEGATED,
                                               NEUTRAL, NOT_DUPLICATE, STRONGER, WEAKER, nli_expectation,
                                               paraphrase_expectation, swap_expectation, word_to_sentence_relation)
from nlivis.analysis.edits import (check_kinds, definite_subject, negate, propose_edits, quantifier_relation, typo,
                                   user_edit)
from nlivis.analysis.inflection import gerund, indefinite_article, inflect, past, plural, third_person
from nlivis.analysis.monotonicity import polarities
from nlivis.analysis.parsed import parse_sentences
from nlivis.analysis.word_replacements import plural_form, wordnet_replacements


def edit(edits, kind, side, relation=None, replacement=None):
    found = [e for e in edits if e.kind == kind and e.side == side
             and (relation is None or e.change.relation == relation)
             and (replacement is None or e.change.replacement == replacement)]
    assert len(found) == 1, [(e.kind, e.side, e.change) for e in edits]
    return found[0]


# ------------------------------------------------------------------------------------- inflection


def test_inflection_rules_and_irregular_forms():
    assert [plural(w) for w in ("man", "box", "city", "day", "knife", "dog", "church")] == \
        ["men", "boxes", "cities", "days", "knives", "dogs", "churches"]
    assert [past(w) for w in ("play", "stop", "carry", "dance", "run", "visit")] == \
        ["played", "stopped", "carried", "danced", "ran", "visited"]
    assert [gerund(w) for w in ("run", "make", "lie", "see", "visit", "swim")] == \
        ["running", "making", "lying", "seeing", "visiting", "swimming"]
    assert [third_person(w) for w in ("watch", "fly", "play", "go", "have")] == \
        ["watches", "flies", "plays", "goes", "has"]
    assert inflect("sit", "VBN") == "sat" and inflect("eat", "VBN") == "eaten"
    assert inflect("tall", "JJR") is None  # comparatives are not rewritten by rule


def test_indefinite_article_follows_the_sound():
    assert [indefinite_article(w) for w in ("apple", "hour", "unicorn", "dog", "honest", "one")] == \
        ["an", "an", "a", "a", "an", "a"]
    assert indefinite_article("elephant", capital=True) == "An"


# ----------------------------------------------------------------------------------- monotonicity


def polarity_of(text: str) -> dict[str, int | None]:
    sentence = parse_sentences([text])[0]
    return {w.text: p for w, p in zip(sentence.words, polarities(sentence))}


def test_a_request_holding_more_sentences_than_the_memory_still_gets_every_parse(monkeypatch):
    from nlivis.analysis import parsed

    old = "A dog runs in the park ."
    first = parse_sentences([old])[0]
    monkeypatch.setattr(parsed, "PARSES_REMEMBERED", 2)
    texts = [old, "A cat sleeps on a mat .", "A bird sings in a tree .", "A man walks to work .", old]
    found = parse_sentences(texts)  # the remembered parse of `old` is forgotten while the three new ones come in
    assert [" ".join(w.text for w in sentence.words) for sentence in found] == texts
    assert found[0] is first and found[-1] is first


def test_negation_flips_its_scope_but_not_the_subject():
    marks = polarity_of("A man is not playing a guitar.")
    assert marks["man"] == 1 and marks["guitar"] == -1 and marks["playing"] == -1


def test_a_negation_leaves_the_clauses_of_their_own_below_its_verb_unknown():
    """An adverbial clause is as often read as given as denied ("… do not pose after enjoying a meal": they
    enjoyed one): no polarity there, while the negated verb's own objects stay downward."""
    marks = polarity_of("A woman is not playing a guitar while a man watches.")
    assert marks["guitar"] == -1 and marks["woman"] == 1
    assert marks["man"] is None and marks["watches"] is None
    marks = polarity_of("The men do not pose around a table after eating a meal.")
    assert marks["table"] == -1 and marks["meal"] is None


def test_a_with_absolute_under_negation_has_no_polarity():
    """"with trees in the background" is a small clause of its own, a scene read as given as often as denied; a
    with-phrase that is the verb's instrument or companion stays downward."""
    marks = polarity_of("Two women are not in a kayak with trees in the background .")
    assert marks["kayak"] == -1 and marks["trees"] is None and marks["women"] == 1
    assert polarity_of("A man is not sitting with a dog barking at him .")["dog"] is None
    assert polarity_of("The group is not working with microscopes .")["microscopes"] == -1
    assert polarity_of("A girl is not eating with a fork .")["fork"] == -1
    assert polarity_of("Two women are in a kayak with trees in the background .")["trees"] == 1, "upward unchanged"


def test_a_with_absolute_whose_predicate_is_a_particle_has_no_polarity_either():
    """"with coats and scarves on": the parse hangs the particle on the verb, not on the coats, yet the coats are
    worn, not denied (a hand audit found "… not reading, with coats … on" taken to entail "… with jackets … on");
    a particle of the verb's own object stays under the negation."""
    marks = polarity_of("Two men are not reading , with coats and scarves on , on a subway .")
    assert marks["coats"] is None and marks["scarves"] is None and marks["men"] == 1
    assert polarity_of("A man is not sitting with his hat off .")["hat"] is None
    assert polarity_of("A man is not turning the lights on with a switch .")["switch"] == -1


def test_a_counted_noun_under_negation_has_no_polarity():
    """"There are not three boats" read exactly (their number is not three) leaves three barges open."""
    marks = polarity_of("A man is not holding three balloons.")
    assert marks["balloons"] is None
    assert polarity_of("A man is not holding balloons.")["balloons"] == -1
    assert polarity_of("Three men are holding balloons.")["men"] == 1  # upward: left as it was


def test_no_flips_restrictor_and_clause_every_only_its_restrictor():
    no = polarity_of("No dog is running in a field.")
    assert no["dog"] == -1 and no["running"] == -1 and no["field"] == -1
    every = polarity_of("Every tall man eats an apple.")
    assert every["tall"] == -1 and every["man"] == -1 and every["apple"] == 1


def test_two_negations_cancel_and_without_flips_its_object():
    assert polarity_of("Nobody is not eating a sandwich.")["sandwich"] == 1
    assert polarity_of("The man left without a coat.")["coat"] == -1


def test_unknown_where_the_context_is_not_monotone():
    assert polarity_of("She thinks that the man is tall.")["tall"] is None
    assert set(polarity_of("Few people like spinach.").values()) == {None}
    assert polarity_of("The man is not holding the dog.")["dog"] is None  # definite under negation


# ------------------------------------------------------------------------------- expectation logic


@pytest.mark.parametrize("relation, polarity, expected", [
    ("synonym", 1, EQUIVALENT), ("synonym", None, EQUIVALENT),
    ("hypernym", 1, WEAKER), ("hypernym", -1, STRONGER), ("hypernym", None, None),
    ("hyponym", 1, STRONGER), ("hyponym", -1, WEAKER),
    ("antonym", 1, EXCLUSIVE), ("antonym", -1, None), ("exclusive", 1, EXCLUSIVE),
])
def test_word_relation_and_polarity_give_the_sentence_relation(relation, polarity, expected):
    assert word_to_sentence_relation(relation, polarity) == expected


@pytest.mark.parametrize("side, relation, label, expectation, expected, direction", [
    ("hypothesis", EQUIVALENT, NEUTRAL, "label", NEUTRAL, None),
    ("hypothesis", EQUIVALENT, None, "invariant", None, None),
    ("hypothesis", WEAKER, ENTAILMENT, "label", ENTAILMENT, None),
    ("hypothesis", WEAKER, CONTRADICTION, "direction", ENTAILMENT, "not_fall"),
    ("hypothesis", STRONGER, CONTRADICTION, "label", CONTRADICTION, None),
    ("hypothesis", STRONGER, ENTAILMENT, "direction", ENTAILMENT, "not_rise"),
    ("hypothesis", EXCLUSIVE, ENTAILMENT, "label", CONTRADICTION, None),
    ("hypothesis", EXCLUSIVE, NEUTRAL, None, None, None),
    ("hypothesis", EXCLUSIVE, CONTRADICTION, None, None, None),
    ("hypothesis", NEGATED, ENTAILMENT, "label", CONTRADICTION, None),
    ("hypothesis", NEGATED, NEUTRAL, "label", NEUTRAL, None),
    ("hypothesis", NEGATED, CONTRADICTION, "direction", CONTRADICTION, "fall"),
    ("hypothesis", NEGATED, None, None, None, None),
    ("premise", STRONGER, ENTAILMENT, "label", ENTAILMENT, None),
    ("premise", STRONGER, CONTRADICTION, "label", CONTRADICTION, None),
    ("premise", STRONGER, NEUTRAL, "direction", NEUTRAL, "not_rise"),
    ("premise", WEAKER, NEUTRAL, "label", NEUTRAL, None),
    ("premise", WEAKER, ENTAILMENT, "direction", NEUTRAL, "not_fall"),
    ("premise", EXCLUSIVE, ENTAILMENT, None, None, None),  # the hypothesis does not repeat the word
    ("premise", NEGATED, ENTAILMENT, None, None, None),
    ("hypothesis", None, ENTAILMENT, None, None, None),
])
def test_nli_expectation_assigns_a_label_only_where_logic_fixes_it(side, relation, label, expectation, expected,
                                                                    direction):
    result = nli_expectation(side, relation, label)
    assert (result.kind, result.label, result.direction) == (expectation, expected, direction)
    assert result.reason


def test_an_exclusive_premise_word_repeated_in_the_hypothesis_gives_contradiction():
    result = nli_expectation("premise", EXCLUSIVE, ENTAILMENT, repeated_in_hypothesis=True)
    assert (result.kind, result.label) == ("label", CONTRADICTION)


def test_paraphrase_and_swap_expectations():
    assert paraphrase_expectation(EXCLUSIVE, DUPLICATE).label == NOT_DUPLICATE
    assert paraphrase_expectation(EXCLUSIVE, NOT_DUPLICATE).kind is None
    assert (paraphrase_expectation(WEAKER, DUPLICATE).kind, paraphrase_expectation(WEAKER, DUPLICATE).direction) == \
        ("direction", "not_rise")
    assert swap_expectation("paraphrase", NOT_DUPLICATE).label == NOT_DUPLICATE
    assert swap_expectation("paraphrase", None).kind == "invariant"
    assert swap_expectation("nli", CONTRADICTION).label == CONTRADICTION
    entailment = swap_expectation("nli", ENTAILMENT)
    assert (entailment.kind, entailment.label, entailment.direction) == ("direction", CONTRADICTION, "not_rise")
    assert swap_expectation("nli", None).kind is None


def test_quantifier_lattice():
    assert quantifier_relation("a", "every") == STRONGER
    assert quantifier_relation("all", "some") == WEAKER
    assert quantifier_relation("some", "no") == EXCLUSIVE and quantifier_relation("no", "all") == EXCLUSIVE
    assert quantifier_relation("most", "all") == STRONGER


def test_expectation_met_for_each_kind():
    labels = (ENTAILMENT, NEUTRAL, CONTRADICTION)
    before, after = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.2, 0.7])
    assert expectation_met("label", CONTRADICTION, None, labels, before, after) is True
    assert expectation_met("invariant", None, None, labels, before, after) is False
    assert expectation_met("invariant", None, None, labels, before, before) is True
    assert expectation_met("direction", ENTAILMENT, "fall", labels, before, after) is True
    assert expectation_met("direction", ENTAILMENT, "not_rise", labels, after, before) is False
    assert expectation_met("direction", ENTAILMENT, "not_rise", labels, before, before + [0.04, -0.04, 0]) is True
    assert expectation_met("direction", CONTRADICTION, "not_fall", labels, after, before) is False
    assert expectation_met(None, None, None, labels, before, after) is None


# ----------------------------------------------------------------------------------------- edits


def test_antonym_of_tall_is_short_and_contradicts_an_entailed_hypothesis(wordnet):
    assert wordnet_replacements("tall", "a")["antonym"] == "short"
    edits = propose_edits("The tall man is sleeping on a bench.", "The man is tall.", ENTAILMENT,
                          kinds=["antonym"])
    hypothesis = edit(edits, "substitution", "hypothesis", "antonym", "short")
    assert hypothesis.hypothesis == "The man is short."
    assert (hypothesis.change.word, hypothesis.change.replacement, hypothesis.change.hypothesis_positions) == \
        ("tall", "short", (3,))
    assert (hypothesis.expectation, hypothesis.expected) == ("label", CONTRADICTION)
    premise = edit(edits, "substitution", "premise", "antonym", "short")
    assert premise.premise == "The short man is sleeping on a bench."
    assert (premise.expectation, premise.expected) == ("label", CONTRADICTION)  # "tall" stands in the hypothesis


def test_no_expectation_where_logic_gives_none(wordnet):
    edits = propose_edits("A tall man is sleeping.", "A man is sleeping.", ENTAILMENT, kinds=["antonym", "negation"])
    premise_antonym = edit(edits, "substitution", "premise", "antonym", "short")
    assert premise_antonym.expectation is None and "does not repeat" in premise_antonym.reason
    negated_premise = edit(edits, "negation", "premise")
    assert negated_premise.premise == "A tall man is not sleeping."
    assert negated_premise.expectation is None and negated_premise.expected is None


def test_hypernym_entails_upward_and_strengthens_under_negation(wordnet):
    upward = edit(propose_edits("A man is holding a puppy.", "A man is holding a puppy.", ENTAILMENT,
                                kinds=["hypernym"]), "substitution", "hypothesis", "hypernym", "dog")
    assert upward.hypothesis == "A man is holding a dog."
    assert (upward.expectation, upward.expected) == ("label", ENTAILMENT)
    negated = propose_edits("A man is not holding a puppy.", "A man is not holding a puppy.", CONTRADICTION,
                            kinds=["hypernym"])
    downward = edit(negated, "substitution", "hypothesis", "hypernym", "dog")
    assert downward.hypothesis == "A man is not holding a dog."
    assert (downward.expectation, downward.expected) == ("label", CONTRADICTION)  # stronger hypothesis
    unlabelled = edit(propose_edits("A man is not holding a puppy.", "A man is not holding a puppy.",
                                    kinds=["hypernym"]), "substitution", "hypothesis", "hypernym", "dog")
    assert (unlabelled.expectation, unlabelled.expected, unlabelled.direction) == ("direction", ENTAILMENT,
                                                                                   "not_rise")


def test_exclusive_co_hyponym_keeps_number_and_article(wordnet):
    edits = propose_edits("Two men are eating apples.", "A man holds an apple.", ENTAILMENT, kinds=["exclusive"])
    hypothesis = edit(edits, "substitution", "hypothesis", "exclusive")
    assert hypothesis.hypothesis == "A man holds a banana."
    assert hypothesis.change.source == "nlivis lexicon: fruit"
    premise = edit(edits, "substitution", "premise", "exclusive")
    assert premise.premise == "Two men are eating bananas."


def test_vehicles_are_not_containers(wordnet):
    """WordNet files wheeled vehicles under "container" too; that link is never walked."""
    for vehicle in ("car", "bicycle"):
        assert wordnet_replacements(vehicle, "n").get("hypernym") != "container"
    assert wordnet_replacements("bag", "n")["hypernym"] == "container"


def test_a_plural_form_noun_is_neither_a_replacement_nor_replaced(wordnet):
    """A lemma that is another noun's plural ("colors", "steps", "woods") has no number to inflect: as a
    replacement it made "flags" into "colorses" and "a flag" into "a colors"."""
    assert [w for w in ("colors", "steps", "stairs", "woods", "glasses", "pants", "species", "arms", "clothes",
                        "scissors") if not plural_form(w)] == []
    assert [w for w in ("boss", "bus", "glass", "gas", "dress", "class", "news", "series", "lens", "grass", "flag")
            if plural_form(w)] == []
    assert "hyponym" not in wordnet_replacements("flag", "n")  # was "colors"
    assert wordnet_replacements("ladder", "n")["hypernym"] == "staircase"  # was "steps"
    assert wordnet_replacements("stairs", "n") == {}
    for noun in ("flag", "ladder", "forest", "grove", "clothing", "apparel", "staircase", "camp", "bomb", "ticket",
                 "factory", "government", "dog", "car", "shirt", "hat", "boy", "guitar"):
        assert [r for r in wordnet_replacements(noun, "n").values() if plural_form(r)] == [], noun
    edits = propose_edits("Two boys hold flags .", "A boy holds a flag .", ENTAILMENT, kinds=["hyponym", "hypernym"])
    assert not any("colors" in e.premise or "colors" in e.hypothesis for e in edits)


def test_known_words_limit_replacements_and_reach_the_nearest_known_hypernym(wordnet):
    assert wordnet_replacements("dog", "n")["hypernym"] == "animal"  # canid, canine … are too rare in that sense
    known = frozenset({"mammal", "puppy", "cat"})
    assert wordnet_replacements("dog", "n", known) == {"hypernym": "mammal"}  # puppy: too rare a hyponym
    # dog → domestic animal → animal is nearer than dog → canine → carnivore → placental → mammal
    assert wordnet_replacements("dog", "n", known | {"animal"})["hypernym"] == "animal"
    assert wordnet_replacements("tall", "a", frozenset({"big"})) == {}  # "short" is not known
    edits = propose_edits("A dog is running.", "A dog is running.", ENTAILMENT, kinds=["hypernym", "exclusive"],
                          known=frozenset({"animal", "horse"}))
    assert [(e.change.relation, e.hypothesis) for e in edits if e.side == "hypothesis"] == \
        [("hypernym", "An animal is running."), ("exclusive", "A horse is running.")]  # the next known member, not "cat"


def test_an_exclusive_word_contradicts_only_what_it_is_the_only_mention_of(wordnet):
    """A contradiction from an exclusive word needs the two sentences to speak of one entity: not where the premise
    says the replaced word again ("a line of trucks and the red truck" → "… the red train" still has trucks), nor
    where the premise already says the hypothesis's replacement ("an apple and a banana" ⊨ "a banana")."""
    def expected(premise: str, hypothesis: str, kinds: list[str]) -> dict[tuple[str, str], str | None]:
        return {(e.premise, e.hypothesis): e.expected for e in propose_edits(premise, hypothesis, ENTAILMENT,
                                                                             kinds=kinds)}
    found = expected("A line of trucks and the red truck .", "There are many trucks .", ["exclusive"])
    assert found[("A line of trucks and the red train .", "There are many trucks .")] is None
    found = expected("A man holds an apple and a banana .", "A man holds an apple .", ["exclusive"])
    assert found[("A man holds an apple and a banana .", "A man holds a banana .")] is None
    found = expected("A man holds an apple .", "A man holds an apple .", ["exclusive"])
    assert found[("A man holds an apple .", "A man holds a banana .")] == "contradiction", "one apple: as before"
    assert found[("A man holds a banana .", "A man holds an apple .")] == "contradiction"
    found = expected("Two men and two dogs run .", "Two men run .", ["number"])
    assert found[("Two men and three dogs run .", "Two men run .")] is None, "the dogs' number is not the men's"
    found = expected("Two children run .", "Two kids run .", ["number"])
    assert found[("Three children run .", "Two kids run .")] == "contradiction", "one two: the same count"
    found = expected("A man in a red jacket by a red sign .", "A man in a red jacket .", ["exclusive"])
    assert found[("A man in a blue jacket by a red sign .", "A man in a red jacket .")] == "contradiction", (
        "a colour said again modifies another noun: the jacket's still differs")
    found = expected("A surfer wearing a red shirt takes on a blue wave .", "Surfer in red catches a wave .",
                     ["exclusive"])
    assert found[("A surfer wearing a red shirt takes on a blue wave .", "Surfer in blue catches a wave .")] == \
        "contradiction", "a colour the premise says of another noun: the surfer's still differs"


def test_a_plural_material_noun_is_a_thing_not_the_material(wordnet):
    edits = propose_edits("A man wearing glasses.", "A man wearing glasses.", ENTAILMENT, kinds=["exclusive"])
    assert edits == []  # "glasses" are not glass: no "stones"
    edits = propose_edits("A man holds a glass cup.", "A man holds a glass cup.", ENTAILMENT, kinds=["exclusive"])
    assert [e.change.replacement for e in edits if e.side == "hypothesis"] == ["stone"]


def test_a_game_with_an_article_is_its_ball(wordnet):
    edits = propose_edits("A man hits a baseball .", "A man hits a baseball .", ENTAILMENT, kinds=["exclusive"])
    assert edits == []  # the ball, not the game: no "hits a tennis"
    edits = propose_edits("Boys play baseball .", "Boys play baseball .", ENTAILMENT, kinds=["exclusive"])
    assert [e.hypothesis for e in edits if e.side == "hypothesis"] == ["Boys play tennis ."]


def test_no_negation_beside_an_approximator():
    """"The boy nearly does not fall" and "A dog is not almost catching the ball" deny nothing clearly: no negation
    is inserted on a verb that almost / nearly / barely … modify; other adverbs ("just") keep theirs."""
    for sentence in ("The boy nearly falls off the bike .", "A dog is almost catching the ball .",
                     "A man barely fits through the door ."):
        edits = propose_edits(sentence, sentence, ENTAILMENT, kinds=["negation"])
        assert [e for e in edits if e.change.replacement] == [], sentence
    edits = propose_edits("A man quickly falls off the bike .", "A man quickly falls off the bike .", ENTAILMENT,
                          kinds=["negation"])
    assert "A man quickly does not fall off the bike ." in {e.hypothesis for e in edits}, "another adverb keeps it"


def test_there_is_is_negated_after_the_verb():
    parsed = parse_sentences(["There is a photo of a mountain ."])[0]
    assert negate(parsed)[0] == "There is not a photo of a mountain ."


def test_negation_inserted_and_removed_on_the_main_verb():
    cases = {
        "The man plays guitar.": "The man does not play guitar.",
        "A man is sleeping.": "A man is not sleeping.",
        "The man isn't sleeping.": "The man is sleeping.",
        "The man doesn't sleep.": "The man sleeps.",
        "The man did not sit.": "The man sat.",
        "He can't swim.": "He can swim.",
        "The boy never cries.": "The boy cries.",
        "The dog is brown.": "The dog is not brown.",
        "How do I learn Python ?": "How do I not learn Python ?",
        "The person got hurt playing basketball .": "The person did not get hurt playing basketball .",
        "The dog gets washed .": "The dog does not get washed .",
        "The man has a hat .": "The man does not have a hat .",
        "The man has eaten .": "The man has not eaten .",
        "There are three men playing a sport .": "There are not three men playing a sport .",
        "The man isn't wearing anything .": "The man is wearing something .",
        "The woman didn't see anyone .": "The woman saw someone .",
        "The man doesn't have any shoes .": "The man has some shoes .",
        "Someone is having some fun .": "Someone is not having any fun .",
        "Some boys ate something .": "Some boys did not eat anything .",
        "A woman is standing near the water , looks to be throwing something .":
            "A woman is not standing near the water , looks to be throwing something .",
        "The man did n't eat , and nobody saw anything .": "The man ate , and nobody saw anything .",
    }
    for sentence, negated in cases.items():
        assert negate(parse_sentences([sentence])[0])[0] == negated, sentence
    assert negate(parse_sentences(["A man sitting on a bench."])[0]) is None  # no finite main verb
    assert negate(parse_sentences(["Someone is having some fun ."])[0])[3] == "negation inserted, some → any"
    assert negate(parse_sentences(["He is n't wearing anything ."])[0])[3] == "negation removed, anything → something"


SINGULAR_SUBJECTS = ("The man", "A woman", "She", "Someone", "The old dog", "John")
PLURAL_SUBJECTS = ("Two dogs", "The children", "They", "Some people", "The players")
VERB_PHRASES = {  # (singular, plural): be, have, do, modal, passive be / get, progressive, perfect, some- words
    ("is sleeping", "are sleeping"), ("plays guitar", "play guitar"), ("has a hat", "have a hat"),
    ("got hurt", "got hurt"), ("gets washed", "get washed"), ("can swim", "can swim"), ("will run", "will run"),
    ("was eating something", "were eating something"), ("sees someone", "see someone"), ("has eaten", "have eaten"),
    ("is wearing some shoes", "are wearing some shoes"), ("does his homework", "do their homework"),
    ("is happy", "are happy"), ("was seen by someone", "were seen by someone"), ("bought some apples",
    "bought some apples"), ("walked somewhere", "walked somewhere"), ("reads a book in the park", "read books"),
}


@given(st.sampled_from(SINGULAR_SUBJECTS + PLURAL_SUBJECTS), st.sampled_from(sorted(VERB_PHRASES)))
@settings(max_examples=40, deadline=None)
def test_negating_twice_gives_the_sentence_back(subject, phrases):
    sentence = f"{subject} {phrases[subject in PLURAL_SUBJECTS]} ."
    negated = negate(parse_sentences([sentence])[0])
    assert negated is not None and " not " in negated[0], sentence
    assert negate(parse_sentences([negated[0]])[0])[0] == sentence, negated[0]


def test_a_negation_whose_removal_or_insertion_is_not_english_is_not_made(wordnet):
    for sentence in ("The man has not eaten yet .", "The dogs are not playing at all .", "She did not ever go .",
                     "There is also a table full of food .", "She is still sleeping ."):
        assert negate(parse_sentences([sentence])[0]) is None, sentence  # yet, at all, ever; not before also, still
    for premise in ("There are several people browsing tomatoes .", "There are people outside .",
                    "There is water on the floor .", "There are some dogs in the yard .",
                    "There is a woman and some animals ."):
        edits = propose_edits(premise, premise, ENTAILMENT, kinds=["negation"])
        assert edits == [], premise  # English says "there are no people", not "there are not (several) people"
    edits = propose_edits("There is a girl in a harness .", "There is a girl in a harness .", ENTAILMENT,
                          kinds=["negation"])
    assert [e.premise for e in edits if e.side == "premise"] == ["There is not a girl in a harness ."]


def test_negating_an_entailed_hypothesis_with_a_definite_subject_expects_contradiction():
    edits = propose_edits("The man is sleeping on a couch.", "The man is sleeping.", ENTAILMENT, kinds=["negation"])
    negated = edit(edits, "negation", "hypothesis")
    assert negated.hypothesis == "The man is not sleeping."
    assert (negated.expectation, negated.expected) == ("label", CONTRADICTION)
    assert (negated.change.word, negated.change.replacement, negated.change.relation) == ("", "not",
                                                                                          "negation inserted")


@pytest.mark.parametrize("determiner", ["The", "These", "Those", "Her", "Their"])
@pytest.mark.parametrize("number", ["", "two ", "three "])
def test_a_definite_subject_stays_definite_when_counted(determiner, number):
    # "These two women are not dancing" denies "These two women are dancing": a definite (or possessive) subject
    # fixes the negation's label whether or not a numeral counts it (a hand check of the negation edits found
    # "These two women" read as counted, its label left unfixed)
    noun = "women" if number or determiner in ("These", "Those") else "woman"
    verb = "are" if noun == "women" else "is"
    sentence = parse_sentences([f"{determiner} {number}{noun} {verb} dancing ."])[0]
    assert definite_subject(sentence), sentence.text


@pytest.mark.parametrize("subject", ["Two women are", "Three men are", "Some women are", "A woman is", "Women are",
                                     "All the women are", "Every woman is", "Many women are"])
def test_a_counted_indefinite_or_quantified_subject_is_not_definite(subject):
    # ∃¬: "Two men are not running" does not deny that two (other) men are running
    sentence = parse_sentences([f"{subject} dancing ."])[0]
    assert not definite_subject(sentence), sentence.text


def test_quantifier_and_number_edits():
    quantified = propose_edits("A dog is running in the snow.", "A dog is running.", ENTAILMENT,
                               kinds=["quantifier"])
    no_dog = edit(quantified, "quantifier", "hypothesis", replacement="No")
    assert no_dog.hypothesis == "No dog is running." and no_dog.expected == CONTRADICTION
    every = edit(quantified, "quantifier", "hypothesis", replacement="Every")
    assert (every.expectation, every.direction) == ("direction", "not_rise")
    numbers = propose_edits("Two dogs are running.", "Two dogs are running.", ENTAILMENT, kinds=["number"])
    hypothesis = edit(numbers, "number", "hypothesis")
    assert hypothesis.hypothesis == "Three dogs are running." and hypothesis.expected == CONTRADICTION
    premise = edit(numbers, "number", "premise")
    assert premise.premise == "Three dogs are running." and premise.expected == CONTRADICTION


def test_names_and_gender_swap_consistently_on_both_sides_and_expect_invariance():
    edits = propose_edits("John gave Mary his book.", "Mary got a book from John.", ENTAILMENT,
                          kinds=["name", "gender"])
    names = edit(edits, "name", "both")
    first, second = names.change.replacement.split(", ")
    assert names.premise == f"{first} gave {second} his book." and names.hypothesis == f"{second} got a book from {first}."
    assert first in engine.lexicons.MALE_NAMES and second in engine.lexicons.FEMALE_NAMES
    assert names.expectation == "invariant" and "stays entailment" in names.reason
    named, unnamed = parse_sentences(["John gave Mary his book.", "A tourist from Paris visits London in May."])
    assert [w.entity for w in named.words[:3]] == ["PERSON", "", "PERSON"]  # the recogniser reads only sentences
    assert not any(w.entity for w in unnamed.words)  # with a name of the lexicon, the only ones asked
    assert names == edit(propose_edits("John gave Mary his book.", "Mary got a book from John.", ENTAILMENT,
                                       kinds=["name"]), "name", "both")  # deterministic
    gender = edit(edits, "gender", "both")
    assert gender.premise.endswith(" her book.") and gender.expectation == "invariant"
    pronouns = edit(propose_edits("A woman hugs her son.", "The woman hugs him.", kinds=["gender"]), "gender", "both")
    assert (pronouns.premise, pronouns.hypothesis) == ("A man hugs his daughter.", "The man hugs her.")


def test_swap_typo_and_paraphrase_task():
    edits = propose_edits("How can I lose weight quickly ?", "What is the fastest way to lose weight ?", DUPLICATE,
                          task="paraphrase", kinds=["swap", "typo", "negation"])
    swapped = edit(edits, "swap", "pair")
    assert swapped.premise.startswith("What is") and swapped.expected == DUPLICATE
    typo_edit = edit(edits, "typo", "hypothesis")
    assert typo_edit.hypothesis == "What is the fatsest way to lose weight ?" and typo_edit.expectation == "invariant"
    negated = edit(edits, "negation", "premise")
    assert negated.premise == "How can I not lose weight quickly ?" and negated.expected == NOT_DUPLICATE
    assert typo("playing") == "plyaing" and typo("aaaa") is None


def test_user_edit_has_no_expectation_and_records_the_change():
    mine = user_edit("A man plays a guitar.", "A man plays music.", "A man plays a violin.", "A man plays music.")
    assert (mine.kind, mine.side, mine.expectation, mine.expected) == ("user", "premise", None, None)
    assert (mine.change.word, mine.change.replacement, mine.change.premise_positions) == ("guitar", "violin", (4,))
    assert mine.to_dict()["change"]["position"] == {"premise": [4], "hypothesis": []}


def test_kinds_and_labels_are_checked():
    assert check_kinds(["antonym", "typo"]) == ("antonym", "typo")
    with pytest.raises(ValueError, match="unknown edit kind"):
        check_kinds(["paraphrasing"])
    with pytest.raises(ValueError, match="not one of nli's labels"):
        propose_edits("A man sleeps.", "A man sleeps.", "duplicate")
    with pytest.raises(ValueError, match="unknown task"):
        propose_edits("A man sleeps.", "A man sleeps.", task="qa")


def test_edits_are_unique_new_pairs_in_a_fixed_order(wordnet):
    premise, hypothesis = "A tall man is playing a red guitar in the park.", "A man is playing a guitar."
    first = propose_edits(premise, hypothesis, ENTAILMENT)
    assert first == propose_edits(premise, hypothesis, ENTAILMENT)
    pairs = [(e.premise, e.hypothesis) for e in first]
    assert len(set(pairs)) == len(pairs) and (premise, hypothesis) not in pairs
    assert [e.kind for e in first] == sorted((e.kind for e in first), key=engine.KINDS.index)

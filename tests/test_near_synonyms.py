"""The near-synonym rule for hypernym / hyponym counterparts (`analysis.near_synonyms`, issue 29): a gloss that
only renames its hypernym is told from one that defines a kind of it, on glosses written here and on WordNet's
own links; the self-pair counterparts leave out neutral copies made with such a pair, and count them."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, strategies as st

from nlivis.analysis.near_synonyms import NEAR_SYNONYM, names_its_hypernym, near_synonyms, noun_lemmas, renames
from nlivis.analysis.self_pairs import self_pair_edits

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10).filter(
    lambda w: w not in {"any", "all", "the", "for", "term", "terms", "name", "names", "word", "words"})
REGISTER = st.sampled_from(["", "informal ", "a polite ", "an informal ", "a slang ", "regional ", "an old "])
HEAD = st.sampled_from(["term", "name", "word", "terms", "term of address"])
DETERMINER = st.sampled_from(["", "a ", "an ", "the ", "any "])


@given(REGISTER, HEAD, DETERMINER, WORD)
def test_a_term_for_the_hypernym_renames_it(register, head, determiner, hypernym):
    assert names_its_hypernym(f"{register}{head} for {determiner}{hypernym}", [hypernym])


@given(REGISTER, HEAD, WORD, WORD)
def test_the_hypernym_may_be_one_of_several_alternatives(register, head, other, hypernym):
    assert names_its_hypernym(f"{register}{head} for a {other} or {hypernym}", [hypernym])
    assert names_its_hypernym(f"{register}{head} for a {other}, {hypernym}", [hypernym])


@given(REGISTER, HEAD, WORD, WORD)
def test_a_term_for_another_word_does_not_rename_the_hypernym(register, head, named, hypernym):
    """A renaming link only counts when what is renamed is the hypernym itself."""
    if named != hypernym and named != hypernym + "s":
        assert not names_its_hypernym(f"{register}{head} for a {named}", [hypernym])


@given(REGISTER, HEAD, WORD, WORD, st.sampled_from(["made from", "that has", "used for", "with", "of"]))
def test_a_differentia_makes_a_kind_not_a_name(register, head, hypernym, thing, link):
    """"a general name for beers made from wheat" defines a kind of beer."""
    assert not names_its_hypernym(f"{register}{head} for {hypernym} {link} {thing}", [hypernym])


@given(WORD, WORD)
def test_a_gloss_that_is_the_hypernym_plus_a_modifier_is_a_kind(modifier, hypernym):
    """"a married woman", "a short coat": the ordinary shape of a true hyponym's gloss."""
    assert not names_its_hypernym(f"a {modifier} {hypernym}", [hypernym])
    assert not names_its_hypernym(f"a {hypernym} that is {modifier}", [hypernym])


@given(WORD, st.sampled_from(["in general", "collectively"]), st.sampled_from(["", "s"]))
def test_the_hypernym_in_general_renames_it(hypernym, tail, ending):
    assert names_its_hypernym(f"{hypernym}{ending} {tail}", [hypernym])


@given(REGISTER, HEAD, WORD, WORD)
def test_notes_parentheses_quotes_and_case_do_not_change_the_reading(register, head, hypernym, note):
    gloss = f"{register}{head} for a {hypernym}"
    assert names_its_hypernym(f"{gloss.upper()} ({note} {note}); {note} is {note}", [hypernym])
    assert names_its_hypernym(f"{register}{head} for `{hypernym}'", [hypernym])


def test_wordnet_spelling_of_a_hypernym_lemma_is_read_as_words():
    assert names_its_hypernym("an informal term for an adult female", ["adult_female"])


class Synset:
    """A WordNet synset as `renames` reads it: a gloss, lemma names and hypernyms."""

    def __init__(self, gloss: str, lemmas: list[str], hypernyms: tuple = ()):
        self.gloss, self.lemmas, self.parents = gloss, lemmas, hypernyms

    def definition(self) -> str:
        return self.gloss

    def lemma_names(self) -> list[str]:
        return self.lemmas

    def hypernyms(self) -> tuple:
        return self.parents

    def instance_hypernyms(self) -> tuple:
        return ()


def test_renaming_is_a_chain_of_renaming_links_only():
    top = Synset("a living being", ["being"])
    adult = Synset("a grown being", ["adult"], (top,))
    female = Synset("an adult who is female", ["female"], (adult,))
    polite = Synset("a polite name for any female", ["madam"], (female,))
    colloquial = Synset("an informal term for a madam", ["missus"], (polite,))
    assert renames(polite, female)
    assert renames(colloquial, female)  # two renaming links
    assert not renames(polite, adult)  # a renaming link, then a real one: adult is more general than madam
    assert not renames(female, adult)
    assert not renames(colloquial, female, depth=1)


@pytest.mark.parametrize("word, replacement, relation", [
    ("man", "guy", "hyponym"), ("men", "guys", "hyponym"), ("lady", "woman", "hypernym"),
    ("ladies", "women", "hypernym"), ("mother", "ma", "hyponym"), ("dad", "father", "hypernym"),
    ("clothing", "clothes", "hyponym"), ("gentleman", "man", "hypernym"), ("stack", "pile", "hypernym"),
])
def test_wordnet_register_variants_and_shared_synsets_are_near_synonyms(wordnet, word, replacement, relation):
    assert near_synonyms(word, replacement, relation)


@pytest.mark.parametrize("word, replacement, relation", [
    ("woman", "wife", "hyponym"), ("women", "wives", "hyponym"), ("hand", "fist", "hyponym"),
    ("dog", "animal", "hypernym"), ("lady", "grownup", "hypernym"), ("man", "grownup", "hypernym"),
    ("beer", "alcohol", "hypernym"), ("building", "house", "hyponym"), ("restaurant", "cafeteria", "hyponym"),
])
def test_true_kinds_are_not_near_synonyms(wordnet, word, replacement, relation):
    assert not near_synonyms(word, replacement, relation)


def test_a_plural_is_read_as_every_lemma_it_may_be_the_plural_of(wordnet):
    assert {"men", "man"} <= noun_lemmas("men")
    assert noun_lemmas("wives") == {"wives", "wife"}


def test_self_pairs_leave_out_a_neutral_copy_made_with_a_near_synonym_and_count_it(wordnet):
    rejected: Counter = Counter()
    labelled = self_pair_edits("A man is sleeping on a bench.", "nli", ("hypernym", "hyponym"), rejected=rejected)
    changes = {(edit.change.word, edit.change.replacement, edit.side): label for edit, label in labelled}
    assert ("man", "guy", "hypothesis") not in changes  # "A man …" entails "A guy …": not neutral
    assert rejected[NEAR_SYNONYM] >= 1
    assert changes[("man", "grownup", "hypothesis")] == "entailment"  # a weaker copy stays
    assert changes[("man", "grownup", "premise")] == "neutral"  # a true hypernym stays neutral as premise

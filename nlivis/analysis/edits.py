"""Minimal edits of a sentence pair, each with the relation to the original that logic fixes, and only that.

An `Edit` is one changed pair: what changed (`Change`: the word, its replacement, where, the relation and
where the relation comes from) and what a model should do with it (`expectation`, `expected`, `direction`,
`reason`: "label", "invariant", "direction" or None, as `analysis.edit_expectations` decides).

Kinds (`KINDS`): one-word substitutions by part of speech — WordNet 3.0 synonyms, hypernyms, hyponyms and
antonyms of a word's first (most frequent) sense, and mutually exclusive co-hyponyms from nlivis's own
lexicons (`analysis.lexicons`) — on either sentence; negation inserted or removed on the main verb (spaCy's
dependency parse); quantifier swaps (a/every/no, some/all/no/most); number changes; person names and
gender swapped consistently on both sides; premise ↔ hypothesis; a typo. A substitution's label follows
from the original label, the word relation and the polarity of the word's context (`analysis.monotonicity`:
upward, downward under not/no/never/without …, or unknown), as in MoNLI: a hypernym in an upward context
makes a sentence weaker, under negation stronger. A user's own edit (`user_edit`) is the same object with
no expectation.

Replacement words come from `analysis.word_replacements` (a word's dominant WordNet sense in its dominant part
of speech, a replacement common in that sense, drawn from `known` words when given), and every candidate edit
passes the one rule set every consumer shares (`analysis.edit_filters`: compounds, misread lemmas, abstract
nouns and verbs, mass nouns, names that are not people, quantifiers without a clause, typos that spell words
…). Inflection follows the replaced word's PTB tag (`analysis.inflection`). Negating the verb of an
indefinite, plural or quantified subject fixes no label (∃¬, `definite_subject`); nor does an exclusive word or a
number where the two sentences need not speak of one entity (`_Context.not_one_entity`). Each distinct sentence is
parsed once per process (`analysis.parsed`), and both sentences are whitespace-normalised first.
"""
from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from typing import Iterable, Sequence

from nlivis.analysis import lexicons
from nlivis.analysis.edit_filters import (OFF_BY_DEFAULT, is_english_word, negation_problem, quantifier_problem,
                                          replacement_problem, said_again, says, substitution_problem)
from nlivis.analysis.edit_expectations import (ENTAILMENT, EQUIVALENT, EXCLUSIVE, NEGATED, STRONGER, TASK_LABELS,
                                               WEAKER, Expectation, invariant_expectation, nli_expectation,
                                               paraphrase_expectation, swap_expectation, word_to_sentence_relation)
from nlivis.analysis.inflection import base_form, indefinite_article, inflect, same_case
from nlivis.analysis.monotonicity import negation_scope, polarities
from nlivis.analysis.parsed import ParsedSentence, parse_sentences
from nlivis.analysis.word_replacements import (EXCLUSIVE_MEMBERS, WORDNET_SOURCE, exclusive_replacement,
                                               wordnet_replacements)

KINDS: tuple[str, ...] = ("substitution", "number", "quantifier", "negation", "name", "gender", "swap", "typo")
RELATIONS: tuple[str, ...] = ("synonym", "hypernym", "hyponym", "antonym", "exclusive")
"""Word relations of a substitution; `--kinds` accepts these too, to ask for one relation only."""

SUBSTITUTABLE_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a"}
"""spaCy coarse part of speech → WordNet part of speech (adjective satellites are found under "a")."""
LIGHT_LEMMAS = frozenset({"be", "have", "do", "get", "go", "make", "take", "give", "say", "let", "use", "put",
                          "thing", "something", "lot", "one", "way", "other", "same", "own", "such", "many",
                          "much", "few", "more", "most", "several", "certain", "various", "able", "else"})
"""Words whose substitution says nothing about lexical knowledge (light verbs, pro-forms, quantity words)."""
MASS_CATEGORIES = frozenset({"material"})
"""Exclusive categories whose nouns are materials: a plural names things, not the material ("glasses",
"papers", "woods"), so only the singular is replaced."""
GAME_CATEGORIES = frozenset({"sport"})
"""Exclusive categories of games: with an article or in the plural the name is the ball ("hits a baseball",
"two basketballs"), which another game's name does not replace."""


@dataclass(frozen=True)
class Change:
    """What an edit changed. Positions are token indices (spaCy's tokens, as the models read them) in the
    original sentences: of the replaced or removed words, or where a word was inserted before."""

    word: str
    replacement: str
    relation: str
    source: str
    premise_positions: tuple[int, ...] = ()
    hypothesis_positions: tuple[int, ...] = ()


@dataclass(frozen=True)
class Edit:
    kind: str
    side: str
    """"premise", "hypothesis", "both" (the same change on both sides) or "pair" (premise ↔ hypothesis)."""
    change: Change
    premise: str
    hypothesis: str
    expected: str | None
    expectation: str | None
    direction: str | None
    reason: str

    def to_dict(self) -> dict:
        change = asdict(self.change)
        positions = {"premise": list(change.pop("premise_positions")),
                     "hypothesis": list(change.pop("hypothesis_positions"))}
        return {"kind": self.kind, "side": self.side, "change": {**change, "position": positions},
                "premise": self.premise, "hypothesis": self.hypothesis, "expected": self.expected,
                "expectation": self.expectation, "direction": self.direction, "reason": self.reason}


def _with(kind: str, side: str, change: Change, premise: str, hypothesis: str, expectation: Expectation) -> Edit:
    return Edit(kind, side, change, premise, hypothesis, expectation.label, expectation.kind,
                expectation.direction, expectation.reason)


# -------------------------------------------------------------------------------------- text rewriting

def rewrite(sentence: ParsedSentence, replaced: dict[int, str], inserted: dict[int, str] | None = None,
            removed: frozenset[int] = frozenset()) -> str:
    """`sentence.with_words` with "a"/"an" made to agree with a replaced word right after them and the
    first word capitalised as the original's was."""
    replaced = dict(replaced)
    for i, text in list(replaced.items()):
        if i > 0 and sentence.words[i - 1].lower in ("a", "an") and i - 1 not in replaced and text:
            previous = sentence.words[i - 1].text
            replaced[i - 1] = indefinite_article(text, capital=previous[:1].isupper())
    inserted = inserted or {}
    if 0 in replaced and sentence.words[0].text[:1].isupper():
        replaced[0] = replaced[0][:1].upper() + replaced[0][1:]
    if 0 in inserted and sentence.words[0].text[:1].isupper():
        inserted = {**inserted, 0: inserted[0][:1].upper() + inserted[0][1:]}
        replaced.setdefault(0, _lowered_if_common(sentence.words[0]))
    return sentence.with_words(replaced, inserted, removed)


def _lowered_if_common(word) -> str:
    return word.text if word.pos == "PROPN" or word.text == "I" else word.text[:1].lower() + word.text[1:]


# ------------------------------------------------------------------------------------------ generators

@dataclass
class _Context:
    task: str
    label: str | None
    parsed: dict[str, ParsedSentence]
    polarity: dict[str, tuple[int | None, ...]]
    texts: dict[str, str] = field(default_factory=dict)
    known: frozenset[str] | None = None
    """Replacement words must be among these (lower case), when given."""
    rejected: Counter | None = None
    """Counts the candidate edits `analysis.edit_filters` dropped, by reason, when given."""

    def reject(self, reason: str) -> None:
        if self.rejected is not None:
            self.rejected[reason] += 1

    def other(self, side: str) -> str:
        return "hypothesis" if side == "premise" else "premise"

    def pair_with(self, side: str, text: str) -> tuple[str, str]:
        return (text, self.texts["hypothesis"]) if side == "premise" else (self.texts["premise"], text)

    def expectation(self, side: str, relation: str | None, what: str, repeated: bool = False,
                    problem: str | None = None) -> Expectation:
        """What the edit's logic fixes; nothing where `problem` says why it need not hold (`not_one_entity`)."""
        if problem:
            return Expectation(None, None, None, f"{problem} ({what}): logic fixes no label")
        if self.task == "paraphrase":
            return paraphrase_expectation(relation, self.label, what)
        return nli_expectation(side, relation, self.label, repeated, what)

    def repeated_upward(self, side: str, lemma: str) -> bool:
        """Whether the other sentence holds `lemma` (or the same word) in an upward context."""
        other = self.other(side)
        return any((w.lemma.lower() == lemma.lower() or w.lower == lemma.lower()) and self.polarity[other][w.i] == 1
                   for w in self.parsed[other].words)

    def not_one_entity(self, side: str, word, sentence_relation: str | None, word_relation: str,
                       forms: Sequence[str] = ()) -> str | None:
        """Why an NLI contradiction from an exclusive word or a number need not hold, the two sentences perhaps
        speaking of different entities (`edit_filters.said_again`, `edit_filters.says`), or None. An adjective is
        said of some noun, so a colour said again counts neither way ("a red shirt … a blue wave" still contradicts
        "a surfer in blue")."""
        if self.task != "nli":
            return None
        noun = word.pos in ("NOUN", "PROPN")
        if (side == "premise" and sentence_relation == EXCLUSIVE and self.label == ENTAILMENT
                and (noun or word.tag == "CD") and said_again(self.parsed[side], word)):
            return f"the premise says {word.text} again elsewhere: the hypothesis may speak of that one"
        if side == "hypothesis" and word_relation == "exclusive" and noun and says(self.parsed["premise"], forms):
            return "the premise already says the new word: the new hypothesis may speak of that one"
        return None


def _positions(side: str, indices: Sequence[int]) -> dict[str, tuple[int, ...]]:
    key = "premise_positions" if side == "premise" else "hypothesis_positions"
    return {key: tuple(indices)}


def _substitutions(context: _Context, side: str) -> list[Edit]:
    sentence, polarity, known = context.parsed[side], context.polarity[side], context.known
    edits = []
    for word in sentence.words:
        if not (word.pos in SUBSTITUTABLE_POS or word.pos == "PROPN") or not word.text.isalpha() or len(word.text) < 2:
            continue
        if word.lemma.lower() in LIGHT_LEMMAS or word.text in NAME_GENDER:
            continue
        if any(sentence.words[c].dep == "prt" for c in sentence.children(word.i)):
            continue  # phrasal verbs ("pick up") do not substitute word by word
        lemma = word.lemma.lower()
        options = []
        if word.pos in SUBSTITUTABLE_POS:  # proper nouns only through the lexicons (nationalities, weekdays)
            options = [(relation, replacement, WORDNET_SOURCE) for relation, replacement
                       in wordnet_replacements(lemma, SUBSTITUTABLE_POS[word.pos], known).items()]
        exclusive = exclusive_replacement(word.text, word.pos, known)
        if exclusive is None and not (word.tag in ("NNS", "NNPS") and EXCLUSIVE_MEMBERS.get(lemma, ("",))[0]
                                      in MASS_CATEGORIES):
            exclusive = exclusive_replacement(lemma, word.pos, known)
        if exclusive and exclusive[0] in GAME_CATEGORIES and (word.tag in ("NNS", "NNPS") or any(
                sentence.words[c].dep in ("det", "nummod") for c in sentence.children(word.i))):
            exclusive = None
        if exclusive:
            options.append(("exclusive", exclusive[1], f"nlivis lexicon: {exclusive[0]}"))
        for relation, replacement, source in sorted(options, key=lambda o: RELATIONS.index(o[0])):
            problem = (substitution_problem(relation, word, sentence)
                       or replacement_problem(relation, word, replacement, sentence))
            if problem:
                context.reject(problem)
                continue
            form = inflect(replacement, word.tag) if word.tag not in ("NNP", "NNPS") else replacement
            if form is None or form.lower() == word.lower:
                continue
            form = same_case(word.text, form) if not replacement[:1].isupper() else form
            text = rewrite(sentence, {word.i: form})
            sentence_relation = word_to_sentence_relation(relation, polarity[word.i])
            what = f"{word.text} → {form}, {relation}"
            problem = context.not_one_entity(side, word, sentence_relation, relation,
                                             (replacement.lower(), form.lower()))
            expectation = context.expectation(side, sentence_relation, what,
                                              repeated=context.repeated_upward(side, lemma), problem=problem)
            change = Change(word.text, form, relation, source, **_positions(side, [word.i]))
            edits.append(_with("substitution", side, change, *context.pair_with(side, text), expectation))
    return edits


def _numbers(context: _Context, side: str) -> list[Edit]:
    sentence, polarity = context.parsed[side], context.polarity[side]
    edits = []
    for word in sentence.words:
        if word.tag != "CD":
            continue
        lower = word.lower
        if lower in lexicons.NUMBER_WORDS:
            index = lexicons.NUMBER_WORDS.index(lower)
            new = lexicons.NUMBER_WORDS[index + 1 if index + 1 < len(lexicons.NUMBER_WORDS) else index - 1]
            new = same_case(word.text, new)
        elif word.text.isdigit() and len(word.text) <= 4 and int(word.text) >= 1:
            new = str(int(word.text) + 1)
        else:
            continue
        if new == "2" or (lower in lexicons.NUMBER_WORDS and word.head != word.i
                          and sentence.words[word.head].tag not in ("NNS", "NNPS")):
            continue  # from one (singular noun) or a count word that does not count a plural noun
        relation = EXCLUSIVE if polarity[word.i] == 1 else None
        what = f"{word.text} → {new}, numbers read exactly"
        expectation = context.expectation(side, relation, what, repeated=context.repeated_upward(side, word.text),
                                          problem=context.not_one_entity(side, word, relation, "different number"))
        change = Change(word.text, new, "different number", "number", **_positions(side, [word.i]))
        edits.append(_with("number", side, change, *context.pair_with(side, rewrite(sentence, {word.i: new})),
                           expectation))
    return edits


def quantifier_relation(old: str, new: str) -> str:
    """The relation of "Q' N V" to "Q N V" (same noun and predicate, existential import): every/all ⊨ most ⊨
    some/a; "no" excludes each of them."""
    old, new = old.lower(), new.lower()
    if (old == "no") != (new == "no"):
        return EXCLUSIVE
    strength_old, strength_new = lexicons.QUANTIFIER_STRENGTH[old], lexicons.QUANTIFIER_STRENGTH[new]
    if strength_new == strength_old:
        return EQUIVALENT
    return STRONGER if strength_new > strength_old else WEAKER


def _quantifiers(context: _Context, side: str) -> list[Edit]:
    sentence, polarity = context.parsed[side], context.polarity[side]
    edits = []
    for word in sentence.words:
        lower = word.lower
        if word.dep not in ("det", "predet") or word.head == word.i:
            continue
        noun = sentence.words[word.head]
        determiners = [c for c in sentence.children(noun.i) if sentence.words[c].dep in ("det", "predet", "poss")]
        if determiners != [word.i] or noun.pos not in ("NOUN", "PROPN") or noun.dep not in ("nsubj", "nsubjpass"):
            continue  # subjects only: their quantifier's scope is the clause, as the lattice assumes
        problem = quantifier_problem(sentence, noun)
        if problem:
            context.reject(problem)
            continue
        if noun.tag == "NN" and lower in ("a", "an", "every", "each", "no"):
            choices = lexicons.SINGULAR_QUANTIFIERS
        elif noun.tag == "NNS" and lower in ("some", "all", "no", "most"):
            choices = lexicons.PLURAL_QUANTIFIERS
        else:
            continue
        old = "a" if lower == "an" else lower
        for new in choices:
            if new == old:
                continue
            relation = quantifier_relation(old, new)
            outer = polarity[word.i]
            if outer is None:
                relation = None
            elif outer < 0:
                relation = {STRONGER: WEAKER, WEAKER: STRONGER}.get(relation)
            shown = indefinite_article(sentence.words[word.i + 1].text) if new == "a" else new
            shown = same_case(word.text, shown)
            text = rewrite(sentence, {word.i: shown})
            what = f"{word.text} → {shown}"
            expectation = context.expectation(side, relation, what)
            change = Change(word.text, shown, f"quantifier ({relation or 'not fixed'})", "nlivis quantifier lattice",
                            **_positions(side, [word.i]))
            edits.append(_with("quantifier", side, change, *context.pair_with(side, text), expectation))
    return edits


AUX_EXPANSIONS = {"ca": "can", "wo": "will", "sha": "shall"}
POSITIVE_FORMS = {"anything": "something", "anyone": "someone", "anybody": "somebody", "anywhere": "somewhere",
                  "any": "some"}
"""Negative-polarity words a removed negation leaves unlicensed, and the word that says the same without it ("is
not wearing anything" → "is wearing something", its contradictory)."""
NEGATIVE_FORMS = {positive: negative for negative, positive in POSITIVE_FORMS.items()}
"""The other way round, for an inserted negation: "is not having any fun" is the sentence's contradictory, "is not
having some fun" says that some fun is not had."""
UNLICENSED_WITHOUT_NEGATION = frozenset({"ever", "yet", "either", "nor"})
"""Negative-polarity words with no such counterpart ("did not ever", "not … yet"): the negation stays."""
POSITIVE_ADVERBS = frozenset({"also", "still", "already"})
"""Adverbs that "not" may not precede ("there is not also a table"; English says "also no"): no negation is
inserted before one."""
TAKES_NOT_DIRECTLY = frozenset({"be", "have", "do"})
"""Auxiliaries that "not" follows ("is not", "has not seen"); any other (passive "got hurt") and every main verb
but "be" takes do-support ("did not get hurt", "does not have")."""


def _polarity_swaps(sentence: ParsedSentence, verb: int, start: int, forms: dict[str, str]) -> dict[int, str]:
    """Position → replacement of every polarity word (`forms`: `POSITIVE_FORMS` for a removed negation,
    `NEGATIVE_FORMS` for an inserted one) at or after `start` in the scope of a negation of `verb`."""
    return {i: same_case(sentence.words[i].text, forms[sentence.words[i].lower])
            for i in sorted(negation_scope(sentence, verb)) if i >= start and sentence.words[i].lower in forms}


def _left_unlicensed(sentence: ParsedSentence, verb: int, after: int) -> bool:
    """Whether removing the negation at `after` leaves a word in `verb`'s clause with no positive form
    (`UNLICENSED_WITHOUT_NEGATION`, "at all")."""
    words = sentence.words
    return any(words[i].lower in UNLICENSED_WITHOUT_NEGATION
               or (words[i].lower == "at" and i + 1 < len(words) and words[i + 1].lower == "all")
               for i in negation_scope(sentence, verb) if i > after)


def negate(sentence: ParsedSentence) -> tuple[str, str, str, str, int] | None:
    """(new text, removed word, inserted word, relation, position): the sentence with its main verb's negation
    removed (when it has one) or inserted; None for a fragment without a finite main verb ("A man sitting on
    a bench.")."""
    root = sentence.root
    if root is None or sentence.words[root].pos not in ("VERB", "AUX"):
        return None
    verb = sentence.words[root]
    children = [sentence.words[c] for c in sentence.children(root)]
    verbal = [c for c in children if c.dep in ("aux", "auxpass") and c.i < root]
    negation = next((c for w in (verb, *verbal) for c in (sentence.words[i] for i in sentence.children(w.i))
                     if c.dep == "neg" and c.lower in ("not", "n't", "never")), None)  # "did not get hurt": on get
    auxiliaries = [c for c in verbal if c.tag in ("MD", "VBZ", "VBP", "VBD")]
    if negation is not None:
        if _left_unlicensed(sentence, root, negation.i):
            return None
        swapped = _polarity_swaps(sentence, root, negation.i + 1, POSITIVE_FORMS)
        replaced, removed = dict(swapped), {negation.i}
        support = next((a for a in auxiliaries if a.lemma == "do" and a.i < negation.i), None)
        base = next((w for w in (*verbal, verb) if w.i > negation.i and w.tag == "VB"), None)  # get, or the verb
        if support is not None and base is not None and support.i > 0:
            form = inflect(base.lemma, {"VBZ": "VBZ", "VBD": "VBD"}.get(support.tag, "VBP"))
            if form is None:
                return None
            removed.add(support.i)
            replaced[base.i] = form
        else:
            before = sentence.words[negation.i - 1] if negation.i > 0 else None
            if negation.lower == "n't" and before is not None and before.lower in AUX_EXPANSIONS:
                replaced[before.i] = same_case(before.text, AUX_EXPANSIONS[before.lower])
        text = rewrite(sentence, replaced, removed=frozenset(removed))
        return text, negation.text, "", _with_swaps("negation removed", sentence, swapped), negation.i
    if verb.tag not in ("VBZ", "VBP", "VBD", "MD", "VB") and not auxiliaries:
        return None
    subject = next((c.i for c in children if c.dep in ("nsubj", "nsubjpass", "expl")), None)
    inverted = subject is not None and auxiliaries and auxiliaries[0].i < subject  # a question
    first = auxiliaries[0] if auxiliaries else None
    replaced: dict[int, str] = {}
    if first is not None and not inverted and first.lemma not in TAKES_NOT_DIRECTLY and first.tag != "MD":
        position, support = first.i, {"VBZ": "does", "VBP": "do", "VBD": "did"}[first.tag]
        replaced[first.i], inserted = base_form(first.text, first.lemma.lower(), first.tag), f"{support} not"
    elif first is not None and not inverted:
        position, inserted = first.i + 1, "not"
    elif auxiliaries or verb.lemma == "be" or verb.tag == "MD":  # "There is …" (spaCy may call it VERB)
        position, inserted = (root if auxiliaries else root + 1), "not"
        if position >= len(sentence):
            return None
    elif verb.tag in ("VBZ", "VBP", "VBD"):
        position, support = root, {"VBZ": "does", "VBP": "do", "VBD": "did"}[verb.tag]
        replaced[root], inserted = base_form(verb.text, verb.lemma.lower(), verb.tag), f"{support} not"
    else:
        return None
    if sentence.words[position].lower in POSITIVE_ADVERBS:
        return None
    swapped = _polarity_swaps(sentence, root, position, NEGATIVE_FORMS)
    text = rewrite(sentence, {**replaced, **swapped}, {position: inserted})
    return text, "", "not", _with_swaps("negation inserted", sentence, swapped), position


def _with_swaps(relation: str, sentence: ParsedSentence, swapped: dict[int, str]) -> str:
    """The relation, naming the polarity words the negation changed with it ("negation inserted, some → any")."""
    return ", ".join([relation, *(f"{sentence.words[i].text} → {new}" for i, new in swapped.items())])


DEFINITE_DETERMINERS = frozenset({"the", "this", "that", "these", "those"})


def definite_subject(sentence: ParsedSentence) -> bool:
    """Whether the main verb's subject refers to definite things, so that negating the verb negates the sentence
    ("The man is not sleeping"): a name, a pronoun, "there", or a noun with the/this/that/these/those or a
    possessive, counted or not ("These two women are not dancing" denies that these two women are). An
    indefinite, bare plural, counted or quantified subject makes a negated verb ∃¬ ("Some people are not
    squatting" and "Two men are not running" do not deny that people are squatting, that two men are running)."""
    root = sentence.root
    if root is None:
        return False
    subject = next((sentence.words[c] for c in sentence.children(root)
                    if sentence.words[c].dep in ("nsubj", "nsubjpass", "expl")), None)
    if subject is None:
        return False
    if subject.dep == "expl" or subject.tag == "PRP":
        return True
    if subject.pos not in ("NOUN", "PROPN"):
        return False
    children = [sentence.words[c] for c in sentence.children(subject.i)]
    if any(c.lower in lexicons.QUANTIFIER_STRENGTH for c in children):
        return False  # "a Jew", "some Americans", "all the men" (whose negation is ambiguous in scope)
    if any(c.dep == "poss" or (c.dep == "det" and c.lower in DEFINITE_DETERMINERS) for c in children):
        return True  # "the man", "these two women", "his three sons"
    if any(c.dep == "nummod" for c in children):
        return False  # "Two orthodox Jews": counted, even when tagged a name
    return subject.pos == "PROPN"  # a name ("a"/"an" before it, among the quantifiers, returned above)


def _negations(context: _Context, side: str) -> list[Edit]:
    sentence = context.parsed[side]
    negated = negate(sentence)
    if negated is None:
        return []
    text, word, replacement, relation, position = negated
    problem = negation_problem(sentence) if replacement else None
    if problem:
        context.reject(problem)
        return []
    change = Change(word, replacement, relation, "spaCy parse: main verb", **_positions(side, [position]))
    if context.task == "nli" and not definite_subject(sentence):
        expectation = Expectation(None, None, None, f"{relation} on the verb of an indefinite, plural or quantified "
                                  "subject: \"some people are not squatting\" (∃¬) does not deny \"people are "
                                  "squatting\", so logic fixes no label")
    else:
        expectation = context.expectation(side, NEGATED, relation)
    return [_with("negation", side, change, *context.pair_with(side, text), expectation)]


NAME_GENDER = {**{n: "male" for n in lexicons.MALE_NAMES}, **{n: "female" for n in lexicons.FEMALE_NAMES}}
GENDER_SWAP = {**{a: b for a, b in lexicons.GENDER_PAIRS}, **{b: a for a, b in lexicons.GENDER_PAIRS}}


def _stable_pick(key: str, options: Sequence[str]) -> str:
    """A choice that depends only on `key` (crc32), so edits are the same on every run and machine."""
    return options[zlib.crc32(key.encode("utf-8")) % len(options)]


def person_name(sentence: ParsedSentence, word) -> bool:
    """Whether `word` is a given name (nlivis's lexicon) that begins a person's name as spaCy's entity recogniser
    sees it, and the name is not a modifier of another noun ("a John Deere tractor", "the Union Jack")."""
    if word.text not in NAME_GENDER or word.pos != "PROPN" or word.entity != "PERSON" or not word.entity_start:
        return False
    end = word.i
    while end + 1 < len(sentence) and sentence.words[end + 1].entity == "PERSON" and not sentence.words[end + 1].entity_start:
        end += 1
    last = sentence.words[end]
    return not (last.dep == "compound" and sentence.words[last.head].pos != "PROPN")


def _names_in(context: _Context) -> list[str]:
    return list(dict.fromkeys(w.text for side in ("premise", "hypothesis") for w in context.parsed[side].words
                              if person_name(context.parsed[side], w)))


def _name_map(context: _Context, names: Sequence[str], other_gender: bool) -> dict[str, str]:
    present = {w.text for side in ("premise", "hypothesis") for w in context.parsed[side].words}
    mapping = {}
    for name in names:
        gender = NAME_GENDER[name]
        if other_gender:
            gender = "female" if gender == "male" else "male"
        pool = [n for n in (lexicons.MALE_NAMES if gender == "male" else lexicons.FEMALE_NAMES)
                if n not in present and n not in mapping.values()]
        mapping[name] = _stable_pick(name, pool)
    return mapping


def _replace_everywhere(context: _Context, replacement_of) -> tuple[dict[str, str], dict[str, list[int]], list[str]]:
    """Apply `replacement_of(sentence, word) -> str | None` on both sides: new texts, changed positions, changed
    words."""
    texts, positions, changed = {}, {}, []
    for side in ("premise", "hypothesis"):
        sentence = context.parsed[side]
        replaced = {}
        for word in sentence.words:
            new = replacement_of(sentence, word)
            if new is not None and new != word.text:
                replaced[word.i] = new
                changed.append(f"{word.text} → {new}")
        texts[side] = rewrite(sentence, replaced) if replaced else context.texts[side]
        positions[side] = sorted(replaced)
    return texts, positions, list(dict.fromkeys(changed))


def _name_edits(context: _Context) -> list[Edit]:
    names = _names_in(context)
    if not names:
        return []
    mapping = _name_map(context, names, other_gender=False)
    texts, positions, changed = _replace_everywhere(
        context, lambda sentence, w: mapping.get(w.text) if person_name(sentence, w) else None)
    change = Change(", ".join(names), ", ".join(mapping[n] for n in names), "other person's name (same gender)",
                    "nlivis lexicon: given names", tuple(positions["premise"]), tuple(positions["hypothesis"]))
    edits = [_with("name", "both", change, texts["premise"], texts["hypothesis"],
                   invariant_expectation("the same people under other names on both sides", context.label))]
    if context.task == "paraphrase":
        for side in ("hypothesis",):
            if not positions[side]:
                continue
            sentence = context.parsed[side]
            text = rewrite(sentence, {i: mapping[sentence.words[i].text] for i in positions[side]})
            one = Change(change.word, change.replacement, "another person on one side", change.source,
                         **_positions(side, positions[side]))
            expectation = paraphrase_expectation(EXCLUSIVE, context.label, "a different person")
            edits.append(_with("name", side, one, *context.pair_with(side, text), expectation))
    return edits


def _gendered(sentence: ParsedSentence, word, name_map: dict[str, str]) -> str | None:
    lower = word.lower
    if word.text in name_map and person_name(sentence, word):
        return name_map[word.text]
    if lower == "her":
        new = "his" if word.tag == "PRP$" else "him"
    elif lower == "his":
        new = "her" if word.tag == "PRP$" else "hers"
    elif lower == "him":
        new = "her"
    elif lower == "hers":
        new = "his"
    elif lower in GENDER_SWAP:
        new = GENDER_SWAP[lower]
    else:
        return None
    return same_case(word.text, new)


def _gender_edits(context: _Context) -> list[Edit]:
    name_map = _name_map(context, _names_in(context), other_gender=True)
    texts, positions, changed = _replace_everywhere(context, lambda sentence, w: _gendered(sentence, w, name_map))
    if not changed:
        return []
    change = Change(", ".join(c.split(" → ")[0] for c in changed), ", ".join(c.split(" → ")[1] for c in changed),
                    "other gender, consistently", "nlivis lexicon: gendered words and names",
                    tuple(positions["premise"]), tuple(positions["hypothesis"]))
    return [_with("gender", "both", change, texts["premise"], texts["hypothesis"],
                  invariant_expectation("every gendered word and name swapped consistently on both sides",
                                        context.label))]


def typo(word: str, is_word=lambda text: False) -> str | None:
    """The word with two neighbouring letters near its middle swapped, trying three places, the first that
    `is_word` does not call a word (None when each swap is of equal letters or spells a word: "singing" →
    "signing" is another word, which no model should read as the same)."""
    for start in (len(word) // 2 - 1, len(word) // 2, len(word) // 2 - 2):
        if 0 < start < len(word) - 1 and word[start] != word[start + 1]:
            misspelt = word[:start] + word[start + 1] + word[start] + word[start + 2:]
            if not is_word(misspelt):
                return misspelt
    return None


def _typos(context: _Context, side: str) -> list[Edit]:
    sentence = context.parsed[side]
    eligible = [w for w in sentence.words if w.pos in SUBSTITUTABLE_POS and w.text.isalpha() and len(w.text) >= 4]
    if not eligible:
        return []
    word = max(eligible, key=lambda w: (len(w.text), -w.i))
    misspelt = typo(word.text, is_english_word)
    if misspelt is None:
        context.reject("every typo of the word spells a word")
        return []
    change = Change(word.text, misspelt, "typo", "two letters swapped", **_positions(side, [word.i]))
    text = sentence.with_words({word.i: misspelt})
    return [_with("typo", side, change, *context.pair_with(side, text),
                  invariant_expectation("one misspelt word", context.label))]


def _swap(context: _Context) -> list[Edit]:
    change = Change("", "", "premise ↔ hypothesis", "pair")
    return [_with("swap", "pair", change, context.texts["hypothesis"], context.texts["premise"],
                  swap_expectation(context.task, context.label))]


DEFAULT_KINDS: tuple[str, ...] = tuple(kind for kind in KINDS[1:] + RELATIONS if kind not in OFF_BY_DEFAULT)
"""What `propose_edits` makes when no kinds are named: every kind and relation but those switched off."""


def check_kinds(kinds: Iterable[str] | None) -> tuple[str, ...]:
    """The asked kinds (kind names or substitution relations), or every kind the engine makes by default (all
    but `OFF_BY_DEFAULT`'s, whose audited precision is short of the targets); ValueError naming the unknown."""
    if kinds is None:
        return DEFAULT_KINDS
    kinds = tuple(kinds)
    unknown = [k for k in kinds if k not in KINDS + RELATIONS]
    if unknown:
        raise ValueError(f"unknown edit kind(s) {', '.join(unknown)}; known: {', '.join(KINDS + RELATIONS)}")
    return kinds


def normalise_space(text: str) -> str:
    """The text stripped, each run of whitespace one space: how every edit's and probe case's text is written."""
    return " ".join(text.split())


def propose_edits(premise: str, hypothesis: str, label: str | None = None, task: str = "nli",
                  kinds: Iterable[str] | None = None, known: frozenset[str] | None = None,
                  rejected: Counter | None = None) -> list[Edit]:
    """Every edit of the pair that passes the engine's rules (`analysis.edit_filters`), in a fixed order (kind,
    side, position), each new pair once. Both sentences are whitespace-normalised first (`normalise_space`),
    so every edit's text is, and the unedited side is the original's normalised text.

    `label` is the original pair's label (a name of `TASK_LABELS[task]`) or None; `kinds` limits the kinds
    (names from `KINDS`, or substitution relations from `RELATIONS`); `known` (lower-case words) limits a
    substitution's replacements to those words (`wordnet_replacements`), e.g. to the words a training split
    uses, so that an edit reads like the data it is made from. `rejected`, when given, counts the candidates
    the rules dropped, by reason.
    """
    if task not in TASK_LABELS:
        raise ValueError(f"unknown task {task!r}; use nli or paraphrase")
    if label is not None and label not in TASK_LABELS[task]:
        raise ValueError(f"label {label!r} is not one of {task}'s labels {list(TASK_LABELS[task])}")
    wanted = check_kinds(kinds)
    premise, hypothesis = normalise_space(premise), normalise_space(hypothesis)
    parsed_premise, parsed_hypothesis = parse_sentences([premise, hypothesis])
    parsed = {"premise": parsed_premise, "hypothesis": parsed_hypothesis}
    context = _Context(task, label, parsed, {side: polarities(s) for side, s in parsed.items()},
                       {"premise": premise, "hypothesis": hypothesis}, known, rejected)
    sides = ("hypothesis", "premise")
    edits: list[Edit] = []
    if "substitution" in wanted or any(r in wanted for r in RELATIONS):
        relations = RELATIONS if "substitution" in wanted else [r for r in RELATIONS if r in wanted]
        edits += [e for side in sides for e in _substitutions(context, side) if e.change.relation in relations]
    generators = {"number": lambda: [e for side in sides for e in _numbers(context, side)],
                  "quantifier": lambda: [e for side in sides for e in _quantifiers(context, side)],
                  "negation": lambda: [e for side in sides for e in _negations(context, side)],
                  "name": lambda: _name_edits(context),
                  "gender": lambda: _gender_edits(context),
                  "swap": lambda: _swap(context),
                  "typo": lambda: [e for side in sides for e in _typos(context, side)]}
    for kind in KINDS[1:]:
        if kind in wanted:
            edits += generators[kind]()
    seen = {(premise, hypothesis)}
    unique = []
    for edit in edits:
        if (edit.premise, edit.hypothesis) not in seen:
            seen.add((edit.premise, edit.hypothesis))
            unique.append(edit)
    return unique


def user_edit(original_premise: str, original_hypothesis: str, premise: str, hypothesis: str) -> Edit:
    """A pair the user typed as an edit of the original: the same object as a proposed edit, with the
    changed words found by comparing tokens, and no expectation."""
    old = parse_sentences([original_premise, original_hypothesis])
    new = parse_sentences([premise, hypothesis])
    removed, added, positions = [], [], {}
    for side, before, after in zip(("premise", "hypothesis"), old, new):
        a, b = [w.text for w in before.words], [w.text for w in after.words]
        changed = []
        for tag, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
            if tag != "equal":
                removed += a[i1:i2]
                added += b[j1:j2]
                changed += list(range(i1, i2)) or [i1]
        positions[side] = tuple(changed)
    sides = [side for side in ("premise", "hypothesis") if positions[side]]
    side = sides[0] if len(sides) == 1 else "both"
    change = Change(" ".join(removed), " ".join(added), "typed by the user", "user",
                    positions["premise"], positions["hypothesis"])
    return Edit("user", side, change, premise, hypothesis, None, None, None,
                "typed by the user: no expectation")

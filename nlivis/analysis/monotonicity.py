"""The polarity of every word of a parsed sentence: +1 upward monotone, -1 downward, None unknown.

A word is *upward* when replacing it by something more general (a hypernym) makes the sentence weaker
("A man holds a dog" ⊨ "A man holds an animal") and *downward* when it makes it stronger ("A man does not
hold an animal" ⊨ "A man does not hold a dog"). MoNLI's rules (Geiger et al. 2020): each downward operator
whose scope holds the word flips its polarity; a word in the scope of an operator that is neither (most,
few in its restrictor, exactly/only, the complement of think/want/try …) gets no polarity, and the edit
engine then assigns no label. Scopes come from spaCy's dependency parse:

- sentential negation (not, n't, never) on a verb: the verb's clause without its subject (the subject of
  "A man is not sleeping" is read outside the negation, as SNLI annotators read the same man); the clauses of
  their own below the verb (`OUTSIDE_THE_CLAUSE`: "… is not playing a guitar while another woman watches", "… do
  not sing after eating lunch", a participle or relative clause, and a with-absolute, `with_absolute`: "… with
  trees in the background") are unknown, for a reader takes them as given as often as negated;
- no / neither as a determiner: the noun's restrictor and the rest of its clause (without the subject when
  the noun is an object); nobody / nothing / none: the clause;
- every / all / each: their restrictor only (the predicate stays upward);
- without: its object; if: the antecedent clause; refuse / fail / avoid / deny / doubt / prevent / lack /
  decline / neglect: their clausal complement;
- a definite noun phrase (the, this, a possessive) inside a downward scope is left unknown: "the dog" is read
  as naming one dog, whose substitution under negation logic alone does not settle; so is a counted one ("there
  are not three boats" read exactly — the number of boats is not three — leaves three barges open).
Where the parse does not show the operator's scope (spaCy's small model reads "Few people like spinach"
as a noun phrase), the whole sentence is unknown: no expectation beats a wrong one.
"""
from __future__ import annotations

from nlivis.analysis.parsed import ParsedSentence

NEGATORS = frozenset({"not", "n't", "never"})
NEGATIVE_DETERMINERS = frozenset({"no", "neither"})
UNIVERSAL_DETERMINERS = frozenset({"every", "all", "each"})
NEGATIVE_PRONOUNS = frozenset({"nobody", "nothing", "none", "noone", "nowhere"})
NON_MONOTONE_WORDS = frozenset({"most", "exactly", "only", "fewer", "less", "least", "few", "rarely", "seldom",
                                "hardly", "barely", "scarcely", "unless"})
"""Operators whose scope this module does not mark (few and the frequency adverbs are downward in their
scope but not in their restrictor, and the parse of their scope is unreliable): their clause is unknown."""
DOWNWARD_VERBS = frozenset({"refuse", "fail", "avoid", "deny", "doubt", "prevent", "lack", "decline", "neglect"})
UPWARD_COMPLEMENT_VERBS = frozenset({"start", "begin", "continue", "keep", "go", "come", "get", "help",
                                     "manage", "be"})
"""Verbs whose clausal complement keeps its polarity (aspectual and implicative verbs). Every other verb's
clausal complement (think, believe, want, try, plan, say …) is opaque: unknown."""
VERIDICAL_MARKERS = frozenset({"while", "as", "when", "because", "after", "before", "since", "and", "where"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
ARGUMENT_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "attr", "dative", "oprd", "obj", "iobj"})
COMPLEMENT_DEPS = frozenset({"ccomp", "xcomp", "csubj"})
DEFINITE_DETERMINERS = frozenset({"the", "this", "that", "these", "those", "his", "her", "its", "their", "my",
                                  "your", "our"})


OUTSIDE_THE_CLAUSE = frozenset({"conj", "cc", "parataxis", "advcl", "relcl", "acl", "ccomp", "csubj", "mark",
                                "pcomp", "punct"})
"""Dependents that are clauses of their own: a negation of the verb above them does not surely reach into them
(", looks to be throwing something" keeps its "something"; "while another woman watches" and "after eating
lunch", a preposition's clause, are said, not denied)."""


FLIP, OPAQUE = "flip", "opaque"
"""What an operator does to the words in its scope: reverses their polarity, or makes it unknown."""
Effect = tuple[str, frozenset[int]]


def polarities(sentence: ParsedSentence) -> tuple[int | None, ...]:
    """Polarity of each word: +1, -1 or None (unknown)."""
    size = len(sentence)
    sign = [1] * size
    unknown = [False] * size
    for word in sentence.words:
        for effect, scope in _operator_effects(sentence, word) + _complement_effects(sentence, word):
            for i in scope:
                if effect == FLIP:
                    sign[i] = -sign[i]
                else:
                    unknown[i] = True
    for word in sentence.words:  # definite descriptions and counted nouns under a downward operator
        if word.pos in ("NOUN", "PROPN") and sign[word.i] == -1 and any(
                sentence.words[child].lower in DEFINITE_DETERMINERS or sentence.words[child].dep in ("poss", "nummod")
                for child in sentence.children(word.i)):
            for i in sentence.subtree(word.i):
                unknown[i] = True
    return tuple(None if unknown[i] else sign[i] for i in range(size))


def _without_subjects(sentence: ParsedSentence, head: int) -> frozenset[int]:
    scope = set(sentence.subtree(head))
    for child in sentence.children(head):
        if sentence.words[child].dep in SUBJECT_DEPS:
            scope -= sentence.subtree(child)
    return frozenset(scope)


def with_absolute(sentence: ParsedSentence, word: int) -> bool:
    """Whether `word` is the "with" of an absolute construction, a small clause of its own: its object has a
    predicate of its own below it ("with trees in the background", "with a dog at her side", "with a flag
    waving") or after it ("with coats and scarves on", a particle the parse hangs on the verb). The scene it
    describes is read as given at least as often as denied by a negation above it (a hand audit found "… not
    together in a kayak with trees in the background" taken to entail "… with willows"),
    so the negation does not surely reach it; "working with microscopes" is no such clause. The parse attaches a
    locative to the object in "playing with a dog in the park" too: that one is left unknown as well, which
    costs an expectation, never a wrong one."""
    token = sentence.words[word]
    if token.lower != "with" or token.dep != "prep":
        return False
    if any(sentence.words[child].dep == "pobj" and any(sentence.words[grandchild].dep in ("prep", "acl")
                                                       for grandchild in sentence.children(child))
           for child in sentence.children(word)):
        return True
    after = max(sentence.subtree(word)) + 1
    return (after < len(sentence) and sentence.words[after].dep == "prt"
            and sentence.words[after].head == token.head)


def negation_scope(sentence: ParsedSentence, verb: int) -> frozenset[int]:
    """The words a negation of `verb` surely has in its scope: its subtree without the clauses of their own below
    it (`OUTSIDE_THE_CLAUSE`, `with_absolute`)."""
    scope, stack = {verb}, [verb]
    while stack:
        for child in sentence.children(stack.pop()):
            if sentence.words[child].dep not in OUTSIDE_THE_CLAUSE and not with_absolute(sentence, child):
                scope.add(child)
                stack.append(child)
    return frozenset(scope)


def _clause_scope(sentence: ParsedSentence, noun: int) -> frozenset[int] | None:
    """The rest of the clause of an argument noun, or None when the parse shows no clause."""
    word = sentence.words[noun]
    head = sentence.words[word.head]
    if word.dep == "pobj":
        head = sentence.words[head.head]
    if word.dep not in ARGUMENT_DEPS or head.pos not in ("VERB", "AUX") or head.i == noun:
        return None
    scope = sentence.subtree(head.i) if word.dep in SUBJECT_DEPS else _without_subjects(sentence, head.i)
    return scope - sentence.subtree(noun)


def _operator_effects(sentence: ParsedSentence, word) -> list[Effect]:
    """What `word` does as a negator, determiner, negative pronoun, preposition or clause marker."""
    lower = word.lower
    everything = frozenset(range(len(sentence)))
    if lower in NEGATORS and word.dep in ("neg", "advmod"):
        reach = _without_subjects(sentence, word.head) - {word.i}
        surely = negation_scope(sentence, word.head)
        return [(FLIP, reach & surely), (OPAQUE, reach - surely)]
    if lower in NEGATIVE_DETERMINERS and word.dep in ("det", "predet"):
        scope = _clause_scope(sentence, word.head)
        if scope is None:
            return [(OPAQUE, everything)]
        return [(FLIP, (sentence.subtree(word.head) - {word.i}) | scope)]
    if lower in UNIVERSAL_DETERMINERS and word.dep in ("det", "predet"):
        return [(FLIP, sentence.subtree(word.head) - {word.i})]
    if lower in NEGATIVE_PRONOUNS and word.pos in ("PRON", "NOUN"):
        scope = _clause_scope(sentence, word.i)
        return [(OPAQUE, everything)] if scope is None else [(FLIP, scope)]
    if lower == "without" and word.dep == "prep":
        return [(FLIP, sentence.subtree(word.i) - {word.i})]
    if lower == "if" and word.dep == "mark":
        return [(FLIP, sentence.subtree(word.head) - {word.i})]
    if lower in NON_MONOTONE_WORDS:
        return [(OPAQUE, everything)]
    if word.dep == "mark" and lower not in VERIDICAL_MARKERS and lower != "that":
        return [(OPAQUE, sentence.subtree(word.head))]
    return []


def _complement_effects(sentence: ParsedSentence, verb) -> list[Effect]:
    """What a verb does to its complement clauses: downward verbs flip them, others but upward ones hide them."""
    if verb.pos not in ("VERB", "AUX"):
        return []
    effects = []
    for child in sentence.children(verb.i):
        if sentence.words[child].dep not in COMPLEMENT_DEPS:
            continue
        if verb.lemma in DOWNWARD_VERBS:
            effects.append((FLIP, sentence.subtree(child)))
        elif verb.lemma not in UPWARD_COMPLEMENT_VERBS:
            effects.append((OPAQUE, sentence.subtree(child)))
    return effects

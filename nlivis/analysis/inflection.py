"""English inflection for edited words: a replacement takes the form of the word it replaces (plural
noun, verb tense) from its Penn Treebank tag, and "a"/"an" agree with the word after them.

Regular rules plus a table of irregular forms written for nlivis; a lemma the rules might get wrong
(irregular verbs outside the table are rare in image captions and forum questions) is still inflected by
rule — `inflect` returns None only for tags it does not handle, and the caller then skips the edit.
"""
from __future__ import annotations

IRREGULAR_VERBS: dict[str, tuple[str, str]] = {
    # base: (past, past participle)
    "be": ("was", "been"), "have": ("had", "had"), "do": ("did", "done"), "go": ("went", "gone"),
    "run": ("ran", "run"), "eat": ("ate", "eaten"), "drink": ("drank", "drunk"), "sit": ("sat", "sat"),
    "stand": ("stood", "stood"), "lie": ("lay", "lain"), "swim": ("swam", "swum"), "sing": ("sang", "sung"),
    "ride": ("rode", "ridden"), "drive": ("drove", "driven"), "write": ("wrote", "written"),
    "read": ("read", "read"), "see": ("saw", "seen"), "take": ("took", "taken"), "give": ("gave", "given"),
    "make": ("made", "made"), "hold": ("held", "held"), "throw": ("threw", "thrown"), "catch": ("caught", "caught"),
    "buy": ("bought", "bought"), "sell": ("sold", "sold"), "bring": ("brought", "brought"),
    "teach": ("taught", "taught"), "think": ("thought", "thought"), "fight": ("fought", "fought"),
    "find": ("found", "found"), "wear": ("wore", "worn"), "tear": ("tore", "torn"), "sleep": ("slept", "slept"),
    "leave": ("left", "left"), "meet": ("met", "met"), "feel": ("felt", "felt"), "keep": ("kept", "kept"),
    "win": ("won", "won"), "lose": ("lost", "lost"), "fall": ("fell", "fallen"), "fly": ("flew", "flown"),
    "grow": ("grew", "grown"), "know": ("knew", "known"), "draw": ("drew", "drawn"), "blow": ("blew", "blown"),
    "break": ("broke", "broken"), "speak": ("spoke", "spoken"), "choose": ("chose", "chosen"),
    "begin": ("began", "begun"), "come": ("came", "come"), "become": ("became", "become"),
    "get": ("got", "gotten"), "hit": ("hit", "hit"), "put": ("put", "put"), "cut": ("cut", "cut"),
    "set": ("set", "set"), "let": ("let", "let"), "shut": ("shut", "shut"), "hurt": ("hurt", "hurt"),
    "say": ("said", "said"), "pay": ("paid", "paid"), "lay": ("laid", "laid"), "tell": ("told", "told"),
    "send": ("sent", "sent"), "spend": ("spent", "spent"), "build": ("built", "built"), "lend": ("lent", "lent"),
    "bend": ("bent", "bent"), "shoot": ("shot", "shot"), "light": ("lit", "lit"), "dig": ("dug", "dug"),
    "hang": ("hung", "hung"), "swing": ("swung", "swung"), "stick": ("stuck", "stuck"), "strike": ("struck", "struck"),
    "climb": ("climbed", "climbed"), "kneel": ("knelt", "knelt"), "feed": ("fed", "fed"), "lead": ("led", "led"),
    "shake": ("shook", "shaken"), "wake": ("woke", "woken"), "hide": ("hid", "hidden"), "bite": ("bit", "bitten"),
    "slide": ("slid", "slid"), "sweep": ("swept", "swept"), "weep": ("wept", "wept"), "sew": ("sewed", "sewn"),
    "show": ("showed", "shown"), "beat": ("beat", "beaten"), "forget": ("forgot", "forgotten"),
    "understand": ("understood", "understood"), "spin": ("spun", "spun"), "skate": ("skated", "skated"),
}
THIRD_PERSON_IRREGULAR = {"be": "is", "have": "has", "do": "does", "go": "goes"}
IRREGULAR_PLURALS: dict[str, str] = {
    "man": "men", "woman": "women", "child": "children", "person": "people", "foot": "feet", "tooth": "teeth",
    "mouse": "mice", "goose": "geese", "sheep": "sheep", "fish": "fish", "deer": "deer", "ox": "oxen",
    "knife": "knives", "wife": "wives", "leaf": "leaves", "life": "lives", "wolf": "wolves", "shelf": "shelves",
    "half": "halves", "calf": "calves", "loaf": "loaves", "thief": "thieves", "scarf": "scarves",
    "gentleman": "gentlemen", "fireman": "firemen", "policeman": "policemen", "businessman": "businessmen",
    "photo": "photos", "piano": "pianos", "kilo": "kilos", "cello": "cellos", "banjo": "banjos",
}
VOWELS = set("aeiou")
AN_EXCEPTIONS = ("hour", "honest", "honor", "honour", "heir")
A_EXCEPTIONS = ("uni", "use", "usu", "uti", "euro", "one", "once", "ukul", "uter")


def plural(noun: str) -> str:
    """The plural of a singular noun."""
    lower = noun.lower()
    if lower in IRREGULAR_PLURALS:
        return same_case(noun, IRREGULAR_PLURALS[lower])
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in VOWELS:
        return noun[:-1] + "ies"
    return noun + "s"


def _doubles_final_consonant(verb: str) -> bool:
    """Short consonant-vowel-consonant verbs double their last letter (stop → stopped, run → running)."""
    lower = verb.lower()
    return (len(lower) >= 3 and lower[-1] not in VOWELS | set("wxy") and lower[-2] in VOWELS
            and lower[-3] not in VOWELS and sum(ch in VOWELS for ch in lower) == 1)


def past(verb: str) -> str:
    if verb.lower() in IRREGULAR_VERBS:
        return IRREGULAR_VERBS[verb.lower()][0]
    return _regular_ed(verb)


def past_participle(verb: str) -> str:
    if verb.lower() in IRREGULAR_VERBS:
        return IRREGULAR_VERBS[verb.lower()][1]
    return _regular_ed(verb)


def _regular_ed(verb: str) -> str:
    lower = verb.lower()
    if lower.endswith("e"):
        return verb + "d"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in VOWELS:
        return verb[:-1] + "ied"
    if _doubles_final_consonant(verb):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def gerund(verb: str) -> str:
    lower = verb.lower()
    if lower.endswith("ie"):
        return verb[:-2] + "ying"
    if lower.endswith("e") and not lower.endswith(("ee", "ye", "oe")) and lower != "be":
        return verb[:-1] + "ing"
    if _doubles_final_consonant(verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def third_person(verb: str) -> str:
    lower = verb.lower()
    if lower in THIRD_PERSON_IRREGULAR:
        return THIRD_PERSON_IRREGULAR[lower]
    if lower.endswith(("s", "x", "z", "ch", "sh", "o")):
        return verb + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in VOWELS:
        return verb[:-1] + "ies"
    return verb + "s"


def inflect(lemma: str, tag: str) -> str | None:
    """`lemma` in the form the PTB `tag` asks for; None for tags this does not inflect (comparatives,
    superlatives, modals …), so the caller can skip rather than write a wrong form."""
    if tag in ("NN", "NNP", "VB", "VBP", "JJ", "RB"):
        return lemma
    if tag in ("NNS", "NNPS"):
        return plural(lemma)
    if tag == "VBZ":
        return third_person(lemma)
    if tag == "VBD":
        return past(lemma)
    if tag == "VBN":
        return past_participle(lemma)
    if tag == "VBG":
        return gerund(lemma)
    return None


def base_form(text: str, lemma: str, tag: str) -> str:
    """The base form of a finite verb `text` with the PTB `tag` (VBZ, VBD), for do-support ("rides" → "does not
    ride"): the parser's `lemma` when it inflects back to `text`, else the first form cut from `text` that does
    (spaCy reads "rides" as "rid", whose third person is "rids"), else the lemma."""
    lower = text.lower()
    if tag not in ("VBZ", "VBD") or inflect(lemma, tag) == lower:
        return lemma
    cuts = (lower[:-1], lower[:-2], lower[:-3] + "y", lower[:-3])
    return next((cut for cut in cuts if len(cut) > 1 and inflect(cut, tag) == lower), lemma)


def indefinite_article(next_word: str, capital: bool = False) -> str:
    """"a" or "an" before `next_word`, by its first sound as spelled (an hour, a unicorn, an apple)."""
    lower = next_word.lower()
    if lower.startswith(AN_EXCEPTIONS):
        article = "an"
    elif lower.startswith(A_EXCEPTIONS):
        article = "a"
    elif lower[:1] in VOWELS or (len(lower) == 1 and lower in "fhlmnrsx"):
        article = "an"
    else:
        article = "a"
    return article.capitalize() if capital else article


def same_case(model: str, word: str) -> str:
    """`word` capitalised like `model` (Title or UPPER), else as it is: a replacement keeps the case of what
    it replaces."""
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word

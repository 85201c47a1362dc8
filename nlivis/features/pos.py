"""The 47-way PTB part-of-speech inventory used by the DIIN and GCNN papers' code.

Index 0 is padding / unknown. The order is the official DIIN code's list, so a one-hot vector here
means the same as there. `spacy_to_ptb` maps spaCy's extra fine-grained tags onto this set.
"""
from __future__ import annotations

PTB_TAGS: tuple[str, ...] = (
    "<PAD>", "WP$", "RBS", "SYM", "WRB", "IN", "VB", "POS", "TO", ":", "-RRB-", "$", "MD", "JJ", "#",
    "CD", "``", "JJR", "NNP", "''", "LS", "VBP", "VBD", "FW", "RBR", "JJS", "DT", "VBG", "RP", "NNS",
    "RB", "PDT", "PRP$", ".", "XX", "NNPS", "UH", "EX", "NN", "WDT", "VBN", "VBZ", "CC", ",", "-LRB-",
    "PRP", "WP",
)
NUM_POS_TAGS = len(PTB_TAGS)
TAG_INDEX: dict[str, int] = {tag: i for i, tag in enumerate(PTB_TAGS)}

UNKNOWN_TAG = PTB_TAGS[0]
"""What `spacy_to_ptb` returns for a tag with no PTB counterpart (POS index 0, the same as padding)."""

SPACY_EXTRA_TAGS: dict[str, str] = {
    "ADD": "NN",       # e-mail address / URL: the PTB tags such tokens as common nouns
    "AFX": "JJ",       # split-off prefix ("pre" in "pre-war"): it modifies the noun like an adjective
    "HYPH": ":",       # hyphen split from a compound: PTB tags dashes ":"
    "NFP": ":",        # superfluous punctuation ("...", "***"): PTB tags ellipses ":"
    "-LCB-": "-LRB-",  # {  Stanford-style bracket variants
    "-LSB-": "-LRB-",  # [
    "(": "-LRB-",
    "-RCB-": "-RRB-",  # }
    "-RSB-": "-RRB-",  # ]
    ")": "-RRB-",
}
"""spaCy (OntoNotes) fine-grained tags that are not in `PTB_TAGS`, mapped onto the nearest PTB tag.

Every other tag outside `PTB_TAGS` (``_SP`` whitespace, ``NIL``, an empty tag) is unknown and maps
to `UNKNOWN_TAG`, index 0. ``XX`` (unknown word) is in the DIIN list and stays itself.

| spaCy | PTB   | why |
|-------|-------|-----|
| ADD   | NN    | URLs and e-mail addresses are nouns in the PTB |
| AFX   | JJ    | a split-off prefix modifies its head like an adjective |
| HYPH  | :     | the PTB tags dashes and hyphens as ":" |
| NFP   | :     | "..." and decorative punctuation are ":" in the PTB |
| -LCB- -LSB- ( | -LRB- | opening brackets |
| -RCB- -RSB- ) | -RRB- | closing brackets |
| _SP, NIL, others | <PAD> (0) | no counterpart; whitespace tokens are dropped before tagging is used |
"""


def spacy_to_ptb(tag: str) -> str:
    """The PTB tag for a spaCy (or Stanford) fine-grained tag; `UNKNOWN_TAG` when there is none."""
    if tag in TAG_INDEX and tag != UNKNOWN_TAG:
        return tag
    return SPACY_EXTRA_TAGS.get(tag, UNKNOWN_TAG)


def pos_index(tag: str) -> int:
    """Index into `PTB_TAGS` of `spacy_to_ptb(tag)`; 0 for unknown tags."""
    return TAG_INDEX[spacy_to_ptb(tag)]

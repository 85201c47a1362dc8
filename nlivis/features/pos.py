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

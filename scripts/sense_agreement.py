"""Would "every common sense agrees" filter WordNet replacements? Tried on the hand-judged audit items.

    python scripts/sense_agreement.py [--share 0.1 --share 0.3]

The edit engine replaces a word by a synonym, hypernym or hyponym of its dominant WordNet sense
(`analysis.word_replacements`); the audit's wrong items are mostly words a caption means in another sense
(instrument → weapon of a musical instrument, females → animals of women). A stricter rule would keep a
replacement only where the relation holds for every sense of the word that has at least `share` of its
sense-tagged uses. This script counts, over the judged substitution items of `nlivis/data/audit/` (counterparts, and
the edits' synonym / hypernym / hyponym strata; stale judgements included, as evidence of what the engine made),
how many right and wrong items such a rule would keep and refuse. It reads no dataset.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.analysis.word_replacements import lemma_count  # noqa: E402
from nlivis.features.wordnet import load_wordnet  # noqa: E402

AUDIT = ROOT / "nlivis" / "data" / "audit"
CHANGE = re.compile(r"[ph]\d+ (\S+) → (\S+) \((synonym|hypernym|hyponym)\)")
EDIT_STRATA = {"synonym", "hypernym", "hyponym"}


def ancestors(synset) -> set:
    """Every hypernym of `synset`, at any depth (NLTK's transitive closure)."""
    return set(synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))


def relation_holds(synset, relation: str, replacement: str) -> bool:
    """Whether `replacement` (a lemma) is a synonym, hypernym or hyponym of this one sense."""
    if relation == "synonym":
        return replacement in {entry.name().lower() for entry in synset.lemmas()}
    if relation == "hypernym":
        return any(replacement in {entry.name().lower() for entry in h.lemmas()} for h in ancestors(synset))
    return any(synset in ancestors(other) for other in load_wordnet().synsets(replacement, "n"))


def base_form(word: str) -> str:
    forms = load_wordnet()._morphy(word.lower(), "n")
    return forms[-1] if forms else word.lower()


def every_common_sense_agrees(word: str, relation: str, replacement: str, share: float) -> bool:
    lemma, wordnet = base_form(word), load_wordnet()
    senses = [(s, sum(lemma_count(e) for e in s.lemmas() if e.name().lower() == lemma))
              for s in wordnet.synsets(lemma, "n")]
    total = sum(count for _, count in senses) or 1
    return all(relation_holds(s, relation, base_form(replacement)) for s, count in senses if count / total >= share)


def tally(share: float) -> Counter:
    counts: Counter = Counter()
    for section, strata in (("counterparts", None), ("edits", EDIT_STRATA)):
        for line in (AUDIT / f"{section}.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            found = CHANGE.search(item["change"])
            if found is None or (strata is not None and item["stratum"] not in strata):
                continue
            word, replacement, relation = found.groups()
            kept = every_common_sense_agrees(word, relation, replacement, share)
            counts[section, "right" if item["label_right"] is not False else "wrong", "kept" if kept else "refused"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--share", type=float, action="append",
                        help="a sense counts as common from this share of the word's tagged uses (repeat; default "
                             "0.1, 0.2 and 0.3)")
    shares = parser.parse_args().share or [0.1, 0.2, 0.3]
    print("| share | section | right kept | right refused | wrong kept | wrong refused |")
    print("|---|---|---|---|---|---|")
    for share in shares:
        counts = tally(share)
        for section in ("counterparts", "edits"):
            cells = [counts[section, judged, fate] for judged in ("right", "wrong") for fate in ("kept", "refused")]
            print(f"| {share:g} | {section} | " + " | ".join(map(str, cells)) + " |")


if __name__ == "__main__":
    main()

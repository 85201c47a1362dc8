"""Would the sentence pick the WordNet sense? A context-versus-gloss check, tried on the hand-judged audit items.

    python scripts/sense_in_context.py --data-dir ../shared/data [--margin 0.05 --margin 0.1]

The audit's wrong substitution items are mostly WordNet senses a caption does not mean (instrument → weapon of a
musical instrument, females → animals of women). `sense_agreement.py` showed that the senses' tagged frequencies
do not separate them; this script asks whether the sentence itself does: all-MiniLM-L6-v2 (the fetched encoder,
`nlivis.models.minilm`) reads the caption and, for every noun sense of the replaced word, a line naming the sense
and its gloss ("instrument (instrument): a device that requires skill for proper use"); a sense scores the cosine
of the word's vector in the caption with the word's vector in that line plus the cosine of the two sentences' mean
vectors. A replacement is kept where a sense its relation holds for scores within `margin` of the best sense
(margin 0: the best sense itself). It counts right and wrong judged items kept and refused, over the items the
audit draws today (`nlivis/data/audit/`, counterparts and the edits' synonym / hypernym / hyponym strata; their
sentences are SNLI dev's, read from --data-dir). Needs `python -m nlivis fetch-minilm`.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from sense_agreement import CHANGE, EDIT_STRATA, base_form, relation_holds  # noqa: E402
from nlivis.features.wordnet import load_wordnet  # noqa: E402
from nlivis.features.wordpieces import PAD_PIECE, WordPieces  # noqa: E402
from nlivis.models.minilm import MiniLM, MiniLMConfig, joint_sequence  # noqa: E402

MARGINS = (0.0, 0.05, 0.1, 0.2)


def kept(scores: list[tuple[float, bool]], margin: float) -> bool:
    """Whether a sense the relation holds for (`True` beside its score) scores within `margin` of the best."""
    best = max(score for score, _ in scores)
    return any(holds and score >= best - margin for score, holds in scores)


class SentenceReader:
    """The fetched all-MiniLM-L6-v2 encoder over one sentence (read as a premise with an empty hypothesis)."""

    def __init__(self) -> None:
        self.pieces = WordPieces.minilm()
        self.model = MiniLM(MiniLMConfig())
        self.model.load_pretrained()
        self.model.eval()

    @torch.no_grad()
    def vectors(self, words: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Each word's vector (the mean of its pieces' last-layer states) [T, d] and the sentence's mean [d]."""
        ids = self.pieces.of_words(words, 64)
        width = max(map(len, ids))
        premise = torch.tensor([[row + [PAD_PIECE] * (width - len(row)) for row in ids]])  # [1, T, K]
        sequence = joint_sequence(premise, torch.full((1, 1, 1), PAD_PIECE))
        x = self.model.embeddings(self.model.word_embedding(premise),
                                  self.model.word_embedding(torch.full((1, 1, 1), PAD_PIECE)), sequence)
        for layer in self.model.layers:
            x, _ = layer(x, sequence.real)  # [1, L, d]
        of_word = sequence.words["premise"][0]  # [L, T]
        word_vectors = (of_word.T @ x[0]) / of_word.sum(0).clamp(min=1).unsqueeze(1)  # [T, d]
        return word_vectors, word_vectors.mean(0)


def words_of(text: str) -> list[str]:
    return re.findall(r"[\w'-]+|[^\w\s]", text)


def sense_scores(reader: SentenceReader, sentence: str, word: str, relation: str, replacement: str,
                 glosses: dict) -> list[tuple[float, bool]] | None:
    tokens = words_of(sentence)
    lowered = [t.lower() for t in tokens]
    if word.lower() not in lowered:
        return None
    vectors, mean = reader.vectors(tokens)
    here = vectors[lowered.index(word.lower())]
    lemma = base_form(word)
    if lemma not in glosses:
        rows = []
        for synset in load_wordnet().synsets(lemma, "n"):
            names = ", ".join(entry.name().replace("_", " ") for entry in synset.lemmas())
            line = words_of(f"{lemma} ({names}): {synset.definition()}")
            line_vectors, line_mean = reader.vectors(line)
            rows.append((synset, line_vectors[0], line_mean))
        glosses[lemma] = rows
    cosine = torch.nn.functional.cosine_similarity
    return [(float(cosine(here, vector, 0) + cosine(mean, line_mean, 0)),
             relation_holds(synset, relation, base_form(replacement))) for synset, vector, line_mean in glosses[lemma]]


def judged_items(data_dir: str) -> list[tuple[str, str, str, str, str, bool]]:
    """(section, sentence, word, relation, replacement, judged right) for every drawn, judged substitution item."""
    from nlivis.workflows.audit import run_audit

    audit = run_audit(data_dir, ("counterparts", "edits"))
    rows = []
    for section, strata in (("counterparts", None), ("edits", EDIT_STRATA)):
        judged = {item.key: item.judgement for item in audit.judged[section]}
        for drawn in audit.drawn[section]:
            found, judgement = CHANGE.search(drawn.change), judged.get(drawn.key)
            if found is None or judgement is None or drawn.original is None or \
                    (strata is not None and drawn.stratum not in strata):
                continue
            word, replacement, relation = found.groups()
            sentence = drawn.original[0] if drawn.change.startswith("premise") else drawn.original[1]
            rows.append((section, sentence, word, relation, replacement, judgement.label_right is not False))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True, help="the folder holding snli/ (the audit's dev pairs)")
    parser.add_argument("--margin", type=float, action="append",
                        help="keep a replacement whose sense scores within this of the best sense (repeat; "
                             f"default {', '.join(map(str, MARGINS))})")
    args = parser.parse_args()
    torch.set_num_threads(1)
    reader, glosses, scored = SentenceReader(), {}, []
    for section, sentence, word, relation, replacement, right in judged_items(args.data_dir):
        scores = sense_scores(reader, sentence, word, relation, replacement, glosses)
        if scores:
            scored.append((section, right, scores))
    print("| margin | section | right kept | right refused | wrong kept | wrong refused |")
    print("|---|---|---|---|---|---|")
    for margin in args.margin or MARGINS:
        counts = Counter((section, right, kept(scores, margin)) for section, right, scores in scored)
        for section in ("counterparts", "edits"):
            cells = [counts[section, right, fate] for right in (True, False) for fate in (True, False)]
            print(f"| {margin:g} | {section} | " + " | ".join(map(str, cells)) + " |")


if __name__ == "__main__":
    main()

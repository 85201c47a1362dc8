"""Automatic annotation tags: the 13 MultiNLI tags of DIIN's Table 7, decided by rules.

The RepEval 2017 release tags 990 MultiNLI dev pairs by hand (`read_tag_file` reads it; it is the
reference, and `merge_tags` / the error analysis prefer it where a pair has gold tags). For every other
pair the rules of `analysis.tag_rules` decide the tags from spaCy's analysis with the parser on (tokens, PTB
tags, lemmas, dependencies) and WordNet. Unlike the original MultiNLI tag script, which tested raw substrings of
parse strings ("no" matched "know", "if" matched "life"), every rule looks at whole tokens or lemmas.
`TAG_METHODS` says how each tag is decided and what the rule cannot see; `python -m nlivis tags-report`
measures each rule against the gold tags (precision, recall, F1). Rules were improved from what they
miss and over-tag on that set; no pair id or sentence is written into a rule.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from tqdm import tqdm

from nlivis.analysis.tag_rules import rule_tags
from nlivis.data.readers import load_json
from nlivis.data.records import InputError, Pair
from nlivis.features.wordnet import WordNetUnavailable, load_wordnet
from nlivis.features.spacy_pipeline import installed_pipeline_version, load_nlp

TAGS: tuple[str, ...] = (
    "CONDITIONAL", "WORD_OVERLAP", "NEGATION", "ANTO", "LONG_SENTENCE", "TENSE_DIFFERENCE",
    "ACTIVE/PASSIVE", "PARAPHRASE", "QUANTITY/TIME_REASONING", "COREF", "QUANTIFIER", "MODAL", "BELIEF",
)
"""The MultiNLI annotation tags in the row order of DIIN's Table 7."""
TAGGER_VERSION = "4"
"""Bump when a rule changes: cached tags made by other rules are then recomputed."""

TAG_METHODS: dict[str, str] = {
    "CONDITIONAL": "a token 'if' or 'unless' in either sentence, except when it heads a complement "
                   "clause (dependency ccomp/xcomp/csubj, as in 'I wonder if ...') or follows 'as' "
                   "('as if'). Whole tokens only: 'life' never counts. Cannot see conditionals without "
                   "those words ('had I known', 'in case', 'provided that').",
    "WORD_OVERLAP": "more than 70% of the hypothesis's distinct words (lower-cased, punctuation left out) "
                    "occur in the premise, as the RepEval README defines it. Sees only shared word forms; "
                    "the annotators also weighed how much of the premise is kept, which the rule cannot, "
                    "so it fires on three times as many pairs as they tagged.",
    "NEGATION": "sentential negation: a 'not', n't or 'cannot' in either sentence, which is what the "
                "annotators tagged (all 233 gold pairs have one). Negative quantifiers (no, never, nothing, "
                "nobody, none) are not NEGATION here (they are QUANTIFIER); 'no matter what' negates nothing.",
    "ANTO": "a WordNet 3.0 direct antonym pair between a premise word and a hypothesis word (nouns, verbs, "
            "adjectives, adverbs; prepositions such as inside/outside are looked up as adverbs and "
            "adjectives), or opposite quantifiers / frequency adverbs WordNet lacks (some/all, always/never). "
            "Cannot see opposites WordNet does not list as antonyms, and fires on any antonym pair even "
            "where the annotators judged it beside the point. Unavailable (reported, not silently empty) "
            "without WordNet.",
    "LONG_SENTENCE": "the premise has more than 30 or the hypothesis more than 16 tokens (spaCy tokens, "
                     "punctuation not counted). Counts tokens, as the definition does; the annotators "
                     "counted words by eye, so pairs at the thresholds can differ.",
    "TENSE_DIFFERENCE": "the hypothesis's main clause is in a tense or aspect (past / present / future / "
                        "other modal, + perfect, + progressive, from the verb and its auxiliaries) that no "
                        "finite clause of the premise uses. Cannot see tense carried by time words "
                        "('yesterday') or judge whether the difference matters, which the annotators did.",
    "ACTIVE/PASSIVE": "the main clauses differ in voice (a passive ROOT governs nsubjpass / auxpass / "
                      "csubjpass) and the same verb lemma is passive in one sentence and active in the "
                      "other. Cannot see a voice change told with another verb ('denies' vs 'has been "
                      "repudiated') or one inside a subordinate clause.",
    "PARAPHRASE": "APPROXIMATE (the annotators judged 'close paraphrases' by hand): at least 70% of each "
                  "sentence's content words (nouns, verbs, adjectives, adverbs; numbers and quantifiers "
                  "count even though spaCy lists them as stop words) are matched in the other sentence by "
                  "the same lemma or a WordNet synonym, the word sequences differ, the numbers and "
                  "quantifiers are the same, both sentences have as many negators (not, n't, no, never, "
                  "nothing ...), and there is no antonym pair. Cannot see paraphrases built from "
                  "different words ('R&D is made up of' for 'research and development is composed of'). "
                  "Unavailable without WordNet.",
    "QUANTITY/TIME_REASONING": "APPROXIMATE (the annotators judged whether reasoning is needed): both "
                               "sentences contain a quantity expression (a CD number or a word such as "
                               "more/less/fewer/than/half/dozen) and the hypothesis has one the premise "
                               "does not (two vs. three, two vs. 2); or the same holds for time "
                               "expressions (a month or weekday noun, hour, year, ago, before/after, ...). "
                               "Cannot tell a restated number (two vs. 2) from one that needs arithmetic.",
    "COREF": "APPROXIMATE (no coreference resolver is used): the hypothesis contains a third-person "
             "pronoun (he/him/his/she/her/it/its/they/them/their) that the premise does not use itself "
             "and no number-compatible noun earlier in the hypothesis could resolve (singular pronouns: "
             "NN/NNP nouns other than 'one' for she/her; plural pronouns: NNS/NNPS nouns), so its referent "
             "must come from the premise "
             "(requiring a matching premise noun as well measured worse). Cannot see referring noun "
             "phrases ('the first plane' for 'American 11') or first/second-person shifts ('we' for 'you "
             "and I'), which most gold COREF pairs are, nor whether 'it' refers at all.",
    "QUANTIFIER": "a token from the paper's list in either sentence: much, enough, more, most, less, "
                  "least, no, none, some, any, many, few, several, almost, nearly; not the answer 'No, ...' "
                  "(an interjection). Sees the list only: 'all', 'every', 'each' are not on it.",
    "MODAL": "a modal (PTB tag MD) written out as a word of the paper's list in either sentence: can, could, "
             "may, might, must, will, would, should (the noun 'can' and the month 'May' do not count). "
             "The contractions 'll, 'd, can't, won't are left out, as the annotators mostly left them.",
    "BELIEF": "a verb (PTB tag VB*) whose lemma is in the paper's list in either sentence: know, "
              "believe, understand, doubt, think, suppose, recognize, forget, remember, imagine, mean, "
              "agree, disagree, deny, promise, used by a holder: not a passive or adjectival participle "
              "('is known to be', 'well-known'), not 'supposed to', not a bare gerund ('knowing that'); "
              "the noun 'doubt' does not count. Cannot see belief verbs off the list (trust, figure).",
}
"""How each tag is decided, and what the rule can and cannot see (measured against the gold tags by
`python -m nlivis tags-report`)."""


APPROXIMATE_F1 = 0.5
"""An automatic tag whose F1 against the gold tags is below this on either half of the annotated MultiNLI dev
pairs is marked approximate in every breakdown."""
TAG_QUALITY: dict[str, tuple[float, float]] = {
    "CONDITIONAL": (0.913, 0.962), "WORD_OVERLAP": (0.409, 0.543), "NEGATION": (0.989, 0.990),
    "ANTO": (0.681, 0.784), "LONG_SENTENCE": (0.971, 0.973), "TENSE_DIFFERENCE": (0.444, 0.224),
    "ACTIVE/PASSIVE": (0.467, 0.667), "PARAPHRASE": (0.269, 0.381), "QUANTITY/TIME_REASONING": (0.381, 0.552),
    "COREF": (0.286, 0.237), "QUANTIFIER": (0.969, 0.969), "MODAL": (0.986, 0.958), "BELIEF": (0.923, 0.882),
}
"""Tag → F1 of this tagger version (`TAGGER_VERSION`) against the RepEval gold tags on MultiNLI dev (matched,
mismatched), as `python -m nlivis tags-report --data-dir ../shared/data` measures it (a test with the data
checks these numbers). See `RULES_TUNED_ON` for why neither half is held out."""
RULES_TUNED_ON = (
    "both halves: the rules were refined against the gold tags of all 987 joinable annotated pairs (matched "
    "and mismatched) up to tagger version 3, and version 4's two fixes (PARAPHRASE counts negators per side, "
    "COREF takes no 'one' as the antecedent of she/her) came from a review of disagreements in either half. "
    "Neither half is held out, so both F1 columns are in-sample; the worse half is the closer stand-in for "
    "quality on unseen pairs, and a tag below 0.5 there is marked approximate.")


def approximate_tags() -> dict[str, str]:
    """Automatic tags whose rule agrees poorly with the annotators (F1 below `APPROXIMATE_F1` on either half,
    `TAG_QUALITY`), with a sentence saying so for a breakdown's status."""
    return {tag: f"F1 {matched:.2f} on MultiNLI dev matched / {mismatched:.2f} mismatched against the gold tags "
                 f"(below {APPROXIMATE_F1} on the worse half; rules tuned on both halves: tags-report)"
            for tag, (matched, mismatched) in TAG_QUALITY.items() if min(matched, mismatched) < APPROXIMATE_F1}


class TagFileError(InputError):
    """A hand-annotated tag file that cannot be read; the message names file and line."""


WORDNET_TAGS = ("ANTO", "PARAPHRASE")
"""Tags whose rule needs WordNet (antonyms; synonyms and antonyms): without it they are unavailable, never
computed by a weaker rule whose measured quality would not apply, nor counted as 0."""


def unavailable_tags() -> dict[str, str]:
    """Tags that cannot be decided here, with the reason (`WORDNET_TAGS` without WordNet)."""
    try:
        load_wordnet()
    except WordNetUnavailable as error:
        return {tag: f"{tag} needs WordNet: {error}" for tag in WORDNET_TAGS}
    return {}


# ---------------------------------------------------------------- public API

def tag_pair(premise_doc, hypothesis_doc) -> set[str]:
    """The tags of one pair from two spaCy Docs parsed with the dependency parser on."""
    return rule_tags(premise_doc, hypothesis_doc, use_wordnet=not unavailable_tags())


def tag_pairs(pairs: Sequence[Pair], progress: bool | Callable[[int, int], None] = False,
              batch_size: int = 256) -> dict[str, frozenset[str]]:
    """Tags for every pair (pair id → tags), parsing premises and hypotheses in batches.

    `progress`: True shows a tqdm bar; a callable gets (pairs done, total) every `batch_size` pairs.
    Warns once when tags cannot be decided (ANTO and PARAPHRASE without WordNet, see `unavailable_tags`),
    so a view can say so.
    """
    nlp = load_nlp(with_parser=True)
    missing = unavailable_tags()
    if missing:
        warnings.warn("; ".join(missing.values()), stacklevel=2)
    premise_docs = nlp.pipe((p.premise for p in pairs), batch_size=batch_size)
    hypothesis_docs = nlp.pipe((p.hypothesis for p in pairs), batch_size=batch_size)
    parsed: Iterable = zip(pairs, premise_docs, hypothesis_docs)
    if progress is True:
        parsed = tqdm(parsed, total=len(pairs), desc="tagging pairs", unit="pair")
    tags: dict[str, frozenset[str]] = {}
    for done, (pair, premise_doc, hypothesis_doc) in enumerate(parsed, start=1):
        tags[pair.id] = frozenset(rule_tags(premise_doc, hypothesis_doc, use_wordnet=not missing))
        if callable(progress) and (done % batch_size == 0 or done == len(pairs)):
            progress(done, len(pairs))
    return tags


def tag_cache_key(pairs: Sequence[Pair], wordnet: bool | None = None) -> str:
    """What cached tags depend on: the rules' version, the spaCy pipeline, WordNet's availability and
    every pair's id and text. `wordnet`: whether the tags are (or were) decided with WordNet, when the caller
    says; else WordNet is opened to know (`unavailable_tags`)."""
    wordnet = not unavailable_tags() if wordnet is None else wordnet
    digest = hashlib.sha256()
    digest.update(f"{TAGGER_VERSION}|{installed_pipeline_version()}|wordnet={wordnet}\n".encode())
    for pair in pairs:
        digest.update(f"{pair.id}\t{pair.premise}\t{pair.hypothesis}\n".encode())
    return digest.hexdigest()[:24]


# ---------------------------------------------------------------- hand-annotated files

TAG_MARKER = "#"
"""The RepEval 2017 release writes every tag with a leading '#' (`#MODAL`); it is not part of the name."""


def _normalise_tag_name(name: str) -> str:
    """'#MODAL', 'word overlap' and 'QUANTITY/TIME REASONING' (the paper's spelling) → the names in TAGS."""
    return "_".join(name.strip().removeprefix(TAG_MARKER).strip().upper().split())


def _tag_names(field: str) -> list[str]:
    """The tag names in one tab-separated field: comma-separated, or several '#'-marked names in a row
    ('#MODAL #NEGATION'); an empty field (the release's trailing tab) holds none."""
    names = []
    for part in field.split(","):
        if part.count(TAG_MARKER) > 1:
            names.extend(piece for piece in part.split(TAG_MARKER) if piece.strip())
        elif part.strip():
            names.append(part)
    return names


def _check_tags(names: Iterable[str], where: str) -> frozenset[str]:
    tags = frozenset(_normalise_tag_name(name) for name in names if name.strip(f" \t{TAG_MARKER}"))
    unknown = sorted(tags - set(TAGS))
    if unknown:
        raise TagFileError(f"{where}: unknown tag(s) {', '.join(unknown)}; known tags: {', '.join(TAGS)}")
    return tags


def _json_record(record: object, where: str) -> tuple[str, frozenset[str]]:
    if not isinstance(record, dict) or "id" not in record or not isinstance(record.get("tags"), list):
        raise TagFileError(f'{where}: expected an object {{"id": ..., "tags": [...]}}; got {record!r:.80}')
    return str(record["id"]).strip(), _check_tags((str(t) for t in record["tags"]), where)


def read_tag_file(path: str | Path) -> dict[str, frozenset[str]]:
    """Hand-annotated tags: pair id → tags. Reads and checks the whole file (no spaCy, milliseconds),
    so a caller can validate it before any expensive work.

    Formats:
    - tab-separated lines `pair_id <TAB> TAG <TAB> TAG ...` as the RepEval 2017 MultiNLI annotation
      release writes them (`113976e<TAB>#BELIEF<TAB>#MODAL`; a pair without tags is `30824c<TAB>`),
      or `pair_id <TAB> TAG1,TAG2`. Tag names may carry the release's leading '#', any case, spaces
      for underscores (the paper's "WORD OVERLAP"); a pair id alone means no tags. Lines whose first
      character is '#' are comments, blank lines are skipped; CRLF endings and a UTF-8 BOM are fine.
    - a JSON list of {"id", "tags"} objects, or JSON lines of such objects.
    Unknown tag names, an empty pair id and a pair id given twice are errors naming the file and line.
    """
    path = Path(path)
    text = _tag_file_text(path)
    records = _json_list_records(text, path) if text.lstrip().startswith("[") else _line_records(text, path)
    tags: dict[str, frozenset[str]] = {}
    for where, pair_id, pair_tags in records:
        if pair_id in tags:
            raise TagFileError(f"{where}: pair id {pair_id!r} is listed twice")
        tags[pair_id] = pair_tags
    return tags


TagRecord = tuple[str, str, frozenset[str]]
"""(where in the file, pair id, tags) of one record of a tag file."""


def _tag_file_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TagFileError(f"{path}: cannot read tag file ({error.strerror or error})") from error
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise TagFileError(f"{path}, line {line}: not UTF-8 text ({error.reason}: the bytes "
                           f"{data[error.start:error.end]!r})", str(path), line) from None


def _json_list_records(text: str, path: Path) -> list[TagRecord]:
    try:
        loaded = load_json(text)
    except json.JSONDecodeError as error:
        raise TagFileError(f"{path}, line {error.lineno}: invalid JSON ({error.msg})") from error
    wheres = (f"{path}, record {position}" for position in range(1, len(loaded) + 1))
    return [(where, *_json_record(record, where)) for where, record in zip(wheres, loaded)]


def _line_records(text: str, path: Path) -> list[TagRecord]:
    """The records of a tab-separated file or of JSON lines (comment and blank lines skipped)."""
    records: list[TagRecord] = []
    # Lines end at "\n" only (CRLF's "\r" is stripped), so numbers match what an editor shows even
    # when a tag or id holds another Unicode line break (str.splitlines would split there too).
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        where = f"{path}, line {number}"
        line = raw.strip()
        if not line or raw.startswith(TAG_MARKER):
            continue
        if line.startswith("{"):
            try:
                record = load_json(line)
            except json.JSONDecodeError as error:
                raise TagFileError(f"{where}: invalid JSON ({error.msg})") from error
            records.append((where, *_json_record(record, where)))
            continue
        fields = raw.split("\t")
        pair_id = fields[0].strip()
        if not pair_id or pair_id.startswith(TAG_MARKER):
            raise TagFileError(f"{where}: expected `pair_id<TAB>#TAG<TAB>#TAG ...`; got {raw!r:.120}")
        names = [name for field in fields[1:] for name in _tag_names(field)]
        records.append((where, pair_id, _check_tags(names, where)))
    return records


def merge_tags(automatic: Mapping[str, frozenset[str]],
               manual: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Automatic tags with every hand-annotated pair's tags replacing the automatic ones."""
    merged = dict(automatic)
    merged.update(manual)
    return merged

"""Annotation tagger: each tag fires on a pair written for it and stays silent on a near miss."""
from __future__ import annotations

import pytest

from nlivis.analysis import tag_rules
from nlivis.analysis import tags as tagging
from nlivis.analysis.tags import TAG_METHODS, TAGS, TagFileError, merge_tags, read_tag_file, tag_pair
from nlivis.features.wordnet import WordNetUnavailable
from nlivis.data.records import Pair


needs_wordnet = pytest.mark.usefixtures("wordnet")
"""conftest's session `wordnet` fixture: skips saying why when WordNet is unavailable, and loads it only when a
test that needs it runs (never at collection)."""


@pytest.fixture(scope="module")
def nlp():
    from nlivis.features.spacy_pipeline import load_nlp

    return load_nlp(with_parser=True)


@pytest.fixture(scope="module")
def tags_of(nlp):
    def tags(premise: str, hypothesis: str) -> set[str]:
        return tag_pair(nlp(premise), nlp(hypothesis))

    tags.nlp = nlp
    return tags


def test_tag_list_is_table7_order_and_every_tag_documented():
    assert TAGS[0] == "CONDITIONAL" and TAGS[-1] == "BELIEF" and len(TAGS) == 13
    assert set(TAG_METHODS) == set(TAGS)
    for approximate in ("PARAPHRASE", "COREF", "QUANTITY/TIME_REASONING"):
        assert "APPROXIMATE" in TAG_METHODS[approximate]


def test_conditional_needs_the_word_if_not_a_substring(tags_of):
    assert "CONDITIONAL" in tags_of("If it rains, we stay home.", "We stay home.")
    assert "CONDITIONAL" in tags_of("We leave unless it rains.", "We leave.")
    assert "CONDITIONAL" not in tags_of("She enjoys her life in the city.", "She likes city life.")
    assert "CONDITIONAL" not in tags_of("I wonder if he came.", "He came.")


def test_negation_ignores_know_and_another(tags_of):
    assert "NEGATION" in tags_of("A man is not sleeping.", "A man sleeps.")
    assert "NEGATION" in tags_of("The dogs are running.", "The dogs won't run.")
    assert "NEGATION" in tags_of("You cannot park here.", "Parking is allowed.")
    assert "NEGATION" not in tags_of("I know another man.", "I know a man.")


def test_negation_is_sentential_not_as_the_gold_tags_use_it(tags_of):
    """The gold NEGATION tag marks 'not'/n't; negative quantifiers are QUANTIFIER, and 'no matter
    what' denies nothing."""
    assert "NEGATION" not in tags_of("There is no cat.", "A cat sits.")
    assert "NEGATION" not in tags_of("Nobody ever came.", "They never came.")
    assert "NEGATION" not in tags_of("No matter what happens, we go.", "We go.")


def test_paraphrase_polarity_sees_negative_quantifiers_but_not_no_matter(tags_of):
    assert "PARAPHRASE" not in tags_of("Nobody bought the old house.", "Everybody bought the old house.")
    assert tag_rules._negator_count(tag_rules._tokens(tags_of.nlp("Nobody came."))) == 1
    assert tag_rules._negator_count(tag_rules._tokens(tags_of.nlp("No matter what, they came."))) == 0
    assert tag_rules._negator_count(tag_rules._tokens(tags_of.nlp("Nobody can't say it never rained."))) == 3


def test_belief_needs_a_believer(tags_of):
    assert "BELIEF" in tags_of("I think the shop is open.", "The shop is open.")
    assert "BELIEF" in tags_of("She knew the answer.", "She had the answer.")
    assert "BELIEF" not in tags_of("The school is known for engineering.", "The school teaches engineering.")
    assert "BELIEF" not in tags_of("I was supposed to be here.", "I came here.")
    assert "BELIEF" not in tags_of("Knowing the risks helps.", "Risks exist.")


def test_word_overlap_is_the_share_of_hypothesis_words_in_the_premise(tags_of):
    """The RepEval README's example: 'let's look for sticks.' after 'let's look for paua shells!'."""
    assert "WORD_OVERLAP" in tags_of("let's look for paua shells!", "let's look for sticks.")
    assert "WORD_OVERLAP" not in tags_of("The tall man is eating lunch in the park.", "The man sleeps at home.")


def test_word_overlap_threshold(tags_of):
    assert "WORD_OVERLAP" in tags_of("The tall man is eating lunch in the park.",
                                      "The man is eating lunch in the park.")
    assert "WORD_OVERLAP" not in tags_of("The tall man is eating lunch in the park.",
                                          "A woman sleeps at home.")


@needs_wordnet
def test_antonym_pair_from_wordnet(tags_of):
    assert "ANTO" in tags_of("A couple is eating outside at a table.",
                             "A couple is eating inside at a table.")
    assert "ANTO" in tags_of("The soup is hot.", "The soup is cold.")
    assert "ANTO" not in tags_of("The soup is hot.", "The soup is warm.")


@needs_wordnet
def test_antonyms_among_prepositions_and_opposite_quantifiers(tags_of):
    assert "ANTO" in tags_of("The cat sleeps inside the house.", "The cat sleeps outside the house.")
    assert "ANTO" in tags_of("Some children liked the film.", "All children liked the film.")
    assert "ANTO" in tags_of("He always walks to work.", "He never walks to work.")
    assert "ANTO" not in tags_of("Some children liked the film.", "Some children liked the book.")


def test_long_sentence_thresholds(tags_of):
    words = " ".join(f"word{i}" for i in range(31))
    assert "LONG_SENTENCE" in tags_of(f"A {words}.", "A dog runs.")
    hypothesis = " ".join(["dog"] * 17)
    assert "LONG_SENTENCE" in tags_of("A dog runs.", hypothesis)
    assert "LONG_SENTENCE" not in tags_of(" ".join(["dog"] * 30), " ".join(["dog"] * 16))


def test_tense_difference_from_main_verbs(tags_of):
    assert "TENSE_DIFFERENCE" in tags_of("The man walked home.", "The man walks home.")
    assert "TENSE_DIFFERENCE" in tags_of("The man walks home.", "The man will walk home.")
    assert "TENSE_DIFFERENCE" not in tags_of("The man walked home.", "The man ran home.")
    assert "TENSE_DIFFERENCE" not in tags_of("A man walking home.", "The man walked home.")


def test_tense_difference_sees_aspect_and_every_premise_clause(tags_of):
    assert "TENSE_DIFFERENCE" in tags_of("Clinton has learned to wait.", "Clinton learned to wait.")
    assert "TENSE_DIFFERENCE" in tags_of("She reads a book.", "She is reading a book.")
    # the hypothesis restates the premise's past subordinate clause: no difference
    assert "TENSE_DIFFERENCE" not in tags_of("He says that the train left early.", "The train left early.")


def test_active_passive_needs_the_same_verb_in_both_voices(tags_of):
    assert "ACTIVE/PASSIVE" in tags_of("The dog chased the cat.", "The cat was chased by the dog.")
    assert "ACTIVE/PASSIVE" not in tags_of("The dog chased the cat.", "The cat was fed by the man.")
    assert "ACTIVE/PASSIVE" not in tags_of("The dog chased the cat.", "The dog chased a bird.")
    # a passive only inside a subordinate clause, with both main clauses active: no voice change
    assert "ACTIVE/PASSIVE" not in tags_of("Mary said the letter was written quickly.", "Tom wrote a letter.")


def test_paraphrase_needs_covered_content_and_a_different_surface(tags_of):
    assert "PARAPHRASE" in tags_of("The dog chased the cat.", "The cat was chased by the dog.")
    assert "PARAPHRASE" not in tags_of("The dog chased the cat.", "The dog chased the cat.")
    assert "PARAPHRASE" not in tags_of("The man walked home.", "The man walks home.")
    assert "PARAPHRASE" not in tags_of("The dog chased the cat.", "The dog did not chase the cat.")


def test_paraphrase_keeps_numbers_and_quantifiers_as_content(tags_of):
    assert "PARAPHRASE" not in tags_of("Two men chased the dog.", "The dog was chased by three men.")
    assert "PARAPHRASE" not in tags_of("Some students passed the exam.", "The exam was passed by all students.")
    assert "PARAPHRASE" in tags_of("Two men chased the dog.", "The dog was chased by two men.")
    assert "PARAPHRASE" not in tags_of("The dog chased the cat.", "A bird sang in the tree.")


@needs_wordnet
def test_paraphrase_accepts_wordnet_synonyms(tags_of):
    assert "PARAPHRASE" in tags_of("The boy quickly bought a large car.",
                                   "The boy purchased a big automobile quickly.")


def test_quantity_time_reasoning(tags_of):
    assert "QUANTITY/TIME_REASONING" in tags_of("Three men arrived at 5 pm.", "Two men arrived before 6 pm.")
    assert "QUANTITY/TIME_REASONING" not in tags_of("Three men arrived.", "Three men arrived.")
    assert "QUANTITY/TIME_REASONING" not in tags_of("A man arrived.", "Two men arrived.")


def test_coref_needs_an_antecedent_from_the_premise(tags_of):
    assert "COREF" in tags_of("John met Mary at the station.", "He was at the station.")
    assert "COREF" not in tags_of("John met Mary at the station.", "The man said he was there.")
    assert "COREF" not in tags_of("He met Mary at the station.", "He was at the station.")


@needs_wordnet
def test_paraphrase_compares_how_many_negators_each_side_has(tags_of):
    """A presence test passed 'can ... no' against 'can't ... no' (both sides have a negator); the count
    differs (one against two), so it is no paraphrase. The same count in another order still is."""
    premise = "People can withdraw their money early, and there is no penalty."
    assert "PARAPHRASE" not in tags_of(premise, "People can't withdraw their money early, and there is no penalty.")
    assert "PARAPHRASE" in tags_of(premise, "There is no penalty, and people can withdraw their money early.")


def test_coref_does_not_take_one_as_the_antecedent_of_her(tags_of):
    """'No one would read one of her books': 'her' is the premise's author, not 'one'."""
    assert "COREF" in tags_of("The author wrote a long book about Texas.", "No one would ever read one of her books.")
    assert "COREF" not in tags_of("The author wrote a long book about Texas.", "The woman said she wrote about Texas.")


def test_quantifier_word_list(tags_of):
    assert "QUANTIFIER" in tags_of("Some people came.", "People came.")
    assert "QUANTIFIER" in tags_of("People came.", "Nearly everyone came.")
    assert "QUANTIFIER" not in tags_of("A man came.", "The man came.")


def test_modal_uses_the_md_tag(tags_of):
    assert "MODAL" in tags_of("The man can swim.", "The man swims.")
    assert "MODAL" in tags_of("They will not come.", "They stay.")
    assert "MODAL" not in tags_of("A can of soda costs a dollar.", "We met in May.")


def test_modal_counts_written_out_modals_not_contractions(tags_of):
    """The gold tags mostly leave out 'll / 'd / can't / won't; the rule does too."""
    assert "MODAL" not in tags_of("They won't come.", "They'll stay.")
    assert "MODAL" in tags_of("They would come.", "They stay.")


def test_quantifier_is_not_the_answer_no(tags_of):
    assert "QUANTIFIER" in tags_of("There is no cat.", "A cat sits.")
    assert "QUANTIFIER" not in tags_of("No, said the man.", "The man agreed.")


def test_belief_needs_a_belief_verb(tags_of):
    assert "BELIEF" in tags_of("I think it is raining.", "It rains.")
    assert "BELIEF" in tags_of("She knew the answer.", "She had the answer.")
    assert "BELIEF" not in tags_of("There is no doubt about it.", "It is certain.")
    assert "BELIEF" not in tags_of("The knowledge is old.", "It is old.")


def test_tag_pairs_keys_by_pair_id():
    pairs = [Pair("a", "If it rains, we stay home.", "We stay home."),
             Pair("b", "The man can swim.", "The man swims.")]
    tags = tagging.tag_pairs(pairs)
    assert set(tags) == {"a", "b"}
    assert "CONDITIONAL" in tags["a"] and "MODAL" in tags["b"]
    assert all(isinstance(value, frozenset) for value in tags.values())


def test_read_tag_file_formats(fixtures):
    tsv = read_tag_file(fixtures / "analysis" / "tags_good.tsv")
    assert tsv == {"101": {"NEGATION", "MODAL"},
                   "102": {"WORD_OVERLAP", "QUANTITY/TIME_REASONING"},
                   "103": frozenset()}
    assert read_tag_file(fixtures / "analysis" / "tags_good.jsonl") == {"201": {"ANTO", "BELIEF"},
                                                                        "202": frozenset()}
    assert read_tag_file(fixtures / "analysis" / "tags_good.json") == {
        "301": {"COREF"}, "302": {"PARAPHRASE", "LONG_SENTENCE"}}


REPEVAL_FIXTURE_TAGS = {
    "900001e": {"BELIEF", "MODAL", "LONG_SENTENCE"},
    "900002c": frozenset(),
    "900003n": {"QUANTITY/TIME_REASONING", "MODAL"},
    "900004e": {"ACTIVE/PASSIVE", "WORD_OVERLAP"},
    "900005n": {"PARAPHRASE", "ANTO", "COREF", "TENSE_DIFFERENCE", "QUANTIFIER", "NEGATION", "CONDITIONAL"},
    "900006c": {"NEGATION"},
}


def test_read_tag_file_reads_the_repeval_release_format(fixtures):
    """The published shape: '#'-marked tags, one per tab-separated field, a trailing tab for a pair
    without tags, a tag listed twice on one line, no newline after the last line."""
    assert read_tag_file(fixtures / "analysis" / "tags_repeval.txt") == REPEVAL_FIXTURE_TAGS


def test_read_tag_file_tolerates_crlf_bom_case_blank_lines_and_space_separated_marks(fixtures, tmp_path):
    text = (fixtures / "analysis" / "tags_repeval.txt").read_text(encoding="utf-8")
    variant = tmp_path / "variant.txt"
    variant.write_bytes(b"\xef\xbb\xbf" + ("# a comment line\n\n" + text).replace("\n", "\r\n").encode()
                        + b"\r\n900007e\t#modal #Word_Overlap \t\n")
    assert read_tag_file(variant) == {**REPEVAL_FIXTURE_TAGS, "900007e": {"MODAL", "WORD_OVERLAP"}}


def test_read_tag_file_errors_name_file_and_line(tmp_path):
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("900001e\t#MODAL\n900002c\t#MODAL\t#SARCASM\n", encoding="utf-8")
    with pytest.raises(TagFileError, match=r"unknown\.txt, line 2: unknown tag\(s\) SARCASM"):
        read_tag_file(unknown)
    no_id = tmp_path / "no_id.txt"
    no_id.write_text("900001e\t#MODAL\n\t#NEGATION\n", encoding="utf-8")
    with pytest.raises(TagFileError, match=r"no_id\.txt, line 2: expected `pair_id"):
        read_tag_file(no_id)


@pytest.mark.parametrize("subset, expected", [
    ("matched", {"MODAL": 144, "NEGATION": 129, "QUANTIFIER": 125, "LONG_SENTENCE": 99, "BELIEF": 66,
                 "TENSE_DIFFERENCE": 51, "COREF": 30, "WORD_OVERLAP": 28, "PARAPHRASE": 25, "CONDITIONAL": 23,
                 "ANTO": 17, "ACTIVE/PASSIVE": 15, "QUANTITY/TIME_REASONING": 15}),
    # Mismatched lists #QUANTITY/TIME_REASONING twice on 15 lines (39 marks on 24 pairs); a pair counts once.
    ("mismatched", {"QUANTIFIER": 140, "MODAL": 126, "LONG_SENTENCE": 109, "NEGATION": 104, "BELIEF": 58,
                    "WORD_OVERLAP": 37, "PARAPHRASE": 37, "COREF": 29, "CONDITIONAL": 26,
                    "QUANTITY/TIME_REASONING": 24, "ANTO": 20, "TENSE_DIFFERENCE": 18, "ACTIVE/PASSIVE": 10}),
])
def test_gold_annotation_files_give_the_published_tag_counts(shared_data, subset, expected):
    from collections import Counter

    path = shared_data / "mnli_annotations" / f"multinli_1.0_{subset}_annotations.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    tags = read_tag_file(path)
    assert len(tags) == 495
    assert dict(Counter(tag for pair_tags in tags.values() for tag in pair_tags)) == expected


def test_read_tag_file_unknown_tag_names_file_and_line(fixtures):
    path = fixtures / "analysis" / "tags_unknown.tsv"
    with pytest.raises(TagFileError, match=r"tags_unknown\.tsv, line 2: unknown tag\(s\) SARCASM"):
        read_tag_file(path)


def test_read_tag_file_duplicate_and_bad_json(tmp_path):
    duplicate = tmp_path / "dup.tsv"
    duplicate.write_text("1\tNEGATION\n1\tMODAL\n", encoding="utf-8")
    with pytest.raises(TagFileError, match="line 2: pair id '1' is listed twice"):
        read_tag_file(duplicate)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "1", "tags": ["MODAL"]}\n{"id": "2", "tags": \n', encoding="utf-8")
    with pytest.raises(TagFileError, match="line 2: invalid JSON"):
        read_tag_file(broken)
    with pytest.raises(TagFileError, match="cannot read"):
        read_tag_file(tmp_path / "missing.tsv")


def test_manual_tags_replace_automatic_ones():
    automatic = {"1": frozenset({"NEGATION"}), "2": frozenset({"MODAL"})}
    manual = {"2": frozenset({"BELIEF"}), "3": frozenset()}
    assert merge_tags(automatic, manual) == {"1": {"NEGATION"}, "2": {"BELIEF"}, "3": frozenset()}


def test_anto_reported_unavailable_without_wordnet(monkeypatch):
    def missing():
        raise WordNetUnavailable("apt-get install wordnet-base wordnet-sense-index")

    monkeypatch.setattr(tagging, "load_wordnet", missing)
    assert "apt-get install wordnet-base" in tagging.unavailable_tags()["ANTO"]
    with pytest.warns(UserWarning, match="ANTO needs WordNet"):
        tags = tagging.tag_pairs([Pair("x", "The soup is hot.", "The soup is cold.")])
    assert "ANTO" not in tags["x"]


def test_cached_tags_are_reused(tmp_path, monkeypatch):
    from nlivis.workflows import samples

    pairs = [Pair("a", "If it rains, we stay home.", "We stay home.")]
    first = samples.cached_tag_pairs(pairs, cache_dir=tmp_path)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".seal"]

    def fail(*args, **kwargs):
        raise AssertionError("tags were recomputed")

    monkeypatch.setattr(samples, "tag_pairs", fail)
    assert samples.cached_tag_pairs(pairs, cache_dir=tmp_path) == first
    with pytest.raises(AssertionError, match="recomputed"):
        samples.cached_tag_pairs([Pair("a", "If it rains, we stay home.", "We stay inside.")], cache_dir=tmp_path)
    [stored] = tmp_path.glob("*.json")
    stored.write_bytes(stored.read_bytes().replace(b"COND", b"NEG_"))  # same size, another tag: not trusted
    with pytest.raises(AssertionError, match="recomputed"):
        samples.cached_tag_pairs(pairs, cache_dir=tmp_path)


def test_tags_kept_from_a_run_with_wordnet_are_read_without_opening_it(tmp_path, monkeypatch):
    from nlivis.store.files import atomic_write_json
    from nlivis.workflows import samples

    pairs = [Pair("a", "If it rains, we stay home.", "We stay home.")]
    atomic_write_json(tmp_path / f"tags-{tagging.tag_cache_key(pairs, wordnet=True)}.json", {"a": ["CONDITIONAL"]},
                      indent=None, sealed=True)

    def fail(*args, **kwargs):
        raise AssertionError("WordNet was opened")

    monkeypatch.setattr(samples, "unavailable_tags", fail)
    monkeypatch.setattr(tagging, "unavailable_tags", fail)
    monkeypatch.setattr(samples, "copy_problem", lambda target: None)  # nlivis's copy in place
    kept = samples.tag_sample(pairs, tmp_path)
    assert kept.tags == {"a": frozenset({"CONDITIONAL"})} and kept.unavailable == {} and kept.size == 1
    monkeypatch.setattr(samples, "copy_problem", lambda target: "not installed")  # then only WordNet can say
    with pytest.raises(AssertionError, match="WordNet was opened"):
        samples.tag_sample(pairs, tmp_path)


def test_progress_callback_counts_pairs():
    seen = []
    pairs = [Pair(str(i), "A dog runs.", "A dog moves.") for i in range(5)]
    tagging.tag_pairs(pairs, progress=lambda done, total: seen.append((done, total)), batch_size=2)
    assert seen == [(2, 5), (4, 5), (5, 5)]


def test_quantity_and_time_are_compared_kind_by_kind(tags_of):
    assert "QUANTITY/TIME_REASONING" in tags_of("The meeting was in June.", "The meeting was in July.")
    assert "QUANTITY/TIME_REASONING" not in tags_of("Two women hug.", "The sisters hug after lunch.")


def test_the_tag_cache_key_reads_the_pipeline_version_without_loading_the_parser(monkeypatch):
    """A cached tag file is found without spaCy's parser pipeline (~1.7 s to load): the key takes the version
    from the package's meta.json, the same string the loaded pipeline reports."""
    from nlivis.features import spacy_pipeline

    pairs = [Pair("p1", "A dog runs .", "An animal moves .", "entailment")]
    key = tagging.tag_cache_key(pairs)

    def no_loading(*args, **kwargs):
        raise AssertionError("the tag cache key loaded a spaCy pipeline")
    monkeypatch.setattr(spacy_pipeline, "load_nlp", no_loading)
    assert tagging.tag_cache_key(pairs) == key
    assert tagging.tag_cache_key([Pair("p1", "A dog runs .", "An animal sleeps .", "entailment")]) != key

"""scripts/sense_agreement.py: the "every common sense agrees" rule it measures, on known WordNet values."""
from __future__ import annotations

from tests.conftest import load_script


def test_a_replacement_is_kept_only_where_every_common_sense_agrees(wordnet):
    script = load_script("sense_agreement")
    dog, = [s for s in wordnet.synsets("dog", "n") if s.name() == "dog.n.01"]
    assert script.relation_holds(dog, "hypernym", "animal") and not script.relation_holds(dog, "hyponym", "animal")
    assert script.every_common_sense_agrees("dogs", "hypernym", "animal", 0.1)
    # instrument's second tagged sense (a means) has no weapon below it; female's (a woman) is no animal
    assert not script.every_common_sense_agrees("instrument", "hyponym", "weapon", 0.1)
    assert not script.every_common_sense_agrees("females", "hypernym", "animals", 0.1)
    assert script.every_common_sense_agrees("females", "hypernym", "animals", 0.9), "no other sense is that common"
    counts = script.tally(0.3)
    assert counts["counterparts", "wrong", "refused"] > 0 and counts["counterparts", "right", "kept"] > 0

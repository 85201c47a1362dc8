"""Model-family metadata is declared once (nlivis/models/families.py) and tied to every registered model."""
from __future__ import annotations

import subprocess
import sys

import pytest

from nlivis.analysis.paper_tables import FAMILY_PAPERS, PAPERS
from nlivis.models.base import MatchingModel
from nlivis.models.families import FAMILIES, SHIPPED_FAMILIES, family_rank
from nlivis.models.registry import available, model_class, register
from nlivis.viz.common import FAMILY_COLOURS


def test_every_registered_model_has_a_family_and_every_family_a_model():
    assert sorted(FAMILIES) == available()
    for name in available():
        assert model_class(name).family is FAMILIES[name]


def test_a_model_without_family_metadata_cannot_register():
    with pytest.raises(ValueError, match="families.py"):
        register("no_such_family")(type("Orphan", (MatchingModel,), {}))
    assert "no_such_family" not in available()


def test_families_differ_in_colour_and_label_and_name_their_papers():
    assert len({f.colour for f in FAMILIES.values()}) == len(FAMILIES)
    assert len({f.label for f in FAMILIES.values()}) == len(FAMILIES)
    assert list(PAPERS) == ["000", "001", "002", "003", "004"]
    for family in FAMILIES.values():
        assert (family.paper_id is None) == (family.paper_title is None), family.name
        if family.paper_id is not None:
            assert PAPERS[family.paper_id] == {"short": family.label, "title": family.paper_title}


def test_readers_take_the_declared_facts():
    assert FAMILY_COLOURS == {name: family.colour for name, family in FAMILIES.items()}
    assert FAMILY_PAPERS == {"gcnn": "000", "diin": "001", "attentive_conv": "002", "esan": "003", "amn": "004"}
    assert SHIPPED_FAMILIES == ("gcnn", "diin", "attentive_conv", "esan", "amn")
    assert [family_rank(name) for name in ("esim", "gcnn", "minilm", "unknown")] == [5, 0, 6, 7]


def test_family_metadata_does_not_import_torch():
    """Home and `--help` read the families' order and colours; torch would cost them 1.5–2 s."""
    code = "import sys, nlivis.models.families; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"

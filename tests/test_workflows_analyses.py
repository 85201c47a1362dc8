"""The analyses this floor registers (nlivis.workflows.protocol): each under its one name, declaring the trace
entry types it reads, so a view knows which models it applies to before running anything."""
from __future__ import annotations

from nlivis.models.trace import Alignment, Representation
from nlivis.workflows.protocol import ANALYSES
from nlivis.workflows.specs import EDITS, PROBES, PROJECTION


def test_edits_probes_and_projection_are_registered_with_what_they_read():
    assert ANALYSES["edits"] is EDITS and ANALYSES["probes"] is PROBES and ANALYSES["projection"] is PROJECTION
    assert EDITS.needs == PROBES.needs == frozenset()  # the output distribution only: every model
    assert PROJECTION.needs == frozenset({"Representation"})
    assert PROJECTION.applies_to(frozenset({Alignment, Representation}))
    assert not PROJECTION.applies_to(frozenset({Alignment}))
    assert EDITS.applies_to(frozenset())

"""The notes every number carries: the reduced protocol it was measured on, and the icon notes start with."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import streamlit as st

if TYPE_CHECKING:
    from nlivis.app.loading import LoadedModel

SMALL_PROTOCOL_NOTE = ("Numbers come from models trained on reduced protocols (snli-small, mnli-small, quora-small: "
                       "a few thousand CPU-trained pairs), not the papers' training data; they are not the papers' results.")
"""Shown wherever a number is, unless a checkpoint's own protocol note is more specific."""

NOTE_ICON = ":material/info:"
"""Starts every note caption (streamlit's bundled icon font: no glyph depends on the browser's fonts)."""


def protocol_note(loaded: Any | None = None) -> str:
    """The protocol's own note (e.g. what snli-small trains on) or the general reduced-protocol note."""
    return protocol_note_for(getattr(getattr(loaded, "info", None), "protocol", None))


def protocol_note_for(name: str | None) -> str:
    """The note of the protocol called `name` (a checkpoint's recorded protocol), or the general note."""
    if name:
        try:
            from nlivis.data.protocols import get_protocol

            protocol = get_protocol(str(name))
            if protocol.note:
                return f"Protocol {protocol.name}: {protocol.note}"
        except (ImportError, ValueError, KeyError):
            pass
    return SMALL_PROTOCOL_NOTE


def show_protocol_notes(models: Sequence[LoadedModel]) -> None:
    """One caption per distinct protocol among the models shown (or the general note)."""
    notes = list(dict.fromkeys(protocol_note(m.checkpoint) for m in models)) or [SMALL_PROTOCOL_NOTE]
    for note in notes:
        st.caption(f"{NOTE_ICON} {note}")

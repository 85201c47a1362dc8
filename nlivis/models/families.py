"""What the project knows about each model family, declared once: its display label, its place in lists,
its colour on every page, the paper whose tables it reproduces, and whether it is one of the five shipped
paper models. `registry.register` ties each model class to its entry here (a model without an entry cannot
register), and the app, the figures, the paper tables, the speed bench and the scripts read it from here.

Torch-free on purpose: the app's Home and `python -m nlivis --help` read the order and colours without
loading torch (`nlivis.models.registry` imports it)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One model family: the registry name (`{"name": ...}` in a config, the first part of a checkpoint name)
    and the facts every page and script shows about it."""

    name: str
    label: str
    """How tables and legends name it (the paper's own spelling)."""
    colour: str
    """Its colour in every figure of several models (plotly's D3 palette, one hue a family)."""
    paper_id: str | None
    """The paper (id in `analysis.paper_tables.PAPERS`, folder papers/<id>) whose tables its configs
    reproduce; None for a baseline without one."""
    paper_title: str | None
    """That paper's title (None with paper_id)."""
    shipped: bool
    """One of the five paper models trained and shipped under every protocol (ESIM is the baseline)."""
    reference: str | None = None
    """What a family without a paper folder follows, cited in words (MiniLM's pretrained encoder)."""


FAMILIES: dict[str, Family] = {family.name: family for family in (
    Family("gcnn", "GCNN", "#1f77b4", "000", "Gated Convolutional Neural Network for Sentence Matching",
           shipped=True),
    Family("diin", "DIIN", "#ff7f0e", "001", "Natural Language Inference over Interaction Space", shipped=True),
    Family("attentive_conv", "AttentiveConvNet", "#2ca02c", "002", "Attentive Convolution", shipped=True),
    Family("esan", "ESAN", "#d62728", "003",
           "Enhanced Sentence Alignment Network for Efficient Short Text Matching", shipped=True),
    Family("amn", "AMN", "#9467bd", "004",
           "Research on attention memory networks as a model for learning natural language inference", shipped=True),
    Family("esim", "ESIM", "#8c564b", None, None, shipped=False),
    Family("minilm", "MiniLM", "#e377c2", None, None, shipped=False,
           reference="MiniLM (Wang et al. 2020) / Sentence-BERT cross-encoder (Reimers & Gurevych 2019): "
                     "all-MiniLM-L6-v2 fine-tuned on [CLS] premise [SEP] hypothesis [SEP]"),
)}
"""Every model family in display order: the papers' order, the ESIM baseline, then the pretrained MiniLM
reference."""

SHIPPED_FAMILIES: tuple[str, ...] = tuple(name for name, family in FAMILIES.items() if family.shipped)
"""The five paper models, in display order: the shipped checkpoints, the speed bench, the README's tables."""


def family_rank(name: str) -> int:
    """A family's place in display order; names of no family sort after every family."""
    order = list(FAMILIES)
    return order.index(name) if name in FAMILIES else len(order)

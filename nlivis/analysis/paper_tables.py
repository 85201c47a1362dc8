"""The numbers the five papers report, as data, so views can set our runs beside them.

Every row: paper_id (the file number in the papers folder, 000..004), paper, table (the paper's own
caption number), kind (main / ablation / efficiency / tags), model, dataset, split, metric, unit, value,
own (True for the paper's proposed model and its variants, False for baselines it quotes) and note.
Accuracies are percentages exactly as printed. All of them are the papers' numbers on the FULL
datasets (SNLI 550k, MultiNLI 393k + SNLI, Quora 384k training pairs), not something this project
reproduced; the shipped checkpoints are trained on small protocols and are not comparable in level.

Read from the paper texts; left out on purpose:
* GCNN (000): nothing left out (Tables 1 and 2 carry all results, ablations and times per epoch).
* DIIN (001): Table 1 (hyper-parameters, not results) and Figure 2 (a visualisation).
* AttentiveConvNet (002): Tables 5 (SQuAD answer sentence selection) and 6 (Yelp sentiment) — other
  tasks than sentence-pair matching on SNLI/MultiNLI/Quora; Tables 1-2 are examples, not results.
* ESAN (003): Figure 2 (parameter counts of other models, a bar chart whose numbers are not in the text).
* AMN (004): nothing left out. Its results table is captioned "Table 2" while the text calls it
  "Table 1"; the caption is kept.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Collection, Iterable

import pandas as pd

from nlivis.analysis.tags import TAGS
from nlivis.models.families import FAMILIES

SOURCE_NOTE = "reported by the paper on the full dataset; not reproduced by nlivis"

PAPERS: dict[str, dict[str, str]] = {family.paper_id: {"short": family.label, "title": family.paper_title}
                                     for family in FAMILIES.values() if family.paper_id and family.paper_title}
"""Paper id (folder papers/<id>) → its short name and title, from the families that reproduce them."""

COLUMNS = ["paper_id", "paper", "table", "kind", "model", "dataset", "split", "metric", "unit", "value",
           "own", "note"]


def _rows(paper_id: str, table: str, kind: str, dataset: str, split: str, metric: str, unit: str,
          entries: Iterable[tuple], own: Iterable[str] = (), note: str = "") -> list[dict]:
    """Rows for one column of a table: entries are (model, value) pairs; None values are skipped."""
    own = set(own)
    out = []
    for model, value in entries:
        if value is None:
            continue
        out.append({"paper_id": paper_id, "paper": PAPERS[paper_id]["short"], "table": table, "kind": kind,
                    "model": model, "dataset": dataset, "split": split, "metric": metric, "unit": unit,
                    "value": value, "own": model in own,
                    "note": SOURCE_NOTE + (f"; {note}" if note else "")})
    return out


def _columns(paper_id: str, table: str, kind: str, columns: list[tuple[str, str, str, str]],
             table_rows: list[tuple], own: Iterable[str] = (), note: str = "") -> list[dict]:
    """A table given row-wise: `columns` are (dataset, split, metric, unit) for each value position."""
    out = []
    for position, (dataset, split, metric, unit) in enumerate(columns):
        entries = [(row[0], row[1 + position]) for row in table_rows]
        out += _rows(paper_id, table, kind, dataset, split, metric, unit, entries, own, note)
    return out


ACC = ("accuracy", "%")
EPOCH = ("time_per_epoch", "s")

# ------------------------------------------------------------------------------------------- GCNN
_GCNN_OWN = ("GCNN", "GCNN (char)", "GCNN (char+POS)", "GCNN - forget gate", "GCNN - output gate")
_GCNN = (
    _columns("000", "Table 1", "main",
             [("MultiNLI", "matched test", *ACC), ("MultiNLI", "mismatched test", *ACC),
              ("MultiNLI", "train", *EPOCH)],
             [("CBOW [25]", 64.8, 64.5, None), ("BiLSTM [25]", 66.9, 66.9, None),
              ("ESIM [25]", 72.3, 72.1, None), ("CNN", 75.6, 74.5, 1215), ("GLU", 76.3, 75.2, 1650),
              ("ESIM (our implement)", 76.8, 75.5, 9610), ("GCNN", 76.6, 75.8, 2412),
              ("GCNN (char)", 77.0, 76.0, 4020), ("GCNN (char+POS)", 77.4, 76.4, 4080)],
             own=_GCNN_OWN,
             note="time per epoch on one GTX 1080 GPU; CNN and GLU replace the gated convolution")
    + _columns("000", "Table 2", "main",
               [("Quora", "test", *ACC), ("Quora", "train", *EPOCH)],
               [("BiMPM [12]", 88.17, None), ("DIIN [24]", 89.06, None), ("CNN", 87.92, 660),
                ("GLU", 88.32, 692), ("ESIM (our implement)", 87.65, 4038), ("GCNN", 88.66, 870),
                ("GCNN (char)", 88.94, 1740), ("GCNN (char+POS)", 89.35, 1770),
                ("GCNN - forget gate", 88.33, 690), ("GCNN - output gate", 88.35, 702)],
               own=_GCNN_OWN,
               note="the '- forget gate' / '- output gate' rows are the gate ablations (word inputs only)")
)

# ------------------------------------------------------------------------------------------- DIIN
_DIIN_OWN = ("DIIN", "DIIN (ensemble)")
_DIIN = (
    _columns("001", "Table 2", "main",
             [("MultiNLI", "matched test", *ACC), ("MultiNLI", "mismatched test", *ACC)],
             [("BiLSTM (Williams et al., 2017)", 67.0, 67.6), ("InnerAtt (Balazs et al., 2017)", 72.1, 72.1),
              ("ESIM (Williams et al., 2017)", 72.3, 72.1), ("Gated-Att BiLSTM (Chen et al., 2017b)", 73.2, 73.6),
              ("Shorcut-Stacked encoder (Nie & Bansal, 2017)", 74.6, 73.6), ("DIIN", 78.8, 77.8),
              ("InnerAtt (ensemble)", 72.2, 72.8), ("Gated-Att BiLSTM (ensemble)", 74.9, 74.9),
              ("DIIN (ensemble)", 80.0, 78.7), ("Human Performance (estimated)", 88.5, 89.2)],
             own=_DIIN_OWN,
             note="human performance is the paper's estimate from the dev sets' annotator labels")
    + _columns("001", "Table 3", "main", [("SNLI", "test", *ACC)],
               [("Handcrafted features (Bowman et al., 2015)", 78.2),
                ("LSTM encoder (Bowman et al., 2016)", 80.6),
                ("pretrained GRU encoders (Vendrov et al., 2015)", 81.4),
                ("tree-based CNN encoders (Mou et al., 2015)", 82.1),
                ("SPINN-PI encoders (Bowman et al., 2016)", 83.2),
                ("BiLSTM intra-attention encoders (Liu et al., 2016)", 84.2),
                ("NSE encoders (Munkhdalai & Yu, 2016)", 84.6),
                ("LSTM with attention (Rocktäschel et al., 2015)", 83.5),
                ("mLSTM (Wang & Jiang, 2015)", 86.1),
                ("LSTMN with deep attention fusion (Cheng et al., 2016)", 86.3),
                ("decomposable attention model (Parikh et al., 2016)", 86.3),
                ("Intra-sentence attention + decomposable attention (Parikh et al., 2016)", 86.8),
                ("BiMPM (Wang et al., 2017)", 86.9), ("NTI-SLSTM-LSTM (Yu & Munkhdalai, 2017)", 87.3),
                ("re-read LSTM (Sha et al., 2016)", 87.5), ("ESIM (Chen et al., 2016)", 88.0),
                ("ESIM ensemble with syntactic tree-LSTM (Chen et al., 2016)", 88.6),
                ("BiMPM (ensemble) (Wang et al., 2017)", 88.8), ("Human Performance", 87.7),
                ("DIIN", 88.0), ("DIIN (ensemble)", 88.9)],
               own=_DIIN_OWN)
    + _columns("001", "Table 4", "main", [("Quora", "dev", *ACC), ("Quora", "test", *ACC)],
               [("Siamese-CNN", None, 79.60), ("Multi-Perspective CNN", None, 81.38),
                ("Siamese-LSTM", None, 82.58), ("Multi-Perspective-LSTM", None, 83.21),
                ("L.D.C", None, 85.55), ("BiMPM (Wang et al., 2017)", 88.69, 88.17),
                ("pt-DECATT word (Tomar et al., 2017)", 88.44, 87.54),
                ("pt-DECATT char (Tomar et al., 2017)", 88.89, 88.40),
                ("DIIN", 89.44, 89.06), ("DIIN (ensemble)", 90.48, 89.84)],
               own=_DIIN_OWN, note="first six rows copied by the paper from Wang et al. (2017)")
    + _columns("001", "Table 5", "ablation",
               [("MultiNLI", "matched dev", *ACC), ("MultiNLI", "mismatched dev", *ACC)],
               [("DIIN", 79.2, 79.1), ("DIIN - conv structure", 73.2, 73.6),
                ("DIIN - encoding layer", 73.5, 73.2), ("DIIN - self-att and fuse gate", 77.7, 77.3),
                ("DIIN - fuse gate", 73.5, 73.8),
                ("DIIN - fuse gate + addition as skip connection", 77.3, 76.3),
                ("DIIN - dense interaction tensor + similarity matrix", 75.2, 75.5)],
               own=("DIIN", "DIIN - conv structure", "DIIN - encoding layer", "DIIN - self-att and fuse gate",
                    "DIIN - fuse gate", "DIIN - fuse gate + addition as skip connection",
                    "DIIN - dense interaction tensor + similarity matrix"))
)
_DIIN_DIMENSIONS = [("DIIN(448)", "4.36 M", 4.36e6, 88.4, 79.2, 79.1), ("10", "708 K", 708e3, 81.6, 71.7, 71.9),
                    ("30", "765 K", 765e3, 85.2, 75.0, 74.9), ("50", "832 K", 832e3, 86.0, 76.1, 76.7),
                    ("100", "1.05 M", 1.05e6, 86.9, 76.9, 77.1), ("150", "1.34 M", 1.34e6, 87.6, 77.6, 77.4),
                    ("250", "2.14 M", 2.14e6, 88.1, 78.1, 77.7), ("350", "3.23 M", 3.23e6, 88.0, 78.7, 78.2),
                    ("447", "4.55 M", 4.55e6, 88.1, 78.4, 78.0), ("540", "6.08 M", 6.08e6, 88.1, 78.8, 78.7),
                    ("600", "7.20 M", 7.20e6, 88.4, 78.7, 78.2)]
_DIIN += _columns(
    "001", "Table 6", "ablation",
    [("all", "-", "parameters", "count"), ("SNLI", "dev", *ACC),
     ("MultiNLI", "matched dev", *ACC), ("MultiNLI", "mismatched dev", *ACC)],
    [(f"DIIN d={name}" if name.isdigit() else name, params, snli, matched, mismatched)
     for name, _printed, params, snli, matched, mismatched in _DIIN_DIMENSIONS],
    own=[f"DIIN d={row[0]}" if row[0].isdigit() else row[0] for row in _DIIN_DIMENSIONS],
    note="dimensionality study; rows other than DIIN(448) use the paper's highway variant with a "
         "projection (eq. 9-12); the SNLI column stands under the table's 'Dev Accuracy' header",
)

# ---------------------------------------------------------------------------- AttentiveConvNet
_ACNN_OWN = ("AttentiveConvNet light", "AttentiveConvNet advanced",
             "AttentiveConvNet advanced&intra-attention", "AttentiveConvNet ensemble",
             "AttentiveConvNet (advanced+intra-attention)", "w/o tri-hidden", "w/o uni-hidden", "w/o gate")
_ATTENTIVE_CONV = (
    _columns("002", "Table 3", "main", [("SNLI", "test", *ACC)],
             [("bi-CNN", 80.3), ("bi-LSTM (Bowman et al., 2015)", 77.6), ("Tree-CNN (Mou et al., 2016)", 82.1),
              ("NES (Munkhdalai and Yu, 2017)", 84.8), ("W-by-W attention (Rocktäschel)", 83.5),
              ("Self-Attentive (Lin et al., 2017)", 84.4), ("Match-LSTM (Wang & Jiang)", 86.1),
              ("Decompose Attention (Parikh)", 86.8), ("LSTMN (Cheng et al., 2016)", 89.1),
              ("ABCNN (Yin et al., 2016)", 83.7), ("APCNN (dos Santos et al., 2016)", 83.9),
              ("AttentiveConvNet light", 86.3), ("AttentiveConvNet advanced", 87.8),
              ("AttentiveConvNet advanced&intra-attention", 88.4), ("AttentiveConvNet ensemble", 89.3)],
             own=_ACNN_OWN,
             note="bi-CNN is the same Siamese CNN without attention; the ensemble averages five "
                  "advanced&intra-attention copies")
    + _columns("002", "Table 4", "ablation", [("SNLI", "dev", *ACC)],
               [("AttentiveConvNet (advanced+intra-attention)", 88.7), ("w/o tri-hidden", 88.4),
                ("w/o uni-hidden", 87.3), ("w/o gate", 88.2)],
               own=_ACNN_OWN)
)

# ------------------------------------------------------------------------------------------- ESAN
_ESAN = (
    _columns("003", "Table 1", "main", [("SNLI", "test", *ACC)],
             [("ESIM (Chen et al., 2017)", 88.0), ("BiMPM (Wang et al., 2017)", 87.5),
              ("DIIN (Gong et al., 2017)", 88.0), ("CAFE (Tay et al., 2018b)", 88.5),
              ("CSRAN (Tay et al., 2018a)", 88.7), ("ADIN (Liang et al., 2019)", 88.8),
              ("RE2 (Yang et al., 2019)", 88.9), ("OSOA-DFN (Liu et al., 2019a)", 88.8), ("ESAN", 89.0)],
             own=("ESAN",))
    + _columns("003", "Table 2", "main", [("Quora", "test", *ACC)],
               [("BiMPM (Wang et al., 2017)", 88.2), ("DIIN (Gong et al., 2017)", 89.1),
                ("CAFE (Tay et al., 2018b)", 88.7), ("CSRAN (Tay et al., 2018a)", 89.2),
                ("RE2 (Yang et al., 2019)", 89.2), ("OSOA-DFN (Liu et al., 2019a)", 89.0),
                ("Enhanced-RCNN (Peng et al., 2020)", 89.3), ("ESAN", 89.3)],
               own=("ESAN",))
    + _columns("003", "Table 3", "main",
               [("MultiNLI", "matched test", *ACC), ("MultiNLI", "mismatched test", *ACC)],
               [("DIIN (Gong et al., 2017)", 78.8, 77.8), ("CAFE (Tay et al., 2018b)", 78.7, 77.9),
                ("AF-DMN (Duan et al., 2018)", 76.9, 76.3), ("MwAN (Tan et al., 2018)", 78.5, 77.7),
                ("ADIN (Liang et al., 2019)", 78.8, 77.9), ("ESAN", 79.3, 78.4)],
               own=("ESAN",))
    + _columns("003", "Table 4", "ablation", [("Quora", "dev", *ACC)],
               [("ESAN", 89.4), ("ESAN (w/o Feat. Augment.)", 88.1), ("ESAN (w/o Word Feat.)", 89.0),
                ("ESAN (w/o Contextual Feat.)", 88.9), ("ESAN (w/ Simple Augment.)", 89.1)],
               own=("ESAN", "ESAN (w/o Feat. Augment.)", "ESAN (w/o Word Feat.)",
                    "ESAN (w/o Contextual Feat.)", "ESAN (w/ Simple Augment.)"))
    + _columns("003", "Table 5", "efficiency", [("Quora", "-", "parameters", "count")],
               [("ESAN", 3.9e6), ("BERT", 109.5e6)], own=("ESAN",))
    + _rows("003", "Table 5", "efficiency", "Quora", "-", "inference_time", "s/batch",
            [("ESAN", 0.04)], own=("ESAN",),
            note="± 0.01 s (std over 1000 batches of 8 pairs of length 20, MacBook Pro Intel Core i7 CPU)")
    + _rows("003", "Table 5", "efficiency", "Quora", "-", "inference_time", "s/batch",
            [("BERT", 0.88)],
            note="± 0.06 s (std over 1000 batches of 8 pairs of length 20, MacBook Pro Intel Core i7 CPU)")
)

# -------------------------------------------------------------------------------------------- AMN
_AMN_TABLE = [
    ("Lexicalized Classifier (Bowman et al., 2015)", 99.7, 78.2, None),
    ("LSTM RNN encoders (Bowman et al., 2016)", 83.9, 80.6, 3.0e6),
    ("Tree-based CNN encoders (Mou et al., 2015)", 83.3, 82.1, 3.5e6),
    ("SPINN-NP encoders (Bowman et al., 2016)", 89.2, 83.2, 3.7e6),
    ("LSTM with attention (Rocktaschel et al., 2016)", 85.3, 83.5, 252e3),
    ("mLSTM (Wang and Jiang, 2015)", 92.0, 86.1, 1.9e6),
    ("LSTMN with deep attention fusion (Cheng et al., 2016)", 88.5, 86.3, 3.4e6),
    ("Decomposable attention model (Parikh et al., 2016)", 90.5, 86.8, 582e3),
    ("AMNs-G (AMNN with GRU)", 89.1, 87.4, 3.5e6),
    ("AMNs-L (AMNN with LSTM)", 89.3, 87.0, 3.2e6),
]
_AMN = _columns("004", "Table 2", "main",
                [("SNLI", "train", *ACC), ("SNLI", "test", *ACC), ("SNLI", "-", "parameters", "count")],
                _AMN_TABLE, own=("AMNs-G (AMNN with GRU)", "AMNs-L (AMNN with LSTM)"),
                note="parameters are approximate and exclude embeddings, as the paper states")

# -------------------------------------------------------------------------------- DIIN Table 7
TABLE7_MODELS = ("BiLSTM", "Balazs", "Chen", "DIIN")
"""Table 7's model columns (BiLSTM of Williams et al., InnerAtt of Balazs et al. — printed "BaLazs" —,
Gated-Att BiLSTM of Chen et al., DIIN)."""
_TABLE7 = {
    # tag: (frequency %, BiLSTM, Balazs, Chen, DIIN) — matched, then mismatched
    "matched": {
        "CONDITIONAL": (5, 100, 100, 100, 57), "WORD_OVERLAP": (6, 50, 63, 63, 79),
        "NEGATION": (26, 71, 75, 75, 78), "ANTO": (3, 67, 50, 50, 82),
        "LONG_SENTENCE": (20, 50, 75, 67, 81), "TENSE_DIFFERENCE": (10, 64, 68, 86, 84),
        "ACTIVE/PASSIVE": (3, 75, 75, 88, 93), "PARAPHRASE": (5, 78, 83, 78, 88),
        "QUANTITY/TIME_REASONING": (3, 50, 50, 33, 53), "COREF": (6, 83, 83, 83, 77),
        "QUANTIFIER": (25, 64, 59, 74, 74), "MODAL": (29, 66, 65, 75, 84), "BELIEF": (13, 74, 71, 73, 77),
    },
    "mismatched": {
        "CONDITIONAL": (5, 100, 80, 100, 69), "WORD_OVERLAP": (7, 58, 62, 76, 92),
        "NEGATION": (21, 69, 73, 72, 77), "ANTO": (4, 58, 58, 58, 80),
        "LONG_SENTENCE": (20, 55, 67, 67, 73), "TENSE_DIFFERENCE": (4, 71, 71, 89, 78),
        "ACTIVE/PASSIVE": (2, 82, 82, 91, 70), "PARAPHRASE": (7, 81, 89, 89, 100),
        "QUANTITY/TIME_REASONING": (8, 46, 54, 46, 69), "COREF": (6, 80, 70, 80, 79),
        "QUANTIFIER": (28, 70, 68, 77, 78), "MODAL": (25, 67, 67, 76, 75), "BELIEF": (12, 73, 71, 74, 81),
    },
}
_TABLE7_NOTE = ("accuracy on the tagged pairs of the hand-annotated MultiNLI dev subset "
                "(about 1,000 pairs); frequency is the tag's share of that subset")


def _table7_rows() -> list[dict]:
    rows = []
    for split, by_tag in _TABLE7.items():
        for tag, (frequency, *accuracies) in by_tag.items():
            rows += _rows("001", "Table 7", "tags", "MultiNLI", f"{split} dev", f"tag accuracy: {tag}", "%",
                          zip(TABLE7_MODELS, accuracies), own=("DIIN",), note=_TABLE7_NOTE)
            rows += _rows("001", "Table 7", "tags", "MultiNLI", f"{split} dev", f"tag frequency: {tag}", "%",
                          [("all", frequency)], note=_TABLE7_NOTE)
    return rows


def paper_rows() -> list[dict]:
    """Every reported number as a row dict (see the module docstring for the keys)."""
    return [dict(row) for row in (*_GCNN, *_DIIN, *_ATTENTIVE_CONV, *_ESAN, *_AMN, *_table7_rows())]


def paper_table(paper_id: str | None = None, table: str | None = None, kind: str | None = None) -> pd.DataFrame:
    """The rows as a DataFrame, optionally only one paper (id "000".."004" or short name), table or kind."""
    frame = pd.DataFrame(paper_rows(), columns=COLUMNS)
    if paper_id is not None:
        known = {**{pid: pid for pid in PAPERS}, **{info["short"].lower(): pid for pid, info in PAPERS.items()}}
        resolved = known.get(paper_id.lower() if isinstance(paper_id, str) else paper_id)
        if resolved is None:
            choices = ", ".join(f"{key} ({info['short']})" for key, info in PAPERS.items())
            raise KeyError(f"unknown paper {paper_id!r}; known: {choices}")
        frame = frame[frame["paper_id"] == resolved]
    if table is not None:
        frame = frame[frame["table"] == table]
    if kind is not None:
        frame = frame[frame["kind"] == kind]
    return frame.reset_index(drop=True)


def main_results() -> pd.DataFrame:
    return paper_table(kind="main")


GCNN_COMPARISON_MODELS = ("CNN", "GLU", "ESIM (our implement)")
"""GCNN's Tables 1-2 mix results and ablations: these re-implemented models swap out the gated
convolution (CNN, GLU) or the whole encoder (ESIM) under the same setup, so they count as ablations."""


def ablation_results() -> pd.DataFrame:
    """Ablation and dimensionality tables, plus GCNN's variants from its Tables 1-2 (with time per
    epoch): its own rows and the CNN / GLU / ESIM re-implementations trained the same way."""
    frame = paper_table()
    gcnn_variants = (frame["paper_id"] == "000") & (frame["own"] | frame["model"].isin(GCNN_COMPARISON_MODELS))
    return frame[(frame["kind"] == "ablation") | gcnn_variants].reset_index(drop=True)


def diin_table7() -> pd.DataFrame:
    """DIIN's Table 7 in the layout of `breakdown.table7`: tags as rows; "matched frequency",
    "matched <model>", ..., "mismatched <model>" columns, as FRACTIONS (0-1) so the two tables can be
    shown side by side."""
    columns: dict[str, list[float]] = {}
    for split, by_tag in _TABLE7.items():
        columns[f"{split} frequency"] = [by_tag[tag][0] / 100 for tag in TAGS]
        for position, model in enumerate(TABLE7_MODELS, start=1):
            columns[f"{split} {model}"] = [by_tag[tag][position] / 100 for tag in TAGS]
    table = pd.DataFrame(columns, index=pd.Index(TAGS, name="tag"))
    return table


DIIN_TABLE7_CITATION = ("Gong, Luo & Zhang (2018), Natural Language Inference over Interaction Space, ICLR, "
                        "Table 7 (papers/001)")
"""Where `_TABLE7`'s numbers come from (transcribed from the paper's text, two halves of 13 tags)."""


def with_diin_paper_column(table: pd.DataFrame) -> pd.DataFrame:
    """Our Table 7 layout (`breakdown.table7_with_counts`: tags as rows, "<half> …" columns) with the DIIN
    paper's own accuracy on each half set right after that half's columns, as "<half> DIIN (paper)", in % as
    printed (the paper's model trained on the full data, on its hand-annotated subset); "–" for a tag the
    paper's table does not have."""
    paper = diin_table7()
    shown = table.copy()
    for half in ("matched", "mismatched"):
        ours = [column for column in shown.columns if str(column).startswith(f"{half} ")]
        if not ours:
            continue
        values = paper[f"{half} DIIN"].reindex(shown.index)
        column = [("–" if pd.isna(value) else f"{100 * value:.0f}") for value in values]
        shown.insert(list(shown.columns).index(ours[-1]) + 1, f"{half} DIIN (paper)", column)
    return shown


# ------------------------------------------------------------------ which of our splits stands beside which of theirs

OUR_SPLITS: dict[tuple[str, str], str] = {
    ("SNLI", "dev"): "snli_dev", ("SNLI", "test"): "snli_test", ("Quora", "dev"): "quora_dev",
    ("Quora", "test"): "quora_test", ("MultiNLI", "matched dev"): "mnli_dev_matched",
    ("MultiNLI", "mismatched dev"): "mnli_dev_mismatched"}
"""A paper table's (dataset, split) → our split key for that very split, where one exists (MultiNLI's test sets
have no public labels: the papers' MultiNLI test numbers have no counterpart here)."""
STAND_INS: dict[tuple[str, str], str] = {
    ("SNLI", "test"): "snli_dev", ("Quora", "test"): "quora_dev", ("Quora", "dev"): "quora_test",
    ("MultiNLI", "matched test"): "mnli_dev_matched", ("MultiNLI", "mismatched test"): "mnli_dev_mismatched"}
"""Where we lack a paper's split, or trained on it (snli-small trains on SNLI test), the nearest split we may
have: the same dataset's other held-out split, for MultiNLI the dev set of the same genres (matched or mismatched)."""


def our_split(dataset: str, split: str, scored: Collection[str], trained: Collection[str] = ()) -> tuple[str | None, bool]:
    """(our split key to set beside a paper's number on `dataset` `split`, whether it is that very split), choosing
    among the splits a checkpoint was `scored` on and not `trained` on: the same split (`OUR_SPLITS`), else its
    stand-in (`STAND_INS`); (None, False) when we have neither. Never another dataset: a number on XNLI beside a
    MultiNLI one is no comparison."""
    for key, same in ((OUR_SPLITS.get((dataset, split)), True), (STAND_INS.get((dataset, split)), False)):
        if key is not None and key in scored and key not in trained:
            return key, same
    return None, False


# ------------------------------------------------------------------ which of our configs reproduces which row

FAMILY_PAPERS: dict[str, str] = {name: family.paper_id for name, family in FAMILIES.items() if family.paper_id}
"""Model name → the paper (id in paper_tables.PAPERS) whose tables its configs reproduce (declared in
`models.families`)."""

PAPER_DATASETS: dict[str, str] = {"snli": "SNLI", "mnli": "MultiNLI", "quora": "Quora"}
"""A protocol's dataset (the part of its name before the first `-`: snli-small → snli) → the dataset
name the paper tables use. Our number is only set beside paper rows of the same dataset."""


def paper_dataset(protocol: str) -> str | None:
    """The paper tables' name of the dataset a protocol trains on (snli-small → SNLI), or None."""
    return PAPER_DATASETS.get(protocol.split("-")[0])


@dataclass(frozen=True)
class PaperReference:
    """One accuracy a paper reports (on its full dataset) for the row a config reproduces."""

    accuracy: float
    """In %."""
    paper: str
    table: str
    row: str
    dataset: str
    split: str

    @property
    def where(self) -> str:
        """'DIIN Table 3 · SNLI test'."""
        return f"{self.paper} {self.table} · {self.dataset} {self.split}"


@lru_cache(maxsize=None)
def paper_reference(config_name: str, protocol: str) -> PaperReference | None:
    """The paper's accuracy for the row `config_name` reproduces, on the dataset `protocol` trains on:
    a dev split when the paper reports one (our numbers are dev accuracies), else its first test split
    (MultiNLI: matched). None when the config has no paper row or the paper reports none on that dataset
    (GCNN has no SNLI row): a number on another dataset is no reference. Plain rows, not a DataFrame, and
    remembered: Home asks once per checkpoint on every visit."""
    rows = PAPER_ROWS.get(config_name)
    dataset = paper_dataset(protocol)
    paper_id = FAMILY_PAPERS.get(config_name.split("-")[0])
    if not rows or dataset is None or paper_id is None:
        return None
    candidates = [row for row in paper_rows() if row["paper_id"] == paper_id and row["model"] in rows
                  and row["dataset"] == dataset and row["metric"] == "accuracy" and row["split"] != "train"]
    if not candidates:
        return None
    chosen = min(candidates, key=lambda row: (0 if "dev" in row["split"] else 1, "mismatched" in row["split"]))
    return PaperReference(float(chosen["value"]), PAPERS[paper_id]["short"], str(chosen["table"]), str(chosen["model"]),
                          dataset, str(chosen["split"]))

PAPER_ROWS: dict[str, tuple[str, ...]] = {
    "gcnn": ("GCNN",),
    "gcnn-cnn": ("CNN",),
    "gcnn-glu": ("GLU",),
    "gcnn-char": ("GCNN (char)",),
    "gcnn-pos": ("GCNN (char+POS)",),
    "gcnn-no_forget_gate": ("GCNN - forget gate",),
    "gcnn-no_output_gate": ("GCNN - output gate",),
    "diin": ("DIIN",),
    "diin-no_conv": ("DIIN - conv structure",),
    "diin-no_encoding": ("DIIN - encoding layer",),
    "diin-no_self_attention": ("DIIN - self-att and fuse gate",),
    "diin-no_fuse_gate": ("DIIN - fuse gate",),
    "diin-addition_fuse": ("DIIN - fuse gate + addition as skip connection",),
    "diin-similarity": ("DIIN - dense interaction tensor + similarity matrix",),
    "attentive_conv": ("AttentiveConvNet advanced",),
    "attentive_conv-light": ("AttentiveConvNet light",),
    "attentive_conv-advanced_intra": ("AttentiveConvNet advanced&intra-attention",
                                      "AttentiveConvNet (advanced+intra-attention)"),
    "attentive_conv-no_tri": ("w/o tri-hidden",),
    "attentive_conv-no_uni": ("w/o uni-hidden",),
    "attentive_conv-no_gate": ("w/o gate",),
    "esan": ("ESAN",),
    "esan-no_augmentation": ("ESAN (w/o Feat. Augment.)",),
    "esan-no_word_features": ("ESAN (w/o Word Feat.)",),
    "esan-no_contextual_features": ("ESAN (w/o Contextual Feat.)",),
    "esan-simple_augmentation": ("ESAN (w/ Simple Augment.)",),
    "amn": ("AMNs-G (AMNN with GRU)",),
    "amn-lstm": ("AMNs-L (AMNN with LSTM)",),
}
"""Config name → the rows of its paper's tables that it reproduces (configs with no paper row, such as
esan-3_layers or amn-softmax, are our own variants and are absent)."""

"""The papers' reported numbers: structure, spot checks, and every value found in the paper text."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from nlivis.analysis.paper_tables import (COLUMNS, PAPERS, SOURCE_NOTE, ablation_results, diin_table7,
                                          main_results, paper_rows, paper_table)
from nlivis.analysis.tags import TAGS

PAPERS_DIR = Path(__file__).resolve().parents[2] / "shared" / "papers"


def _value(frame, **where):
    selected = frame
    for key, wanted in where.items():
        selected = selected[selected[key] == wanted]
    assert len(selected) == 1, where
    return selected["value"].iloc[0]


def test_every_row_complete_and_marked_as_reported():
    rows = paper_rows()
    assert rows and all(list(row) == COLUMNS for row in rows)
    assert all(row["note"].startswith(SOURCE_NOTE) for row in rows)
    assert {row["paper_id"] for row in rows} == set(PAPERS)


def test_spot_checks():
    frame = paper_table()
    assert _value(frame, paper="GCNN", table="Table 2", model="GCNN (char+POS)", metric="accuracy") == 89.35
    assert _value(frame, paper="GCNN", table="Table 1", model="ESIM (our implement)",
                  metric="time_per_epoch") == 9610
    assert _value(frame, paper="DIIN", table="Table 5", model="DIIN - fuse gate",
                  split="mismatched dev") == 73.8
    assert _value(frame, paper="DIIN", table="Table 6", model="DIIN d=350", dataset="SNLI") == 88.0
    assert _value(frame, paper="AttentiveConvNet", table="Table 4", model="w/o uni-hidden") == 87.3
    assert _value(frame, paper="ESAN", table="Table 5", model="BERT", metric="inference_time") == 0.88
    assert _value(frame, paper="AMN", model="AMNs-G (AMNN with GRU)", split="test") == 87.4


def test_filters_and_tables():
    assert set(paper_table("esan")["paper_id"]) == {"003"}
    with pytest.raises(KeyError, match="unknown paper"):
        paper_table("bert")
    assert set(main_results()["kind"]) == {"main"}
    ablations = ablation_results()
    assert "GCNN - forget gate" in set(ablations["model"]) and "CNN" in set(ablations["model"])
    assert "BiMPM [12]" not in set(ablations["model"])


def test_diin_table7_layout_and_values():
    table = diin_table7()
    assert list(table.index) == list(TAGS)
    assert table.loc["ANTO", "matched DIIN"] == pytest.approx(0.82)
    assert table.loc["PARAPHRASE", "mismatched DIIN"] == pytest.approx(1.0)
    assert table.loc["NEGATION", "matched frequency"] == pytest.approx(0.26)
    assert table.loc["CONDITIONAL", "mismatched Balazs"] == pytest.approx(0.80)


def _printed_forms(value: float) -> list[str]:
    return [f"{value:.2f}", f"{value:.1f}", f"{value:g}"]


def _row_key(row: dict) -> str:
    """A word that the paper prints on the same line as the row's number."""
    if row["metric"].startswith("tag"):
        return row["metric"].split(": ")[1].replace("_", " ")
    model = row["model"]
    for prefix in ("DIIN d=", "AttentiveConvNet ", "ESAN ("):
        if model.startswith(prefix) and model != "AttentiveConvNet (advanced+intra-attention)":
            model = model[len(prefix):]
    key = re.split(r"[ (]", model)[0]
    return {"BiMPM": "BiMPPM"}.get(key, key) if row["table"] == "Table 4" and row["paper"] == "DIIN" else key


@pytest.mark.skipif(not PAPERS_DIR.is_dir(), reason=f"paper texts not found at {PAPERS_DIR}")
def test_every_number_is_printed_on_its_row_in_the_paper():
    lines = {pid: next(PAPERS_DIR.glob(f"{pid}_*.txt")).read_text(encoding="utf-8").splitlines()
             for pid in PAPERS}
    for row in paper_rows():
        if row["metric"] == "parameters":
            continue
        key = _row_key(row).lower()
        patterns = [re.compile(rf"(?<![\d.]){re.escape(form)}(?!\d)") for form in _printed_forms(row["value"])]
        assert any(key in line.lower() and any(p.search(line) for p in patterns)
                   for line in lines[row["paper_id"]]), row


def test_paper_reference_is_the_papers_number_on_our_protocols_dataset():
    from nlivis.analysis.paper_tables import paper_reference

    diin = paper_reference("diin", "snli-small")
    assert (diin.accuracy, diin.where) == (88.0, "DIIN Table 3 · SNLI test")
    assert paper_reference("diin", "quora-small").split == "dev"  # a dev split first: ours are dev accuracies
    assert paper_reference("gcnn", "mnli-small").where == "GCNN Table 1 · MultiNLI matched test"
    assert paper_reference("gcnn", "snli-small") is None  # GCNN reports no SNLI number: none is set beside ours
    assert paper_reference("amn-softmax", "snli-small") is None  # our own variant: no paper row


def test_our_table7_gets_the_diin_papers_column_after_each_half():
    import pandas as pd

    from nlivis.analysis.paper_tables import with_diin_paper_column

    ours = pd.DataFrame({"matched pairs": [12, 0], "matched diin-mnli-small": ["50.0 [25.4, 74.6]", ""],
                         "mismatched pairs": [9, 3], "mismatched diin-mnli-small": ["44.4 [18.9, 73.3]", "0.0"]},
                        index=pd.Index(["NEGATION", "NOT_A_TABLE7_TAG"], name="tag"))
    shown = with_diin_paper_column(ours)
    assert list(shown.columns) == ["matched pairs", "matched diin-mnli-small", "matched DIIN (paper)", "mismatched pairs",
                                   "mismatched diin-mnli-small", "mismatched DIIN (paper)"]
    assert shown.loc["NEGATION", "matched DIIN (paper)"] == "78" and shown.loc["NEGATION", "mismatched DIIN (paper)"] == "77"
    assert shown.loc["NOT_A_TABLE7_TAG", "matched DIIN (paper)"] == "–"


def test_home_sets_our_number_beside_the_papers_only_on_the_same_split():
    pytest.importorskip("streamlit")
    from nlivis.app.components.home import MNLI_COLUMN, PAPER_COLUMN, SAME_SPLIT_COLUMN, checkpoint_row
    from nlivis.store.checkpoints import read_checkpoint_info

    shipped = Path(__file__).resolve().parents[1] / "checkpoints"
    if not (shipped / "diin-mnli-small" / "metrics.json").is_file():
        pytest.skip("the shipped checkpoints are not in checkpoints/")
    mnli = checkpoint_row(read_checkpoint_info(shipped / "diin-mnli-small"))
    assert mnli[PAPER_COLUMN] == "79.2% (DIIN Table 5 · MultiNLI matched dev)"
    assert mnli[SAME_SPLIT_COLUMN] == mnli[MNLI_COLUMN].split(" / ")[0], "ours on MultiNLI matched dev beside it"
    snli = checkpoint_row(read_checkpoint_info(shipped / "diin-snli-small"))
    assert snli[PAPER_COLUMN] == "88.0% (DIIN Table 3 · SNLI test)" and snli[MNLI_COLUMN] == "—"
    assert snli[SAME_SPLIT_COLUMN] == "splits differ", "snli-small trains on SNLI test: ours there is no test"

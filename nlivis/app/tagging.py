"""Annotation tags for the Error analysis page: the published gold tags of a local split (the RepEval 2017
human annotation of MultiNLI dev matched / mismatched), cached in memory; automatic tags come from
`loading.tagged_sample`. TaxiNLI's categories, genres and reference models (its file under the data root)
for the Error analysis page's TaxiNLI section and the Pair explorer's pair card."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import streamlit as st

from nlivis.app.loading import local_splits
from nlivis.app.paths import data_root


@st.cache_resource(max_entries=4, show_spinner=False)
def _gold_tags_cached(path: str, stamp: float) -> dict[str, frozenset[str]]:
    from nlivis.analysis.tags import read_tag_file

    return read_tag_file(path)


def gold_tags(key: str) -> tuple[dict[str, frozenset[str]], str | None, str | None]:
    """(pair id → gold tags, the file they come from, an error) for local split `key`; ({}, None, None)
    when the split has no published gold tags in the data folder."""
    from nlivis.analysis.tags import TagFileError
    from nlivis.data.protocols import gold_tag_file

    ref, root = local_splits().get(key), data_root()
    if ref is None or root is None:
        return {}, None, None
    path = gold_tag_file(ref, root)
    if path is None:
        return {}, None, None
    try:
        return _gold_tags_cached(str(path), Path(path).stat().st_mtime), str(path), None
    except (OSError, TagFileError) as error:
        return {}, str(path), str(error)


def matching_split(key: str) -> str | None:
    """The other half of a matched / mismatched pair of splits (DIIN's Table 7 shows both side by side)."""
    for matched, mismatched in (("mnli_dev_matched", "mnli_dev_mismatched"),
                                ("mnli_hard_matched_test", "mnli_hard_mismatched_test")):
        if key == matched:
            return mismatched
        if key == mismatched:
            return matched
    return None


def split_half(key: str) -> str:
    """"matched" / "mismatched" for a MultiNLI dev split key (the Table 7 column group)."""
    return "mismatched" if "mismatched" in key else "matched"



@st.cache_resource(max_entries=2, show_spinner=False)
def _taxinli_cached(path: str, stamp: float) -> Any:
    from nlivis.data.taxonomies import read_taxinli

    return read_taxinli(path)


def taxinli_file() -> tuple[Any | None, str | None]:
    """(the TaxiNLI file under the data root, None), (None, why it cannot be read), or (None, None) when absent."""
    from nlivis.data.records import DataFormatError
    from nlivis.data.taxonomies import find_taxinli_file

    path = find_taxinli_file(data_root())
    if path is None:
        return None, None
    try:
        return _taxinli_cached(str(path), path.stat().st_mtime), None
    except (OSError, DataFormatError) as error:
        return None, str(error)


def pair_taxonomy(pair: dict[str, Any]) -> dict | None:
    """TaxiNLI's categories and reference labels for the current pair (`breakdown.pair_taxonomy`), or None."""
    from nlivis.analysis.breakdown import pair_taxonomy as find

    taxonomy, _ = taxinli_file()
    if taxonomy is None:
        return None
    return find(taxonomy.rows, pair.get("id"), pair["premise"], pair["hypothesis"])


def render_taxinli_breakdown(models: Sequence[Any], split: str, predictions: dict[str, list]) -> None:
    """The Error analysis page's TaxiNLI section for a MultiNLI dev split: accuracy per category (and per
    genre) for the loaded models and, on the same pairs, the file's full-data reference models, matched and
    mismatched side by side where both halves have predictions; nothing when the file or the split's pairs
    are absent."""
    from nlivis.analysis.breakdown import taxonomy_long, table7_with_counts
    from nlivis.app import loading, widgets
    from nlivis.data.taxonomies import join_to_pairs
    from nlivis.viz import accuracy_by_tag_bars

    taxonomy, error = taxinli_file()
    if error:
        st.error(error)
    if taxonomy is None:
        return
    halves: dict[str, tuple[dict[str, list], dict]] = {}
    other = matching_split(split)
    for key in (split, other):
        if key is None:
            continue
        pairs, _ = loading.read_local_split(key)
        rows = join_to_pairs(taxonomy.rows, pairs) if pairs else {}
        found = predictions if key == split else {
            m.label: loading.model_predictions(m, key)[0] for m in models
            if m.label in predictions and key in loading.prediction_splits(m)}
        if rows and found and all(p is not None for p in found.values()):
            halves[split_half(key)] = (found, rows)
    if split_half(split) not in halves:
        return
    st.subheader("Accuracy by TaxiNLI category")
    st.caption(f"TaxiNLI (Joshi et al., 2020; `{taxonomy.path}`): 15 reasoning categories annotated by hand on "
               "MultiNLI dev pairs; beside ours, three models the release scored, trained on the **full** MultiNLI "
               "training set, on the same pairs. Accuracy in % [95% interval]; a pair with several categories counts "
               "in each." + "".join(f" {note}." for note in taxonomy.notes))
    ordered = {half: halves[half] for half in ("matched", "mismatched") if half in halves}
    long = taxonomy_long(ordered)
    current = long[long["split"] == split_half(split)]
    widgets.show_figure(accuracy_by_tag_bars(current, group="model", title=f"accuracy by TaxiNLI category on {split} "
                                             "(95% intervals; black tick: majority label)"),
                        "errors_taxinli", f"taxinli_{split}")
    st.dataframe(table7_with_counts(long), width="stretch")
    st.markdown("**By genre** (TaxiNLI's genre column: MultiNLI dev matched and mismatched have different genres)")
    st.dataframe(table7_with_counts(taxonomy_long(ordered, by="genre")), width="stretch")

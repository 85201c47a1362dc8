"""Annotation tags for the Error analysis page: the published gold tags of a local split (the RepEval 2017
human annotation of MultiNLI dev matched / mismatched), cached in memory; automatic tags come from
`loading.tagged_sample`."""
from __future__ import annotations

from pathlib import Path

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


"""The Attribution page's work: salience of the current pair per loaded model, and faithfulness, agreement and
plausibility over a sample of a split (nlivis.analysis.attribution / .faithfulness, cached for the session)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st

from nlivis.app.loading import LoadedModel


@st.cache_resource(max_entries=64, show_spinner=False)
def _explained(path: str, _checkpoint: Any, premise: str, hypothesis: str, methods: tuple[str, ...],
               target: str | None) -> dict[str, Any]:
    from nlivis.analysis.attribution import analysed_text_pair, explain_pair

    labels = list(_checkpoint.labels)
    item = analysed_text_pair(premise, hypothesis)
    return explain_pair(_checkpoint.model, _checkpoint.featurizer, item, methods,
                        target=None if target is None else labels.index(target))


def explain(model: LoadedModel, premise: str, hypothesis: str, methods: Sequence[str],
            target: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """({method: TokenScores}, None), or (None, why the model could not explain the pair). `target` is a
    label name of the model (None: the predicted class)."""
    if target is not None and target not in model.labels:
        return None, f"{model.label} has no class {target!r} (its classes: {', '.join(model.labels)})"
    try:
        return _explained(model.path, model.checkpoint, premise, hypothesis, tuple(methods), target), None
    except ValueError as error:
        return None, str(error)
    except Exception as error:  # one model failing must not take the page down
        return None, f"{model.label} could not explain this pair ({type(error).__name__}: {error})"


def split_faithfulness(model: LoadedModel, items: Sequence[Any], split: str, seed: int, methods: Sequence[str],
                       highlights_file: Path | None, on_method: Callable[[str], None] | None = None) -> dict[str, Any]:
    """`summarize` output (with per-pair distributions) for `items`, every method cached on disk by checkpoint,
    split, sample and method (the same cache as `python -m nlivis faithfulness`)."""
    from nlivis.analysis.faithfulness import hypothesis_tokens_by_id, run_faithfulness, summarize
    from nlivis.data.highlights import highlights_by_pair, read_esnli_highlights

    records: dict[str, list[dict[str, Any]]] = {}
    for method in methods:
        if on_method is not None:
            on_method(method)
        run = run_faithfulness(model.checkpoint, items, split, sample=None, seed=seed, methods=[method], progress=False)
        records.update(run.records)
    highlights = None
    if highlights_file is not None:
        highlights = highlights_by_pair([item.pair for item in items], read_esnli_highlights(highlights_file)) or None
    return summarize(records, highlights, hypothesis_tokens_by_id(items, model.checkpoint.featurizer), seed=seed,
                     keep_distributions=True)


def agreement_frame(summaries: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """One row per (model, salience method, attention layer, pair) with its Kendall τ (undefined ones left out)."""
    rows = []
    for model, summary in summaries.items():
        for method, entry in summary["methods"].items():
            for layer, taus in entry.get("agreement_taus", {}).items():
                rows += [{"model": model, "method": method, "layer": layer, "tau": tau} for tau in taus if tau == tau]
    return pd.DataFrame(rows, columns=["model", "method", "layer", "tau"])

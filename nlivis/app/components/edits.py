"""The Pair explorer's Edits tab: every proposed edit of the current pair (`analysis.edits`), one row each, with
every loaded model's prediction before → after, flips and missed expectations marked; a form for one's own edit;
and a clicked edit pinned beside the original — both alignments, their difference on the tokens they share (the
changed token marked) and an attribution of both, with how much of it fell on the changed words. The pinned
edit (`pin=<row>` or `pin=own`), the own edit's text, the model, alignment and method are view state."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from nlivis.analysis.method_names import METHODS
from nlivis.analysis.edit_compare import alignment_difference, changed_share, marked, match_tokens
from nlivis.app import cache, state
from nlivis.app.cache import analyses as cached_analyses
from nlivis.app.components import controls, figures
from nlivis.app.components.frame import caption_note, protocol_notes
from nlivis.app.text import md, short_names
from nlivis.models.trace import Alignment
from nlivis.viz.heatmaps import alignment_matrix
from nlivis.viz.vega.attribution import token_strips
from nlivis.viz.vega.heatmaps import alignment_heatmap, difference_heatmap
from nlivis.workflows.reading import PairReading

PAGE = "explorer"
OWN = "own"
SHORT_LABELS = {"entailment": "E", "neutral": "N", "contradiction": "C", "duplicate": "D", "not_duplicate": "ND"}
"""How a label is written in the edits table's cells (the legend under the table spells them out)."""
FLIP_MARK, MISS_MARK, MEET_MARK = "⇄", "✗", "✓"
MISSED_BACKGROUND, FLIPPED_BACKGROUND = "background-color: #fde0dc", "background-color: #fff4cc"
SALIENCE = [m for m in METHODS if m != "attention"]
DEFAULT_METHOD = "grad_x_input"
"""One backward pass per pair: the pinned view stays quick; integrated gradients are a choice away."""


def short(label: str) -> str:
    return SHORT_LABELS.get(label, label)


def expectation_text(edit: Any) -> str:
    """'label contradiction', 'invariant', 'P(entailment) falls' …, or 'none'."""
    if edit.expectation == "label":
        return f"label {edit.expected}"
    if edit.expectation == "invariant":
        return "prediction unchanged"
    if edit.expectation == "direction":
        verb = {"fall": "falls", "not_rise": "does not rise", "not_fall": "does not fall"}.get(edit.direction, edit.direction)
        return f"P({edit.expected}) {verb}"
    return "none"


def change_text(edit: Any) -> str:
    change = edit.change
    if edit.kind == "swap":
        return "premise ↔ hypothesis"
    words = f"{change.word or '∅'} → {change.replacement or '∅'}"
    return f"{words} ({change.relation})" if change.relation else words


def _cell(labels: Sequence[str], before: np.ndarray, outcome: Any, name: str) -> str:
    after = labels[int(np.argmax(outcome.probabilities[name]))]
    text = f"{short(labels[int(np.argmax(before))])} → {short(after)}"
    if outcome.flipped[name]:
        text += f" {FLIP_MARK}"
    met = outcome.meets_expectation[name]
    if met is not None:
        text += f" {MEET_MARK if met else MISS_MARK}"
    return text


def edits_frame(run: Any, own: Any | None = None) -> pd.DataFrame:
    """One row per edit (the own edit first when there is one): what changed, the edited sentence, the
    expectation, one before → after cell per model, and the counts of flips and missed expectations."""
    rows = []
    outcomes = ([("own", own.outcomes[0], own)] if own is not None and own.outcomes else []) + \
               [(str(i), outcome, run) for i, outcome in enumerate(run.outcomes)]
    for key, outcome, source in outcomes:
        edit = outcome.edit
        edited = {"premise": edit.premise, "hypothesis": edit.hypothesis}
        row = {"edit": key, "kind": edit.kind, "side": edit.side, "change": change_text(edit),
               "expected": expectation_text(edit)}
        for name in source.names:
            row[name] = _cell(source.labels, source.original[name], outcome, name)
        row["flips"] = sum(outcome.flipped.values())
        row["missed"] = sum(1 for met in outcome.meets_expectation.values() if met is False)
        row["edited pair"] = (edited[edit.side] if edit.side in edited
                              else f"P: {edit.premise} · H: {edit.hypothesis}")
        rows.append(row)
    return pd.DataFrame(rows)


def _styled(frame: pd.DataFrame, names: Sequence[str]) -> Any:
    def colour(value: Any) -> str:
        text = str(value)
        if MISS_MARK in text:
            return MISSED_BACKGROUND
        return FLIPPED_BACKGROUND if FLIP_MARK in text else ""

    return frame.style.map(colour, subset=[n for n in names if n in frame.columns])


def own_edit_form(premise: str, hypothesis: str) -> tuple[str, str] | None:
    """The form for one's own edit of the pair (kept in the view as `own_premise` / `own_hypothesis`); the edited
    pair when it differs from the original and both sentences have words, else None."""
    with st.expander("Your own edit of this pair", expanded=bool(state.wanted(PAGE, "own_premise")
                                                                       or state.wanted(PAGE, "own_hypothesis"))):
        with st.form(f"{PAGE}_own_edit_form", border=False):
            left, right = st.columns(2)
            own_premise = controls.text(PAGE, "own_premise", "Edited premise (empty: unchanged)", where=left)
            own_hypothesis = controls.text(PAGE, "own_hypothesis", "Edited hypothesis (empty: unchanged)", where=right)
            st.form_submit_button("Add my edit", key=f"{PAGE}_own_edit_add")
    edited = (state.clean_sentence(own_premise)[0] or premise, state.clean_sentence(own_hypothesis)[0] or hypothesis)
    return None if edited == (premise, hypothesis) else edited


def section(models: Sequence[cache.Model], shown: cache.ShownPair, premise: str, hypothesis: str) -> None:
    """The whole tab."""
    st.caption("Each row is a minimal edit of this pair from WordNet (first senses), nlivis's lexicons and spaCy's "
               "parse, with what logic expects of it given the pair's gold label and the context's polarity: a label, "
               "an unchanged prediction, a direction of one probability, or nothing. A cell reads *original → edited "
               f"prediction*; {FLIP_MARK} the prediction flipped, {MEET_MARK} / {MISS_MARK} the expectation met / missed "
               "(red). E, N, C: entailment, neutral, contradiction; D, ND: duplicate, not duplicate. Click a row to pin "
               "that edit beside the original.")
    protocol_notes(models)
    pin = _pin_for(premise, hypothesis)
    own_text = own_edit_form(premise, hypothesis)
    with st.spinner("proposing edits and predicting them with every model …"):
        run, error = cached_analyses.edit_run(models, premise, hypothesis, shown.gold)
    if run is None:
        st.error(md(error))
        return
    own = None
    if own_text is not None:
        own, own_error = cached_analyses.edit_run(models, premise, hypothesis, shown.gold, own_text)
        if own is None:
            st.error(f"Your edit: {md(own_error)}")
    if not run.outcomes and own is None:
        st.info("No edit applies to this pair (no substitutable word with a dominant WordNet sense, no verb to negate, "
                "no quantifier, number or name). Type your own edit above.")
        return
    frame = edits_frame(run, own)
    flips = int((frame["flips"] > 0).sum())
    missed = int((frame["missed"] > 0).sum())
    st.markdown(f"**{len(frame)} edit(s)** · {flips} flip at least one model · {missed} miss an expectation for at "
                f"least one model" + (f" · gold label **{md(shown.gold)}**" if shown.gold else " · no gold label: only "
                                      "invariances and directions are expected"))
    columns = {"edit": st.column_config.TextColumn("edit", width=40), "kind": st.column_config.TextColumn(width=90),
               "side": st.column_config.TextColumn(width=75), "change": st.column_config.TextColumn(width=190),
               "expected": st.column_config.TextColumn(width=170),
               "flips": st.column_config.NumberColumn(width=40), "missed": st.column_config.NumberColumn(width=50),
               "edited pair": st.column_config.TextColumn("edited sentence", width="large")}
    columns.update({name: st.column_config.TextColumn(label, width=95, help=name)
                    for name, label in short_names(run.names).items()})
    event = st.dataframe(_styled(frame, run.names), key=f"{PAGE}_edits_table", on_select="rerun",
                         selection_mode="single-row", hide_index=True, width="stretch", column_config=columns)
    picked = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    if state.new_event(f"{PAGE}_edits_table", picked) and picked:
        pin = str(frame["edit"].iloc[picked[0]])
        state.remember(PAGE, "pin", pin, "")
    outcome, source = _pinned(pin, run, own)
    if outcome is None:
        if pin:
            st.warning(f"The pinned edit {md(pin)} is not among this pair's edits; click a row to pin one.")
            state.forget(PAGE, "pin")
        else:
            st.caption(":material/touch_app: Click a row to pin that edit beside the original.")
        return
    pinned(models, shown, source, outcome, pin)


_PINNED_FOR = "nlivis_edits_pair"


def _pin_for(premise: str, hypothesis: str) -> str:
    """The pinned edit (`pin`) of this pair: from the URL after a link or Back; cleared, with the own edit, when
    the pair changed since the last run (a typed pair, Previous / Next), since a row number names another edit
    of another pair."""
    from_url = state.forced(PAGE, "pin")
    pin, problem = state.value(PAGE, "pin", "")
    if problem and from_url:
        st.warning(md(problem))
    last = st.session_state.get(_PINNED_FOR)
    st.session_state[_PINNED_FOR] = (premise, hypothesis)
    if not from_url and last is not None and last != (premise, hypothesis):
        pin = ""
        for name in ("own_premise", "own_hypothesis"):
            state.forget(PAGE, name)
            st.session_state[state.widget_key(PAGE, name)] = ""
    state.remember(PAGE, "pin", pin, "")
    return str(pin)


def _pinned(pin: str, run: Any, own: Any | None) -> tuple[Any | None, Any | None]:
    if pin == OWN:
        return (own.outcomes[0], own) if own is not None and own.outcomes else (None, None)
    row = state.url_row(pin)
    if row is not None and row < len(run.outcomes):
        return run.outcomes[row], run
    return None, None


def pinned(models: Sequence[cache.Model], shown: cache.ShownPair, run: Any, outcome: Any, pin: str) -> None:
    """The pinned edit beside the original, for one model at a time."""
    edit = outcome.edit
    title, unpin = st.columns([6, 1], vertical_alignment="center")
    title.subheader(f"Pinned: {'your edit' if pin == OWN else f'edit {pin}'} · {edit.kind} · {md(change_text(edit))}")
    if unpin.button("Unpin", key=f"{PAGE}_unpin", icon=":material/close:"):
        state.forget(PAGE, "pin")
        st.rerun()
    st.markdown(f"**Expected:** {md(expectation_text(edit))} — {md(edit.reason)}")
    original, edited = st.columns(2)
    original.markdown(f"**Original** · P: {md(run.premise)}  \nH: {md(run.hypothesis)}")
    edited.markdown(f"**Edited** · P: {md(edit.premise)}  \nH: {md(edit.hypothesis)}")
    rows = []
    for name in run.names:
        before, after = run.original[name], outcome.probabilities[name]
        row = {"model": name, "original": run.labels[int(np.argmax(before))],
               "edited": run.labels[int(np.argmax(after))], "flipped": "yes" if outcome.flipped[name] else "",
               "expectation": {True: "met", False: "missed", None: "—"}[outcome.meets_expectation[name]]}
        row.update({f"Δ P({label})": round(float(after[i] - before[i]), 3) for i, label in enumerate(run.labels)})
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    names = [m.name for m in models]
    left, middle, right = st.columns(3)
    chosen = controls.select(PAGE, "pin_model", "Model to look inside", names, where=left)
    model = next(m for m in models if m.name == chosen)
    before, error = cache.read_pair(model, run.premise, run.hypothesis)
    after, after_error = cache.read_pair(model, edit.premise, edit.hypothesis)
    if before is None or after is None:
        st.error(md(error or after_error))
        return
    premise_match = match_tokens(before.premise_tokens, after.premise_tokens)
    hypothesis_match = match_tokens(before.hypothesis_tokens, after.hypothesis_tokens)
    entries = [name for name, entry in before.trace.of_type(Alignment).items() if name in after.trace]
    method = controls.select(PAGE, "pin_method", "Attribution", SALIENCE, DEFAULT_METHOD, where=right)
    if edit.kind == "swap":
        caption_note("A premise ↔ hypothesis swap exchanges the sentences: the alignments are drawn side by side, but "
                     "no difference is taken (no token keeps its sentence).")
    if not entries:
        caption_note(f"{md(chosen)} traces no alignment; its attribution is below.")
    else:
        default = max(entries, key=lambda n: before.trace[n].layer)
        entry_name = controls.select(PAGE, "pin_alignment", "Alignment", entries, default, where=middle,
                                     format_func=lambda n: f"{n} (layer {before.trace[n].layer}, {before.trace[n].direction})")
        alignments(model.name, entry_name, before, after, premise_match, hypothesis_match, edit.kind != "swap")
    attributions(model, method, run, edit)


def alignments(name: str, entry_name: str, before: PairReading, after: PairReading,
               premise_match: Any, hypothesis_match: Any, difference: bool) -> None:
    old_entry, new_entry = before.trace[entry_name], after.trace[entry_name]
    old_tokens = (marked(before.premise_tokens, premise_match.changed_original),
                  marked(before.hypothesis_tokens, hypothesis_match.changed_original))
    new_tokens = (marked(after.premise_tokens, premise_match.changed_edited),
                  marked(after.hypothesis_tokens, hypothesis_match.changed_edited))
    left, right = st.columns(2)
    figures.show(alignment_heatmap(old_entry, 0, *old_tokens, label=f"{entry_name} · original"),
                 "edits_align_original", f"{name}_{entry_name}_original", where=left, columns=2)
    figures.show(alignment_heatmap(new_entry, 0, *new_tokens, label=f"{entry_name} · edited"),
                 "edits_align_edited", f"{name}_{entry_name}_edited", where=right, columns=2)
    if not difference:
        return
    old_values, old_rows, old_cols = alignment_matrix(old_entry, 0, before.premise_tokens, before.hypothesis_tokens)
    new_values, new_rows, new_cols = alignment_matrix(new_entry, 0, after.premise_tokens, after.hypothesis_tokens)
    diff = alignment_difference(old_values, old_rows, old_cols, new_values, new_rows, new_cols)
    figures.show(difference_heatmap(diff.values, diff.row_labels, diff.col_labels, diff.changed_rows, diff.changed_cols,
                                    old_entry.rows, old_entry.cols, f"{entry_name} · edited − original"),
                 "edits_difference", f"{name}_{entry_name}_difference")
    note = ("Red: the edited pair puts more weight there, blue: less; the changed token's row and column are outlined "
            "(old→new on the axis).")
    if old_entry.kind != "similarity":
        note += " Rows sum to 1 in both pairs, so weight that leaves one cell of a row goes to others of the same row."
    if diff.left_out:
        note += f" Left out (no counterpart in the other pair): {md(', '.join(diff.left_out))}."
    caption_note(note)


def attributions(model: cache.Model, method: str, run: Any, edit: Any) -> None:
    """The attribution of each pair's own prediction, strips one above the other, with the share of |score| that
    fell on the changed words (matched on the attribution's own tokens)."""
    found = {}
    for which, premise, hypothesis in (("original", run.premise, run.hypothesis),
                                       ("edited", edit.premise, edit.hypothesis)):
        with st.spinner(f"{model.name}: {method} of the {which} pair …"):
            scores, error = cached_analyses.explain(model, premise, hypothesis, [method])
        if error:
            st.error(f"{md(model.name)}: {md(error)}")
            return
        found[which] = scores[method]
    premise_match = match_tokens(found["original"].premise_tokens, found["edited"].premise_tokens)
    hypothesis_match = match_tokens(found["original"].hypothesis_tokens, found["edited"].hypothesis_tokens)
    changed = {"original": (premise_match.changed_original, hypothesis_match.changed_original),
               "edited": (premise_match.changed_edited, hypothesis_match.changed_edited)}
    shares = []
    for which, scores in found.items():
        share = changed_share(scores.premise_scores, scores.hypothesis_scores, *changed[which])
        text = (f"{100 * share.share:.0f}% of |score| on the changed word(s), best rank {share.best_rank} of {share.tokens}"
                if share.share is not None else "no changed word in this pair (an insertion, a removal or a swap)")
        shares.append(f"{which}: {text}")
        figures.show(token_strips({method: (scores.premise_scores, scores.hypothesis_scores)},
                                  marked(scores.premise_tokens, changed[which][0]),
                                  marked(scores.hypothesis_tokens, changed[which][1]),
                                  f"{which} pair · {method} for its prediction {model.labels[scores.target]} · {text}"),
                     f"edits_attribution_{which}", f"{model.name}_{method}_{which}")
    caption_note("Did the model look at the word that changed? Each strip explains that pair's own predicted class; "
                 f"changed tokens are in [brackets]. {md('; '.join(shares))}.")

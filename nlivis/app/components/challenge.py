"""A challenge file by category: accuracy per category of a file the user names (a path, an upload kept under
the cache root by content hash, or an earlier named evaluation) in any format `nlivis.data.challenge` reads —
ANLI's annotated CSV, ConjNLI, HANS, a stress test — grouped by a field. Each model's predictions come from its
named evaluation of exactly that data (as `evaluate --file` writes them), or are computed on request and kept the
same way; they are never mixed with the checkpoint's recorded splits. Models side by side with Wilson 95%
intervals; a category's pairs open in the Pair explorer, which steps through them. A label-scheme control
(`challenge_scheme` in the URL) scores the file 3-way or entailment vs non-entailment, as `evaluate
--label-scheme` does; 3-way named evaluations are folded for 2-way rather than run again."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.challenge import OVERALL_GROUP, accuracy_by_group
from nlivis.app import cache, state
from nlivis.app.cache import challenge as cached_challenge
from nlivis.app.components import controls, figures, pair_list
from nlivis.app.text import code, md
from nlivis.data.challenge import DEFAULT_LABEL_SCHEME, LABEL_SCHEMES, upload_types
from nlivis.store.uploads import keep_upload
from nlivis.viz.vega.errors import accuracy_dots

PREFERRED_GROUPS = ("tags", "heuristic", "subcase", "file")
"""The group-by field offered first when the file has it (ANLI, HANS, stress tests)."""
MODES = ("an earlier named evaluation", "a path on this machine", "upload")
SCHEME_NAMES = {"3way": "the file's own labels", "2way": "entailment vs non-entailment"}
"""How the label-scheme control names `LABEL_SCHEMES` (the URL keeps the scheme itself, `challenge_scheme=2way`)."""


def chosen_files(page: str, models: Sequence[cache.Model]) -> list[Path]:
    earlier = cached_challenge.earlier_evaluations(models)
    modes = [m for m in MODES if m != MODES[0] or earlier]
    # the default mode changes once a file has been evaluated (earlier evaluations come first)
    mode = controls.radio(page, "challenge_mode", "Challenge file", modes, modes[0], always_in_url=True)
    if mode == MODES[0]:
        chosen = controls.select(page, "challenge_earlier", "Named evaluation", list(earlier))
        return earlier[chosen]
    if mode == "upload":
        uploads = st.file_uploader("Challenge file(s) — several for one file per category (stress tests)",
                                   type=upload_types(), accept_multiple_files=True,
                                   key=f"{page}_challenge_upload")
        return [keep_upload(upload.name, upload.getvalue()) for upload in uploads or []]
    text = controls.text(page, "challenge_path", "Path(s), separated by ';' (e.g. "
                         "../shared/data/anli_annotated/ANLI_analysis_r1_dev.csv)")
    paths = [Path(part.strip()).expanduser() for part in text.split(";") if part.strip()]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        st.error(f"No such file: {md(', '.join(missing))}")
        return []
    return paths


def side_by_side(table: pd.DataFrame) -> pd.DataFrame:
    """One line per category: its pairs, the majority baseline and each model's accuracy with its interval, in %
    (the layout of the Table 7 view, so the same numbers read the same on every page)."""
    first = table.drop_duplicates("group").set_index("group")
    wide = pd.DataFrame({"pairs": first["count"].astype("Int64"),
                         "majority (%)": first["majority_accuracy"].map(lambda v: "" if pd.isna(v) else f"{100 * v:.1f}")})
    for model, rows in table.groupby("model", sort=False):
        rows = rows.set_index("group").reindex(wide.index)
        wide[f"{model} (%)"] = ["" if pd.isna(a) else f"{100 * a:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"
                                for a, lo, hi in zip(rows["accuracy"], rows["ci_low"], rows["ci_high"])]
    return wide.reset_index().rename(columns={"group": "category"})


def section(page: str, models: Sequence[cache.Model]) -> None:
    """The whole section: file, field, accuracy by category side by side, and the pairs behind a number."""
    st.subheader("Challenge set by category")
    st.caption("Accuracy per category of a challenge file (ANLI's annotated CSV, ConjNLI, HANS, the stress tests, or any "
               "file with premise / hypothesis / label columns). Each model's predictions are kept as a named evaluation "
               "in its checkpoint folder, as `python -m nlivis evaluate CHECKPOINT --file PATH --group-by FIELD` writes "
               "them — never over the recorded splits above.")
    files = chosen_files(page, models)
    scheme = controls.radio(page, "challenge_scheme", "Label scheme", LABEL_SCHEMES, DEFAULT_LABEL_SCHEME,
                            format_func=lambda s: f"{s}: {SCHEME_NAMES[s]}",
                            help="2way scores a set written entailment vs non-entailment as its authors meant: "
                                 "neutral and contradiction merge into non-entailment in the gold labels and in each "
                                 "model's answers (as `evaluate --label-scheme 2way`)")
    if not files:
        return
    challenge, error = cached_challenge.read_challenge(files, scheme)
    if challenge is None:
        st.error(md(error))
        return
    for note in challenge.notes:
        st.caption(md(note))
    fields = challenge.field_names()
    preferred = next((f for f in PREFERRED_GROUPS if f in fields), fields[0])
    field = controls.select(page, "challenge_field", "Group by", fields, preferred)
    predictions = evaluated_predictions(page, models, challenge)
    if predictions:
        table = accuracy_by_group(predictions, challenge.groups(field), overall=True)
        show_accuracy(page, models, challenge, field, table)
        pairs_behind_a_number(page, files, field, predictions, table, scheme)


def evaluated_predictions(page: str, models: Sequence[cache.Model], challenge: Any) -> dict[str, list]:
    """Model name → its predictions on the file, from its named evaluation; the models not evaluated yet get a
    button that evaluates them (and say so while it is true), and each evaluation's name is said."""
    predictions: dict[str, list] = {}
    missing: list[cache.Model] = []
    said = []
    for model in models:
        found, evaluation, problem = cached_challenge.challenge_predictions(model, challenge)
        if problem:
            st.error(f"{md(model.name)}: {md(problem)}")
        elif evaluation is None:
            missing.append(model)
        else:
            predictions[model.name] = found
            extra = [note for note in evaluation.record.get("notes", []) if note not in challenge.notes]
            said.append(f"{md(model.name)}: named evaluation {md(repr(evaluation.name))}" + (f" — {md('; '.join(extra))}" if extra else ""))
    if missing and st.button(f"Evaluate {len(missing)} model(s) on this file", key=f"{page}_challenge_run",
                             help=f"runs spaCy over {len(challenge.pairs):,} pairs once (cached), then each model; "
                                  "kept as a named evaluation in each checkpoint folder"):
        for model in missing:
            with st.spinner(f"evaluating {model.name} …"):
                found, evaluation, problem = cached_challenge.challenge_predictions(model, challenge, compute=True)
            if problem:
                st.error(f"{md(model.name)}: {md(problem)}")
            else:
                predictions[model.name] = found
                said.append(f"{md(model.name)}: named evaluation {md(repr(evaluation.name))}")
        missing = [m for m in missing if m.name not in predictions]
    if missing:  # said only while it is true (a box left above the results misled)
        st.info(f"Not evaluated on this file yet: {md(', '.join(m.name for m in missing))}. Evaluating runs spaCy over "
                f"{len(challenge.pairs):,} pairs once (cached), then each model.")
    for line in said:
        st.caption(line)
    return predictions


def show_accuracy(page: str, models: Sequence[cache.Model], challenge: Any, field: str, table: pd.DataFrame) -> None:
    """Accuracy by category as dots with intervals, and the same side by side as a table."""
    drawn = table[table["group"] != OVERALL_GROUP]
    colours = {m.name: m.colour for m in models}
    figures.show(accuracy_dots(drawn, "group", group="model", colours=colours,
                               title=f"accuracy by {field} on {challenge.files[0].name} (95% Wilson intervals; "
                                     "grey tick: majority label)"), f"{page}_challenge_bars", f"challenge_{field}")
    st.dataframe(side_by_side(table), hide_index=True, width="stretch")
    st.caption(f"A pair with several {md(field)} values counts in each, so counts may add up to more than the "
               f"{len(challenge.pairs):,} pairs. {code(OVERALL_GROUP)} counts every pair once.")


def pairs_behind_a_number(page: str, files: Sequence[Path], field: str, predictions: dict[str, list],
                          table: pd.DataFrame, scheme: str = DEFAULT_LABEL_SCHEME) -> None:
    """Pick a model and a category (optionally only its errors): the list of those pairs, each opening in the
    Pair explorer."""
    st.markdown("**The pairs behind a number**")
    left, middle, right = st.columns([2, 2, 1], vertical_alignment="bottom")
    model = controls.select(page, "challenge_model", "Model", list(predictions), where=left)
    group = controls.select(page, "challenge_group", "Category", list(table[table["model"] == model]["group"]), where=middle)
    only_wrong = controls.toggle(page, "challenge_wrong", "Only the pairs it gets wrong", False, where=right)
    ref = state.ListRef.of("challenge", files=";".join(str(f) for f in files), field=field, group=group, model=model,
                           wrong="1" if only_wrong else None, via="category",
                           scheme=None if scheme == DEFAULT_LABEL_SCHEME else scheme)
    pair_list.show(page, "challenge_pairs", ref, sortable=False)

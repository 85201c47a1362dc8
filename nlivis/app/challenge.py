"""The Error analysis page's challenge-set section: accuracy by category on a file the user gives.

The user names a file (a path, or an upload kept under the feature cache's `uploads/` folder by content
hash) in any format `nlivis.data.challenge` reads — ANLI's annotated CSV, ConjNLI, HANS, a stress test —
and a field to group by. Each loaded model's predictions come from its named evaluation of exactly that data
(`nlivis.analysis.evaluation.challenge_predictions`, as `evaluate --file` writes them), or are computed on
request and kept the same way; they are never mixed with the checkpoint's recorded splits. The table puts
the models side by side with Wilson 95% intervals; picking a model and a group lists the pairs behind the
number, and clicking one opens it in the Pair explorer.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import streamlit as st

from nlivis.app import selection, widgets
from nlivis.app.loading import LoadedModel

UPLOADS_FOLDER = "uploads"
"""Under the feature cache root: uploaded challenge files, one folder per content hash."""
PREFERRED_GROUPS = ("tags", "heuristic", "subcase", "file")
"""The group-by field offered first when the file has it (ANLI, HANS, stress tests)."""


def _uploads_root() -> Path:
    from nlivis.store.files import cache_root

    return cache_root(None) / UPLOADS_FOLDER


def keep_upload(name: str, data: bytes) -> Path:
    """Write an uploaded file as `<cache>/uploads/<sha256[:16]>/<name>` (the name's last part only, made
    safe; the suffix tells the reader the format) and return its path; the same bytes reuse the file."""
    from nlivis.store.files import sanitized_name

    base = Path(name).name
    stem, dot, suffix = base.partition(".")
    safe = sanitized_name(stem) + (dot + "".join(c for c in suffix if c.isalnum() or c == ".")[:20] if dot else "")
    folder = _uploads_root() / hashlib.sha256(data).hexdigest()[:16]
    path = folder / safe
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{safe}.partial"
        temporary.write_bytes(data)
        temporary.replace(path)
    return path


@st.cache_resource(max_entries=8, show_spinner="reading the challenge file …")
def _read_cached(paths: tuple[str, ...], stamps: tuple[float, ...]) -> Any:
    from nlivis.data.challenge import read_challenge_files

    return read_challenge_files(list(paths))


def read_challenge(paths: Sequence[Path]) -> tuple[Any | None, str | None]:
    """(challenge set, None) or (None, why it cannot be read: file and line)."""
    try:
        return _read_cached(tuple(str(p) for p in paths), tuple(Path(p).stat().st_mtime for p in paths)), None
    except (OSError, ValueError) as error:
        return None, str(error)


def earlier_evaluations(models: Sequence[LoadedModel]) -> dict[str, list[Path]]:
    """"<description> (model)" → the files of each named evaluation of the loaded models whose files are still
    there (the recorded splits are not among them: they are the splits above)."""
    from nlivis.store.evaluations import find_named_evaluations

    found: dict[str, list[Path]] = {}
    for model in models:
        for evaluation in find_named_evaluations(model.path).values():
            files = [Path(f.get("path", "")) for f in evaluation.record.get("data", {}).get("files", [])]
            if files and all(f.is_file() for f in files) and not evaluation.record.get("split_key"):
                found[f"{evaluation.describe()} — {model.label}"] = files
    return found


def _chosen_files(key: str, models: Sequence[LoadedModel]) -> list[Path]:
    earlier = earlier_evaluations(models)
    modes = (["an earlier named evaluation"] if earlier else []) + ["a path on this machine", "upload"]
    mode = st.radio("Challenge file", modes, horizontal=True, key=f"{key}_mode")
    if mode == "an earlier named evaluation":
        chosen = st.selectbox("Named evaluation", list(earlier), key=f"{key}_earlier")
        return earlier[chosen]
    if mode == "upload":
        uploads = st.file_uploader("Challenge file(s) — several for one file per category (stress tests)",
                                   type=["csv", "tsv", "txt", "jsonl", "gz"], accept_multiple_files=True,
                                   key=f"{key}_upload")
        return [keep_upload(upload.name, upload.getvalue()) for upload in uploads or []]
    text = st.text_input("Path(s), separated by ';' (e.g. ../shared/data/anli_annotated/ANLI_analysis_r1_dev.csv)",
                         key=f"{key}_path")
    paths = [Path(part.strip()).expanduser() for part in text.split(";") if part.strip()]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        st.error(f"No such file: {', '.join(missing)}")
        return []
    return paths


def _side_by_side(table: pd.DataFrame) -> pd.DataFrame:
    """One row per group, per model accuracy with its interval and count (the models side by side)."""
    frames = []
    for model, rows in table.groupby("model", sort=False):
        frames.append(rows.set_index("group")[["count", "accuracy", "ci_low", "ci_high"]]
                      .rename(columns=lambda c: f"{model} · {c}"))
    wide = pd.concat(frames, axis=1)
    majority = table.drop_duplicates("group").set_index("group")[["majority_label", "majority_accuracy"]]
    return wide.join(majority).reset_index()


def _pairs_behind(challenge: Any, predictions: list, groups: dict, group: str, key: str) -> None:
    from nlivis.analysis.challenge import pairs_in_group

    frame = pairs_in_group(predictions, groups, group)
    by_id = {pair.id: pair for pair in challenge.pairs}
    shown = pd.DataFrame({
        "id": frame["id"],
        "premise": frame["id"].map(lambda pid: by_id[pid].premise),
        "hypothesis": frame["id"].map(lambda pid: by_id[pid].hypothesis),
        "gold": frame["gold"], "predicted": frame["predicted"], "correct": frame["correct"],
        "confidence": frame["confidence"].round(3),
    })
    only_wrong = st.toggle("Only the pairs it gets wrong", value=False, key=f"{key}_wrong")
    if only_wrong:
        shown = shown[shown["correct"] == False]  # noqa: E712
    st.caption(f"{len(shown)} pair(s)")
    event = st.dataframe(shown, key=f"{key}_pairs", hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row")
    st.caption(":material/touch_app: Click a line to open that pair in the Pair explorer with the loaded models.")
    picked = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    if picked:
        row = shown.iloc[picked[0]]
        selection.set_current_pair({"premise": row["premise"], "hypothesis": row["hypothesis"],
                                    "gold": row["gold"], "source": selection.TYPED})
        st.switch_page(selection.PAIR_EXPLORER, query_params=selection.url_parameters())


def render_challenge_breakdown(models: Sequence[LoadedModel], key: str = "challenge") -> None:
    """The section: file, field, per-model accuracy by category side by side, and the pairs behind it."""
    from nlivis.analysis.challenge import OVERALL_GROUP, accuracy_by_group
    from nlivis.analysis.evaluation import challenge_predictions
    from nlivis.viz import comparison_bars

    st.subheader("Challenge set by category")
    st.caption("Accuracy per category of a challenge file (ANLI's annotated CSV, ConjNLI, HANS, the stress tests, or "
               "any file with premise / hypothesis / label columns). Each model's predictions are kept as a named "
               "evaluation in its checkpoint folder, as `python -m nlivis evaluate CHECKPOINT --file PATH "
               "--group-by FIELD` writes them — never over the recorded splits above.")
    paths = _chosen_files(key, models)
    if not paths:
        return
    challenge, error = read_challenge(paths)
    if error:
        st.error(error)
        return
    for note in challenge.notes:
        st.caption(note)
    fields = challenge.field_names()
    preferred = next((f for f in PREFERRED_GROUPS if f in fields), fields[0])
    field = st.selectbox("Group by", fields, index=fields.index(preferred), key=f"{key}_field")
    groups = challenge.groups(field)

    predictions: dict[str, list] = {}
    missing: list[LoadedModel] = []
    for model in models:
        try:
            found, evaluation = challenge_predictions(model.checkpoint, challenge, compute=False)
        except ValueError as problem:
            st.error(f"{model.label}: {problem}")
            continue
        if evaluation is None:
            missing.append(model)
            continue
        predictions[model.label] = found
        record = evaluation.record
        extra = [note for note in record.get("notes", []) if note not in challenge.notes]
        st.caption(f"{model.label}: named evaluation {evaluation.name!r}" + (f" — {'; '.join(extra)}" if extra else ""))
    if missing:
        names = ", ".join(m.label for m in missing)
        st.info(f"Not evaluated on this file yet: {names}. Evaluating runs spaCy over {len(challenge.pairs):,} pairs "
                "once (cached), then each model.")
        if st.button(f"Evaluate {len(missing)} model(s) on this file", key=f"{key}_run"):
            for model in missing:
                with st.spinner(f"evaluating {model.label} …"):
                    try:
                        predictions[model.label] = challenge_predictions(model.checkpoint, challenge)[0]
                    except ValueError as problem:
                        st.error(f"{model.label}: {problem}")
    if not predictions:
        return

    table = accuracy_by_group(predictions, groups, overall=True)
    drawn = table[table["group"] != OVERALL_GROUP]
    widgets.show_figure(comparison_bars(drawn, "group", "accuracy", group="model",
                                        title=f"accuracy by {field} on {challenge.files[0].name}"),
                        f"{key}_bars", f"challenge_{field}")
    st.dataframe(_side_by_side(table).round(3), hide_index=True, width="stretch")
    st.caption(f"95% Wilson intervals; a pair with several {field} values counts in each, so counts may add up to "
               f"more than the {len(challenge.pairs):,} pairs. `{OVERALL_GROUP}` counts every pair once.")

    st.markdown("**The pairs behind a number**")
    left, right = st.columns(2)
    chosen_model = left.selectbox("Model", list(predictions), key=f"{key}_model")
    chosen_group = right.selectbox("Group", list(table[table["model"] == chosen_model]["group"]), key=f"{key}_group")
    _pairs_behind(challenge, predictions[chosen_model], groups, chosen_group, key)


@st.cache_data(max_entries=64, show_spinner=False)
def _split_truncation_cached(path: str, stamp: float, split: str, root: str, _featurizer: Any) -> dict | None:
    from nlivis.app.loading import local_splits
    from nlivis.analysis.evaluation import cached_split_truncation

    ref = local_splits().get(split)
    if ref is None:
        return None
    count = cached_split_truncation(_featurizer, ref, root)
    if count is None:
        raise _NotAnalysedYet(split)  # not cached: asked again on the next run, when it may be analysed
    return {"text": count.describe(), "pairs": count.pairs}


class _NotAnalysedYet(Exception):
    """The split has no cached analyses on this machine yet."""


def show_sample_truncation(models: Sequence[LoadedModel], items: Sequence[Any], split: str) -> None:
    """A caption per model saying how many of the analysed sample pairs of `split` its token cut-offs
    shorten (issue 12 item 15), for the pages that work on a sample (Gates over a split, Projection):
    the sample is already analysed, so this costs one pass over its token counts and no spaCy run."""
    from nlivis.analysis.evaluation import count_truncated

    said: dict[str, list[str]] = {}
    for model in models:
        cut = count_truncated(model.checkpoint.featurizer, items)
        if cut.pairs:
            said.setdefault(cut.describe(), []).append(model.label)
    _caption_by_text(said, f"on this sample of {split}")


def _caption_by_text(said: dict[str, list[str]], where: str) -> None:
    """One caption per distinct truncation sentence, naming every model it holds for (models with the same
    cut-offs say the same thing; five identical lines said it five times)."""
    for text, labels in said.items():
        st.caption(f"{', '.join(labels)} {where}: {text}.")


def show_split_truncation(models: Sequence[LoadedModel], split: str) -> None:
    """A caption per model saying how many pairs of `split` its token cut-offs shorten (issue 12 item 15),
    from the feature cache (no spaCy run); a hint when the split was never analysed on this machine."""
    from nlivis.app.loading import _folder_stamp
    from nlivis.app.paths import data_root

    root = data_root()
    if root is None:
        return
    unknown, said = [], {}
    for model in models:
        try:
            found = _split_truncation_cached(model.path, _folder_stamp(Path(model.path)), split, str(root),
                                             model.checkpoint.featurizer)
        except (_NotAnalysedYet, OSError, ValueError):
            found = None
        if found is None:
            unknown.append(model.label)
        elif found["pairs"]:
            said.setdefault(found["text"], []).append(model.label)
    _caption_by_text(said, f"on {split}")
    if unknown and len(unknown) == len(models):
        st.caption(f"How many pairs of {split} the models' token cut-offs shorten is shown once the split has been "
                   f"analysed here (`python -m nlivis prepare` or `evaluate`).")

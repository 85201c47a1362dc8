"""Faithfulness over a split (ERASER's comprehensiveness and sufficiency, agreement with attention, plausibility
against e-SNLI highlights): the records every method gives on a seeded sample, computed in phases and cached on
disk by checkpoint, split, sample and method, then summarised by `analysis.faithfulness.summarize`.

`python -m nlivis faithfulness` and the app's Attribution page both call `split_faithfulness`; the maths (the
rankings, the rationale masks, AOPC, τ, AUPRC, the bootstrap) is in `nlivis.analysis.faithfulness`."""
from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch
from tqdm import tqdm

from nlivis.analysis.attribution import (DEFAULT_INPUT, DeletionSource, RawScores, attention_scores,
                                         cut_to_featurizer, deleted_batch, deletion_source, gradients,
                                         integrated_gradients)
from nlivis.analysis.faithfulness import (BINS, FAITHFULNESS_METHODS, IG_START_STEPS, RANDOM_PERMUTATIONS,
                                          hypothesis_tokens_by_id, ig_settings_key, method_settings_key,
                                          random_scores, ranking, rationale_keeps, sample_items, summarize)
from nlivis.data.highlights import find_highlights_file, highlights_by_pair, read_esnli_highlights
from nlivis.store.files import atomic_write_json, cache_root, read_sealed
from nlivis.workflows.protocol import Progress
from nlivis.workflows.specs import FaithfulnessOptions
from nlivis.workflows.subjects import SplitSample

CHUNK_PAIRS = {"integrated_gradients": 4, "gradient": 32, "attention": 32}
"""Pairs per attribution call, chunked by length (integrated gradients multiplies rows by its steps)."""
VARIANT_BATCH = 256
"""Deletion variants per forward pass, unless the model caps its inference batch (`max_inference_batch`)."""
CACHE_VERSION = 2
"""2: token-feature attribution, the random floor averaged over permutations, records of all methods made
together (version 1 files are recomputed)."""


class VariantPool:
    """Deletion variants of a sample's pairs, each distinct (pair, kept tokens) evaluated once however many
    methods and bins ask for it, in batches of similar length built by `attribution.deleted_batch`."""

    def __init__(self, source: DeletionSource, lengths: Sequence[tuple[int, int]]):
        self.source = source
        self.lengths = list(lengths)
        self.index: dict[tuple[int, bytes], int] = {}
        self.keeps: list[tuple[int, np.ndarray]] = []
        self.probabilities: list[torch.Tensor | None] = []

    def add(self, row: int, keep: np.ndarray) -> int:
        """The variant of pair `row` keeping the tokens where `keep` (over premise then hypothesis) is True."""
        key = (row, keep.tobytes())
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = len(self.keeps)
            self.keeps.append((row, keep))
            self.probabilities.append(None)
        return found

    def evaluate(self, model, batch_size: int, progress: bool = False) -> None:
        """Class probabilities of every variant not evaluated yet, shortest variants batched together."""
        pending = [v for v, probabilities in enumerate(self.probabilities) if probabilities is None]
        pending.sort(key=lambda v: (int(self.keeps[v][1][:self.lengths[self.keeps[v][0]][0]].sum()),
                                    int(self.keeps[v][1].sum())))
        p_width, h_width = self.source.batch.premise_ids.shape[1], self.source.batch.hypothesis_ids.shape[1]
        bar = tqdm(total=len(pending), desc="deletions", unit="pair", file=sys.stderr, disable=not progress)
        with torch.inference_mode():
            for start in range(0, len(pending), batch_size):
                chunk = pending[start:start + batch_size]
                keep_p = np.zeros((len(chunk), p_width), dtype=bool)
                keep_h = np.zeros((len(chunk), h_width), dtype=bool)
                for position, v in enumerate(chunk):
                    row, keep = self.keeps[v]
                    p = self.lengths[row][0]
                    keep_p[position, :p] = keep[:p]
                    keep_h[position, :len(keep) - p] = keep[p:]
                rows = torch.tensor([self.keeps[v][0] for v in chunk])
                batch = deleted_batch(self.source, rows, torch.from_numpy(keep_p), torch.from_numpy(keep_h))
                probabilities = model.probabilities(model(batch).float())
                for position, v in enumerate(chunk):
                    self.probabilities[v] = probabilities[position]
                bar.update(len(chunk))
        bar.close()

    def probability(self, variant: int, target: int) -> float:
        return float(self.probabilities[variant][target])


class FaithfulnessRecords:
    """The per-pair records of every requested method on one sample, computed in phases as the Trainer trains:
    one method per phase, the state (the sample cut to the featurizer, the `VariantPool`, each method's scores
    and extras) kept here, so no phase reaches into another's closure.

    All methods share the work: the sample is encoded once, every deletion (ERASER's and occlusion's) is a
    `VariantPool` entry built by indexing and evaluated once in length-sorted batches, pairs are chunked by
    length for the gradient passes, and gradient and grad × input come from one backward pass. `timings`, when
    given, receives the wall and CPU seconds each phase took (`phase`, `cpu:phase`; for
    bench/faithfulness_speed.py)."""

    def __init__(self, model, featurizer, items: Sequence, methods: Sequence[str], seed: int = 1,
                 steps: int | None = None, at: str = DEFAULT_INPUT, permutations: int = RANDOM_PERMUTATIONS,
                 progress: bool = False, timings: dict[str, float] | None = None):
        unknown = sorted(set(methods) - set(FAITHFULNESS_METHODS))
        if unknown:
            raise ValueError(f"unknown method(s) {unknown}; known: {list(FAITHFULNESS_METHODS)}")
        if permutations < 1:
            raise ValueError(f"the random floor needs at least one permutation; got {permutations}")
        self.model, self.featurizer, self.methods = model, featurizer, list(methods)
        self.seed, self.steps, self.at, self.permutations, self.progress = seed, steps, at, permutations, progress
        self.timings = timings
        self.items = [cut_to_featurizer(item, featurizer) for item in items]
        self.lengths = [(len(item.premise), len(item.hypothesis)) for item in self.items]
        self.order = sorted(range(len(self.items)), key=lambda i: self.lengths[i])  # a chunk pads little
        self.pool = VariantPool(deletion_source(featurizer, self.items), self.lengths)
        self.batch_size = getattr(model, "max_inference_batch", 0) or VARIANT_BATCH
        self.targets: list[int] = []
        self.original: list[float] = []
        self.scores: dict[str, list[list[float]]] = {}
        self.extras: dict[str, list[dict[str, Any]]] = {method: [{} for _ in self.items] for method in methods}
        self.variants: dict[str, list[list[list[tuple[int, int]]]]] = {}  # method → row → ranking → bins
        self.untraced: set[str] = set()  # attention, where the model traces none
        self._clock = (time.perf_counter(), time.process_time())

    def run(self) -> dict[str, list[dict[str, Any]] | None]:
        """Every phase in order; a method the model cannot give (attention) maps to None."""
        self.model.eval()
        self.predict()
        phases = ((("integrated_gradients",), self.integrate), (("gradient", "grad_x_input"), self.differentiate),
                  (("attention",), self.attend), (("occlusion",), self.occlude), (("random",), self.randomise))
        for methods, phase in phases:
            if set(methods) & set(self.methods):
                phase()
        self.rank()
        self.delete()
        return self.records()

    def lap(self, phase: str) -> None:
        """Add the wall and CPU seconds since the last lap to `timings` under `phase`."""
        now = (time.perf_counter(), time.process_time())
        if self.timings is not None:
            self.timings[phase] = self.timings.get(phase, 0.0) + now[0] - self._clock[0]
            self.timings[f"cpu:{phase}"] = self.timings.get(f"cpu:{phase}", 0.0) + now[1] - self._clock[1]
        self._clock = now

    def predict(self) -> None:
        """The predicted class and its probability for every whole pair: the target of every method."""
        full = [self.pool.add(row, np.ones(p + h, dtype=bool)) for row, (p, h) in enumerate(self.lengths)]
        self.pool.evaluate(self.model, self.batch_size)
        self.targets = [int(self.pool.probabilities[v].argmax()) for v in full]
        self.original = [self.pool.probability(v, t) for v, t in zip(full, self.targets)]
        self.lap("predictions")

    def chunked(self, name: str, size: int, work: Callable[[list[int], Any, torch.Tensor], None]) -> None:
        """`work(rows, their batch, their targets)` over the sample in length-sorted chunks of `size` pairs."""
        bar = tqdm(total=len(self.items), desc=name, unit="pair", file=sys.stderr, disable=not self.progress)
        for start in range(0, len(self.order), size):
            chunk = self.order[start:start + size]
            work(chunk, self.featurizer.encode([self.items[i] for i in chunk]),
                 torch.tensor([self.targets[i] for i in chunk]))
            bar.update(len(chunk))
        bar.close()

    def keep_raw(self, method: str, chunk: list[int], raw: RawScores) -> None:
        """Each pair's scores over its premise then hypothesis tokens (an empty sentence is one UNK position in
        the batch but no token in the analysis)."""
        kept = self.scores.setdefault(method, [[] for _ in self.items])
        for position, i in enumerate(chunk):
            p, h = self.lengths[i]
            kept[i] = raw.premise[position, :p].tolist() + raw.hypothesis[position, :h].tolist()

    def integrate(self) -> None:
        """Integrated gradients, adaptive from `IG_START_STEPS` unless `steps` fixes them, with the gap kept."""
        def work(chunk: list[int], batch: Any, target: torch.Tensor) -> None:
            raw = integrated_gradients(self.model, batch, target, self.steps, self.at, start_steps=IG_START_STEPS)
            self.keep_raw("integrated_gradients", chunk, raw)
            for position, i in enumerate(chunk):
                self.extras["integrated_gradients"][i] = {
                    "completeness_gap": float(raw.completeness_gap[position]),
                    "completeness_difference": float(raw.completeness_difference[position]),
                    "completeness_error": float(raw.completeness_error[position]),
                    "steps": int(raw.steps[position])}

        self.chunked("integrated_gradients", CHUNK_PAIRS["integrated_gradients"], work)
        self.lap("integrated_gradients")

    def differentiate(self) -> None:
        """Gradient norm and grad × input, from one backward pass."""
        def work(chunk: list[int], batch: Any, target: torch.Tensor) -> None:
            norm, times_input = gradients(self.model, batch, target, self.at)
            self.keep_raw("gradient", chunk, norm)
            self.keep_raw("grad_x_input", chunk, times_input)

        self.chunked("gradients", CHUNK_PAIRS["gradient"], work)
        self.lap("gradients")

    def attend(self) -> None:
        """Attention scores (and each layer's) where the model traces attention; none at all otherwise."""
        def work(chunk: list[int], batch: Any, target: torch.Tensor) -> None:
            with torch.no_grad():
                _, trace = self.model(batch, trace=True)
            raw = attention_scores(trace, batch.premise_mask, batch.hypothesis_mask)
            if raw is None:
                self.untraced.add("attention")
                return
            self.keep_raw("attention", chunk, raw)
            for position, i in enumerate(chunk):
                p, h = self.lengths[i]
                self.extras["attention"][i] = {"layers": {name: lp[position, :p].tolist() + lh[position, :h].tolist()
                                                          for name, (lp, lh) in raw.layers.items()}}

        self.chunked("attention", CHUNK_PAIRS["attention"], work)
        self.lap("attention")

    def occlude(self) -> None:
        """Occlusion: the drop of the target's probability when each token alone is deleted."""
        left_out = []
        for row, (p, h) in enumerate(self.lengths):
            left_out.append([self.pool.add(row, keep) for keep in ~np.eye(p + h, dtype=bool)])
        self.pool.evaluate(self.model, self.batch_size, self.progress)
        self.scores["occlusion"] = [[self.original[row] - self.pool.probability(v, self.targets[row]) for v in variants]
                                    for row, variants in enumerate(left_out)]
        self.lap("occlusion")

    def randomise(self) -> None:
        """The random floor: seeded scores per pair, and `permutations` rankings averaged into its values."""
        self.scores["random"] = [random_scores(p + h, self.seed, row) for row, (p, h) in enumerate(self.lengths)]
        for row, (p, h) in enumerate(self.lengths):
            self.extras["random"][row] = {"permutation_scores": [random_scores(p + h, self.seed, row, r)
                                                                 for r in range(self.permutations)]}

    def rank(self) -> None:
        """Per method and pair, the ERASER variants (without, only the rationale) of each bin as pool entries."""
        for method in self.ranked():
            self.variants[method] = []
            for row, (p, h) in enumerate(self.lengths):
                rankings = ([ranking(s) for s in self.extras[method][row]["permutation_scores"]] if method == "random"
                            else [ranking(self.scores[method][row])])
                self.variants[method].append([[(self.pool.add(row, without), self.pool.add(row, only))
                                               for without, only in rationale_keeps(p + h, order, BINS)]
                                              for order in rankings])
        self.lap("rankings")

    def ranked(self) -> list[str]:
        """The requested methods that gave scores (all but attention on a model that traces none)."""
        return [method for method in self.methods if method in self.scores and method not in self.untraced]

    def delete(self) -> None:
        """Evaluate every deletion variant not evaluated yet."""
        self.pool.evaluate(self.model, self.batch_size, self.progress)
        self.lap("deletions")
        if self.timings is not None:
            self.timings["variants"] = len(self.pool.keeps)

    def records(self) -> dict[str, list[dict[str, Any]] | None]:
        """One record per pair and method: target, scores, per-bin comprehensiveness and sufficiency, extras."""
        records: dict[str, list[dict[str, Any]] | None] = {method: None for method in self.methods}
        for method in self.ranked():
            rows = []
            for row, item in enumerate(self.items):
                p, target, before = self.lengths[row][0], self.targets[row], self.original[row]
                per_ranking = self.variants[method][row]
                drops = [[(before - self.pool.probability(w, target), before - self.pool.probability(o, target))
                          for w, o in bins] for bins in per_ranking]
                comprehensiveness, sufficiency = np.mean(drops, axis=0).T
                record: dict[str, Any] = {"id": item.pair.id, "target": target, "probability": before,
                                          "premise_scores": self.scores[method][row][:p],
                                          "hypothesis_scores": self.scores[method][row][p:],
                                          "comprehensiveness": comprehensiveness.tolist(),
                                          "sufficiency": sufficiency.tolist(), **self.extras[method][row]}
                if method == "random":
                    record["permutations"] = self.permutations
                rows.append(record)
            records[method] = rows
        return records


def compute_records(model, featurizer, items: Sequence, methods: Sequence[str], seed: int = 1,
                    steps: int | None = None, at: str = DEFAULT_INPUT, permutations: int = RANDOM_PERMUTATIONS,
                    progress: bool = False, timings: dict[str, float] | None = None
                    ) -> dict[str, list[dict[str, Any]] | None]:
    """One record per pair and method (`FaithfulnessRecords`): target, scores, per-bin comprehensiveness and
    sufficiency (and for integrated gradients the completeness gap, Δ, the error and the steps used; for
    attention its layers; for random the per-bin values averaged over `permutations` seeded rankings, and their
    scores). A method the model cannot give (attention) maps to None. `steps` None: integrated gradients'
    adaptive default; `at`: where gradients and integrated gradients attribute."""
    return FaithfulnessRecords(model, featurizer, items, methods, seed, steps, at, permutations, progress,
                               timings).run()



def method_records(model, featurizer, items: Sequence, method: str, seed: int = 1, steps: int | None = None,
                   progress: bool = False, at: str = DEFAULT_INPUT,
                   permutations: int = RANDOM_PERMUTATIONS) -> list[dict[str, Any]] | None:
    """`compute_records` for one method."""
    return compute_records(model, featurizer, items, [method], seed, steps, at, permutations, progress)[method]

def cache_file(cache_dir: str | Path | None, checkpoint: str | Path, split: str, sample: int | None, seed: int,
               method: str, steps: int | None, pair_ids: Sequence[str] = (), at: str = DEFAULT_INPUT,
               permutations: int = RANDOM_PERMUTATIONS) -> Path:
    """Where one method's per-pair records are cached: by checkpoint, split, sample, seed and method (and a
    hash of the sampled pair ids, so two ways of drawing a sample never share a file), and the method's
    settings (`method_settings_key`)."""
    size = "all" if sample is None else str(sample)
    extra = method_settings_key(method, steps, at, permutations)
    ids = hashlib.sha256("\n".join(pair_ids).encode()).hexdigest()[:10]
    return (cache_root(cache_dir) / "attribution" / checkpoint_key(checkpoint)
            / f"{split}-sample{size}-seed{seed}-{ids}-{method}{extra}.json")


def checkpoint_key(folder: str | Path) -> str:
    """Name plus a hash of the checkpoint's COMPLETE manifest (which lists every file's sha256)."""
    folder = Path(folder)
    manifest = folder / "COMPLETE"
    digest = hashlib.sha256(manifest.read_bytes() if manifest.is_file() else str(folder.resolve()).encode()).hexdigest()
    return f"{folder.name}-{digest[:12]}"


@dataclass
class FaithfulnessRun:
    """Records per method (None for a method the model cannot give), the sample and where they came from."""

    records: dict[str, list[dict[str, Any]]]
    items: list
    unavailable: list[str]
    cached: list[str]


def run_faithfulness(loaded, items: Sequence, split: str, sample: int | None = 500, seed: int = 1,
                     methods: Sequence[str] = FAITHFULNESS_METHODS, cache_dir: str | Path | None = None,
                     steps: int | None = None, progress: bool = True, at: str = DEFAULT_INPUT,
                     permutations: int = RANDOM_PERMUTATIONS) -> FaithfulnessRun:
    """Records for every method over a seeded sample of `items`, read from the cache when present; the
    methods not cached are computed together (`compute_records`) and each is cached. `steps` None:
    integrated gradients' adaptive default; an integer fixes its step count."""
    unknown = sorted(set(methods) - set(FAITHFULNESS_METHODS))
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {list(FAITHFULNESS_METHODS)}")
    chosen = sample_items(items, sample, seed)
    ids = [item.pair.id for item in chosen]
    records: dict[str, list[dict[str, Any]] | None] = {}
    cached, missing = [], []
    paths = {method: cache_file(cache_dir, loaded.path, split, sample, seed, method, steps, ids, at, permutations)
             for method in methods}
    for method in methods:
        stored = _sealed_json(paths[method])
        if isinstance(stored, dict) and stored.get("version") == CACHE_VERSION and stored.get("pair_ids") == ids:
            cached.append(method)
            records[method] = stored["records"]
        else:
            missing.append(method)
    if missing:
        computed = compute_records(loaded.model, loaded.featurizer, chosen, missing, seed=seed, steps=steps, at=at,
                                   permutations=permutations, progress=progress)
        for method in missing:
            paths[method].parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(paths[method], {"version": CACHE_VERSION, "checkpoint": str(loaded.path), "split": split,
                                              "sample": sample, "seed": seed, "method": method, "at": at,
                                              "pair_ids": ids, "records": computed[method]}, sealed=True)
            records[method] = computed[method]
    unavailable = [method for method in methods if records[method] is None]
    return FaithfulnessRun({m: r for m, r in records.items() if r is not None}, chosen, unavailable, cached)


def _sealed_json(path: Path) -> Any:
    """A cached record read back when it matches its seal, else None (absent, damaged or unsealed: computed again)."""
    data = read_sealed(path)
    try:
        return None if data is None else json.loads(data)
    except (ValueError, RecursionError):
        return None


AGREEMENT_NOTE = ("Kendall τ-b per pair, median with a 95% bootstrap interval of the median. agreement_with_attention "
                  "pools both sentences' tokens; attention's scale follows the other sentence's length, so read it "
                  "beside agreement_membership_baseline, the τ of a plain 'is a hypothesis token' indicator with the "
                  "method's |scores| (what any attention constant within each sentence would reach). "
                  "agreement_within_premise and agreement_within_hypothesis rank one sentence's tokens; "
                  "agreement_within_sentences pools those per-pair τ: its mean (with mean_interval) is their "
                  "pair-weighted mean, each sentence weighted by the pairs where its τ is defined. Undefined τ "
                  "(one-token sentences, constant scores) are left out and counted as 'undefined'.")
"""How `faithfulness --json` says to read its agreement keys."""


@dataclass
class FaithfulnessResult:
    """A checkpoint's faithfulness on a split's sample: the `summarize` output, the sample, which methods came
    from the cache and which the model cannot give, and the highlights used for plausibility."""

    checkpoint: Path
    split: str
    options: FaithfulnessOptions
    items: list
    summary: dict[str, Any]
    cached: list[str]
    unavailable: list[str]
    highlights_file: str | Path | None = None
    highlighted_pairs: int = 0

    def record(self) -> dict[str, Any]:
        """What `faithfulness --json` prints (NaN still in it: the CLI prints it as null)."""
        options = self.options
        return {"checkpoint": str(self.checkpoint), "split": self.split, "sample": len(self.items),
                "seed": options.seed,
                "removal": "tokens deleted (sentence shortened and re-featurized), the same for every method",
                "integrated_gradients_steps": ig_settings_key(options.steps), "attribute_at": options.at,
                "random_permutations": options.permutations,
                "agreement_and_plausibility": "signed methods ranked by |score|; agreement_with_attention_signed "
                                              "keeps the signed τ",
                "agreement": AGREEMENT_NOTE,
                "bins": [f"{round(b * 100)}%" for b in BINS], "cached": self.cached, "unavailable": self.unavailable,
                "highlights": (None if self.highlights_file is None
                               else {"file": str(self.highlights_file), "pairs": self.highlighted_pairs}),
                **self.summary}


def split_faithfulness(loaded, items: Sequence, split: str, options: FaithfulnessOptions = FaithfulnessOptions(),
                       highlights_file: str | Path | None = None, cache_dir: str | Path | None = None,
                       progress: bool = False, on_method: Callable[[str], None] | None = None,
                       keep_distributions: bool = False) -> FaithfulnessResult:
    """Faithfulness of a loaded checkpoint on a sample of a split's analysed pairs, every method cached on disk
    (`run_faithfulness`), summarised with plausibility against `highlights_file` when it has rows for the
    sample's pairs. With `on_method`, the methods run one at a time and `on_method(name)` is called before
    each (the app's progress); without it, the methods not cached share their work. `keep_distributions` adds
    the per-pair values plots draw (`summarize`)."""
    batches = [[method] for method in options.methods] if on_method is not None else [list(options.methods)]
    records: dict[str, list[dict[str, Any]]] = {}
    chosen: list = []
    cached: list[str] = []
    unavailable: list[str] = []
    for methods in batches:
        if on_method is not None:
            on_method(methods[0])
        run = run_faithfulness(loaded, items, split, sample=options.sample, seed=options.seed, methods=methods,
                               cache_dir=cache_dir, steps=options.steps, progress=progress, at=options.at,
                               permutations=options.permutations)
        records.update(run.records)
        chosen, cached, unavailable = run.items, cached + run.cached, unavailable + run.unavailable
    highlights = None
    if highlights_file is not None:
        highlights = highlights_by_pair([item.pair for item in chosen], read_esnli_highlights(highlights_file)) or None
    summary = summarize(records, highlights, hypothesis_tokens_by_id(chosen, loaded.featurizer), seed=options.seed,
                        keep_distributions=keep_distributions)
    return FaithfulnessResult(Path(loaded.path), split, options, chosen, summary, cached, unavailable,
                              None if highlights is None else highlights_file,
                              0 if highlights is None else len(highlights))


def faithfulness_subject(subject: SplitSample, options: FaithfulnessOptions, progress: Progress) -> FaithfulnessResult:
    """`split_faithfulness` as the registered faithfulness analysis runs it: the highlights file of the options,
    or the one found beside the split's folder; the progress bar as the options say."""
    highlights = options.highlights
    if highlights is None and subject.data_dir is not None:
        highlights = find_highlights_file(subject.data_dir)
    return split_faithfulness(subject.loaded, subject.items, subject.split, options, highlights, subject.cache_dir,
                              progress=options.progress_bar)

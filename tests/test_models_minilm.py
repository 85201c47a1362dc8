"""The MiniLM cross-encoder: word pieces per word from a vocab.txt written here, the word-level folding of its
attention, checkpoints that leave the fetched rows out, and (where `python -m nlivis fetch-minilm` has run)
the real encoder against an independent numpy computation. The generic contracts (shapes, padding, trace
types, gradients) are tests/test_models.py's, over configs/minilm.toml at its tiny size."""
from __future__ import annotations

import contextlib
import json
import shutil

import pytest
import torch

from nlivis.data.records import InputError, Pair
from nlivis.features.dataset import AnalysedPair
from nlivis.features.embeddings import MINILM_SHA256, minilm_available
from nlivis.features.featurize import Featurizer
from nlivis.features.settings import FeatureSettings
from nlivis.features.sentences import SentenceAnalysis
from nlivis.features.vocab import CharVocabulary, Vocabulary
from nlivis.features.wordpieces import CLS_PIECE, SEP_PIECE, UNK_PIECE, WordPieces
from nlivis.models.inspect import random_batch
from nlivis.models.minilm import (FrozenOutputs, attention_rollout, fetched_encoder, fetched_word_rows, fold_onto_words,
                                  joint_sequence)
from nlivis.models.registry import build, model_class
from nlivis.models.trace import Alignment

PIECES = ["the", "cat", "dog", "sat", "on", "mat", "un", "##tidy", "##ness", "big", ".", ","]
"""Pieces of the vocabulary written here, after BERT's 104 reserved lines."""


def write_vocab(folder, cls_id: int = CLS_PIECE) -> WordPieces:
    lines = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"] + PIECES
    if cls_id != CLS_PIECE:
        lines[cls_id], lines[CLS_PIECE] = lines[CLS_PIECE], lines[cls_id]
    path = folder / "vocab.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return WordPieces(path)


def piece_id(piece: str) -> int:
    return 104 + PIECES.index(piece)


def analysed(words: list[str]) -> SentenceAnalysis:
    return SentenceAnalysis(tuple(words), ("NN",) * len(words), tuple(w.lower() for w in words))


def test_each_word_keeps_its_own_pieces(tmp_path):
    pieces = write_vocab(tmp_path)
    words = ["The", "untidyness", "cat", "zebra", "sat", "."]
    assert pieces.of_words(words, limit=8) == [
        [piece_id("the")], [piece_id("un"), piece_id("##tidy"), piece_id("##ness")], [piece_id("cat")], [UNK_PIECE],
        [piece_id("sat")], [piece_id(".")]]
    assert pieces.of_words(["untidyness"], limit=2) == [[piece_id("un"), piece_id("##tidy")]]
    assert pieces.of_words(["\u200b"], limit=8) == [[UNK_PIECE]]  # a word with no piece keeps its place


def test_a_vocabulary_with_moved_special_pieces_is_refused_by_name(tmp_path):
    with pytest.raises(InputError, match=r"vocab\.txt: \[CLS\] has id 5"):
        write_vocab(tmp_path, cls_id=5)


def test_the_featurizer_puts_each_words_pieces_at_its_position(tmp_path):
    pieces = write_vocab(tmp_path)
    premise, hypothesis = ["the", "big", "dog", "sat"], ["untidyness", ","]
    vocab = Vocabulary.build([premise, hypothesis])
    featurizer = Featurizer(vocab, CharVocabulary.build([premise, hypothesis]), FeatureSettings(word_pieces=3),
                            ("entailment", "neutral", "contradiction"), pieces=pieces)
    items = [AnalysedPair(Pair(id=str(i), premise="", hypothesis=""), analysed(p), analysed(h))
             for i, (p, h) in enumerate([(premise, hypothesis), (["cat"], [])])]
    batch = featurizer.encode(items)
    assert batch.premise_pieces.shape == (2, 4, 3) and batch.hypothesis_pieces.shape == (2, 2, 3)
    assert batch.premise_pieces[0, 2].tolist() == [piece_id("dog"), 0, 0]
    assert batch.hypothesis_pieces[0, 0].tolist() == [piece_id("un"), piece_id("##tidy"), piece_id("##ness")]
    assert batch.premise_pieces[1].tolist() == [[piece_id("cat"), 0, 0]] + [[0, 0, 0]] * 3  # padded words: PAD
    assert batch.hypothesis_pieces[1].tolist() == [[UNK_PIECE, 0, 0], [0, 0, 0]]  # an empty sentence's one UNK
    assert Featurizer(vocab, CharVocabulary.build([premise]), FeatureSettings(), ("a", "b")).encode(items).premise_pieces is None


def test_settings_refuse_a_piece_count_out_of_range():
    with pytest.raises(ValueError, match="word_pieces must be an integer from 0 to 16"):
        FeatureSettings(word_pieces=17)


def test_warm_up_rises_linearly_to_the_full_rate():
    from nlivis.training.schedules import warmup_factor

    assert [warmup_factor(step, 4) for step in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert warmup_factor(0, 0) == 1.0


def tiny_minilm(**options):
    torch.manual_seed(0)
    return build({"name": "minilm", **model_class("minilm").tiny_overrides, **options}).eval()


def test_the_joint_sequence_is_cls_premise_sep_hypothesis_sep_packed_with_each_pieces_word():
    premise = torch.tensor([[[7, 8], [9, 0], [0, 0]], [[5, 0], [0, 0], [0, 0]]])
    hypothesis = torch.tensor([[[11, 0], [0, 0]], [[12, 13], [0, 0]]])
    sequence = joint_sequence(premise, hypothesis)
    assert sequence.ids.tolist() == [[CLS_PIECE, 7, 8, 9, SEP_PIECE, 11, SEP_PIECE],
                                     [CLS_PIECE, 5, SEP_PIECE, 12, 13, SEP_PIECE, 0]]
    assert sequence.real.tolist() == [[True] * 7, [True] * 6 + [False]]
    assert sequence.segments.tolist() == [[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 0]]
    assert sequence.positions[1].tolist() == list(range(7))
    assert sequence.words["premise"][0].argmax(-1)[1:4].tolist() == [0, 0, 1]
    assert sequence.words["premise"][0].sum(-1).tolist() == [0, 1, 1, 1, 0, 0, 0]
    assert sequence.words["hypothesis"][1].argmax(-1)[3:5].tolist() == [0, 0]
    assert sequence.words["hypothesis"][1].sum(-1).tolist() == [0, 0, 0, 1, 1, 0, 0]


def test_folding_averages_a_words_piece_rows_and_sums_its_piece_columns():
    sequence = joint_sequence(torch.tensor([[[5, 6], [7, 0]]]), torch.tensor([[[8, 9]]]))  # words of 2, 1; 2 pieces
    length = sequence.ids.shape[1]  # [CLS] 5 6 7 [SEP] 8 9 [SEP]
    attention = torch.softmax(torch.randn(1, 1, length, length, generator=torch.Generator().manual_seed(1)), -1)
    words = sequence.words
    torch.testing.assert_close(fold_onto_words(attention, words["premise"], words["hypothesis"])[0, 0],
                               torch.ones(2, 1))  # one hypothesis word: all of each row's block mass
    p_to_p = fold_onto_words(attention, words["premise"], words["premise"])[0, 0]
    a = attention[0, 0]
    first = (a[1:3, 1:3].sum(1).mean(), a[1:3, 3].mean())  # word 1's pieces → word 1, → word 2
    torch.testing.assert_close(p_to_p[0], torch.stack(first) / sum(first))


def test_every_layer_and_head_is_traced_with_its_head_and_the_rollout_after():
    model = tiny_minilm()
    with torch.no_grad():
        _, trace = model(random_batch([3, 2], [2, 4], 30, 20), trace=True)
    alignments = trace.of_type(Alignment)
    heads = {(a.layer, a.head, a.direction) for a in alignments.values() if a.head is not None}
    assert heads == {(layer, head, d) for layer in (1, 2) for head in (1, 2) for d in ("p→p", "p→h", "h→p", "h→h")}
    rollout = [name for name, a in alignments.items() if a.head is None]
    assert rollout == ["rollout.p→p", "rollout.p→h", "rollout.h→p", "rollout.h→h"]


def test_rollout_rows_stay_distributions():
    attention = torch.softmax(torch.randn(2, 3, 5, 5), -1)
    rollout = attention_rollout([attention, attention])
    torch.testing.assert_close(rollout.sum(-1), torch.ones(2, 5))


def test_padding_inside_a_sentence_changes_nothing():
    """A pair whose words are padded to more pieces each (a batch holding a longer word) keeps its logits."""
    model = tiny_minilm()
    batch = random_batch([3, 2], [2, 4], 30, 20, seed=5)
    wider = random_batch([3, 2], [2, 4], 30, 20, seed=5)
    pad = torch.zeros(2, 3, 3, dtype=torch.long)
    wider.premise_pieces = torch.cat([batch.premise_pieces, pad], dim=-1)
    wider.hypothesis_pieces = torch.cat([batch.hypothesis_pieces, pad[:, :1].expand(2, 4, 3)], dim=-1)
    with torch.no_grad():
        torch.testing.assert_close(model(wider), model(batch), atol=1e-5, rtol=1e-4)


def test_frozen_layers_and_rows_get_no_gradient_and_options_are_checked():
    model = tiny_minilm(frozen_layers=1)
    assert not any(p.requires_grad for p in model.layers[0].parameters())
    assert all(p.requires_grad for p in model.layers[1].parameters())
    assert not model.word_embedding.weight.requires_grad
    with pytest.raises(ValueError, match="pooling must be one of"):
        tiny_minilm(pooling="max")
    with pytest.raises(ValueError, match="all-MiniLM-L6-v2's sizes"):
        tiny_minilm(pretrained=True)
    with pytest.raises(ValueError, match="word pieces"):
        tiny_minilm()(random_batch([2], [2], 30, 20).__class__(**{**vars(random_batch([2], [2], 30, 20)),
                                                                   "premise_pieces": None}))


def test_frozen_layers_fix_the_rows_below_them_and_run_as_at_inference_while_training():
    """frozen_layers > 0 fixes the position, segment and LayerNorm rows too; while training the frozen part has
    no dropout and builds no graph; outside training gradients reach the word-piece rows (attribution)."""
    model = tiny_minilm(frozen_layers=1, dropout=0.5, tune_feed_forward=False)
    e = model.embeddings
    assert not any(p.requires_grad for m in (e.positions, e.segments, e.norm) for p in m.parameters())
    assert not model.layers[1].intermediate.weight.requires_grad and not model.layers[1].output.bias.requires_grad
    assert model.layers[1].query.weight.requires_grad and model.layers[1].output_norm.weight.requires_grad
    assert model.fetched_state_keys() == (), "a randomly initialised model has nothing to fetch back"
    model.train()
    assert not model.layers[0].training and not e.dropout.training and model.layers[1].training
    batch = random_batch([3, 2], [2, 4], 30, 20, seed=5)
    first_layer = []
    model.layers[0].register_forward_hook(lambda module, args, out: first_layer.append(out[0]))
    model(batch), model(batch)
    torch.testing.assert_close(first_layer[0], first_layer[1])
    assert not first_layer[0].requires_grad
    model.eval()
    rows = []
    model.word_embedding.register_forward_hook(lambda module, args, out: rows.append(out.requires_grad_()) or out)
    model(batch).sum().backward()
    assert rows[0].grad is not None and rows[0].grad.abs().sum() > 0
    assert tiny_minilm().fixed_modules() == []


def test_a_training_step_in_bf16_autocast_keeps_the_full_precision_answers():
    """Mixed precision is bf16 autocast wherever CUDA runs the Trainer (`inference.autocast_for`); CPU autocast
    runs the same casts here, so the padding mask (the scores' dtype's lowest value), mean pooling over real pieces
    and the kept frozen outputs are checked in bf16: the same labels as in float32, close logits, finite gradients
    on the tuned layers and none on the frozen one."""
    from nlivis.inference import autocast_for

    assert isinstance(autocast_for(torch.device("cpu")), contextlib.nullcontext), "full precision on the CPU"
    model = tiny_minilm(frozen_layers=1, pooling="mean", tune_feed_forward=False)
    batch = random_batch([3, 2], [2, 4], 30, 20, seed=5)
    with torch.no_grad():
        full = model(batch)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = model(batch)
    assert mixed.dtype == torch.bfloat16
    torch.testing.assert_close(mixed.float(), full, atol=0.05, rtol=0.05)
    assert torch.equal(mixed.float().argmax(-1), full.argmax(-1))
    model.train()
    model.frozen_outputs = FrozenOutputs()  # as `reusing_frozen_outputs` sets it for the fetched encoder
    for step in range(2):  # the second step reads the frozen layer's output kept in bf16 autocast
        model.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model.loss(model(batch).float(), batch.labels)
        loss.backward()
        assert len(model.frozen_outputs.rows) == 2
        assert torch.isfinite(loss) and torch.isfinite(model.layers[1].query.weight.grad).all()
        assert all(p.grad is None for p in model.layers[0].parameters())
        model.frozen_outputs.store = None  # the second step may not run the frozen part again


needs_minilm = pytest.mark.skipif(not minilm_available(), reason="the MiniLM weights are not fetched here "
                                                                   "(`python -m nlivis fetch-minilm`)")

PREMISE = ["A", "violinist", "tunes", "her", "instrument", "before", "the", "concert", "."]
HYPOTHESIS = ["Someone", "is", "preparing", "to", "play", "music", "."]
CLS_NORM = 7.4770661942256025
CLS_START = [0.24074576, -0.25847205, 0.30666817, -0.08033281]
"""The [CLS] output of all-MiniLM-L6-v2 for this pair, computed from model.safetensors by an independent numpy
BERT (float64, exact-erf GELU, BERT's own tokenisation of the two sentences); tolerance covers float32."""


@needs_minilm
def test_the_fetched_encoder_reproduces_an_independent_computation():
    model = build({"name": "minilm", "num_classes": 3}).eval()
    model.load_word_vectors(torch.zeros(0))
    pieces = WordPieces.minilm()

    def side(words: list[str]) -> torch.Tensor:
        ids = pieces.of_words(words, 8)
        return torch.tensor([[row + [0] * (8 - len(row)) for row in ids]])

    batch = random_batch([len(PREMISE)], [len(HYPOTHESIS)], 30, 20)
    batch.premise_pieces, batch.hypothesis_pieces = side(PREMISE), side(HYPOTHESIS)
    with torch.no_grad():
        sequence, hidden, attentions = model.encode(batch)
    cls = hidden[0, 0].double()
    assert int(sequence.real.sum()) == 19 and len(attentions) == 6 and attentions[0].shape[1] == 12
    assert cls.norm().item() == pytest.approx(CLS_NORM, abs=2e-4)
    torch.testing.assert_close(cls[:4], torch.tensor(CLS_START, dtype=torch.float64), atol=2e-4, rtol=0)


def one_piece_word_batch(batch_seed: int, piece_seed: int):
    """`random_batch` of two pairs whose every word is one random real word piece (ids 1000–30000, no further
    pieces): what the kept-frozen-outputs tests run the encoder on."""
    batch = random_batch([4, 2], [3, 5], 30, 20, seed=batch_seed)
    generator = torch.Generator().manual_seed(piece_seed)
    for side in ("premise_pieces", "hypothesis_pieces"):
        pieces = getattr(batch, side)
        pieces[..., 0] = torch.randint(1000, 30000, pieces.shape[:2], generator=generator)
        pieces[..., 1:] = 0
    return batch


@needs_minilm
def test_kept_frozen_outputs_give_the_logits_of_a_full_pass_whatever_the_batch():
    """Inside `reusing_frozen_outputs` a pair's second untraced pass reads its frozen part's output back, in
    another batch with other padding, and its logits are those of a full pass; a traced pass still has every
    layer's attention."""
    model = build({"name": "minilm", "num_classes": 3, "frozen_layers": 5}).eval()
    model.load_word_vectors(torch.zeros(0))
    batch = one_piece_word_batch(batch_seed=2, piece_seed=3)
    batch.premise_pieces[1, 2:] = 0
    batch.hypothesis_pieces[0, 3:] = 0
    with torch.no_grad():
        full = model(batch)
        with model.reusing_frozen_outputs():
            first, again = model(batch), model(batch)
            assert len(model.frozen_outputs.rows) == 2
            alone = model(batch.__class__(**{k: (v[1:] if isinstance(v, torch.Tensor) else v)
                                            for k, v in vars(batch).items()}))
            _, trace = model(batch, trace=True)
    torch.testing.assert_close(first, full)
    torch.testing.assert_close(again, full, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(alone[0], full[1], atol=1e-5, rtol=1e-4)
    assert {entry.layer for entry in trace.of_type(Alignment).values()} == set(range(1, 7))
    assert model.frozen_outputs is None


@needs_minilm
def test_a_training_step_reuses_kept_frozen_outputs_and_still_tunes_the_top_layers():
    """A training step inside `reusing_frozen_outputs` keeps the frozen part's output of its pairs; the next
    epoch's step on them reads it back (no frozen pass: the kept rows are not added to), gives the logits of a
    full pass and the same gradients on the tuned layers, and leaves the frozen layers without any."""
    model = build({"name": "minilm", "num_classes": 3, "frozen_layers": 4, "dropout": 0.0})
    model.load_word_vectors(torch.zeros(0))
    batch = one_piece_word_batch(batch_seed=4, piece_seed=5)
    model.train()

    def step() -> tuple[torch.Tensor, torch.Tensor]:
        model.zero_grad(set_to_none=True)
        logits = model(batch)
        logits.sum().backward()
        return logits.detach(), model.layers[4].query.weight.grad.clone()

    full, full_gradient = step()
    with model.reusing_frozen_outputs():
        step()
        kept = dict(model.frozen_outputs.rows)
        model.frozen_outputs.store = None  # a second frozen pass would try to store and fail
        again, again_gradient = step()
        assert len(kept) == 2 and model.frozen_outputs.rows == kept
    torch.testing.assert_close(again, full, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(again_gradient, full_gradient, atol=1e-5, rtol=1e-4)
    assert all(p.grad is None for p in model.layers[3].parameters())


@pytest.mark.slow
@needs_minilm
def test_a_trained_checkpoint_leaves_the_fetched_rows_out_and_loads_them_back(tmp_path, monkeypatch):
    """The same Trainer and checkpoint format as every family: two pretrained layers, the lower one frozen and
    the upper one's feed-forward block fixed, two steps on the fixture pairs. The folder holds only what
    fine-tuning changed (no word-piece rows, no frozen layer); loading reads the rest from the fetched file, and
    without that file, or with one that does not match its sha256, the error says how to repair it."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    from nlivis.features import embeddings
    from nlivis.inference import load_checkpoint
    from nlivis.store.checkpoints import CheckpointError
    from nlivis.training.config import CONFIG_DIR, load_config
    from nlivis.training.request import TrainRequest
    from nlivis.training.trainer import train
    from tests.fixtures.training.helpers import FIXTURE_DIR

    toml = tmp_path / "one_layer.toml"
    toml.write_text(f'extends = "{CONFIG_DIR / "minilm.toml"}"\n[model]\nencoder_layers = 2\nfrozen_layers = 1\n'
                    'tune_feed_forward = false\n'
                    '[features]\nmax_premise_len = 12\nmax_hypothesis_len = 8\n'
                    '[training]\nbatch_size = 8\neval_every_steps = 2\ncheckpoint_every_steps = 2\n'
                    '[shipped.model]\nfrozen_layers = 1\n')
    out = tmp_path / "root" / "minilm-tiny"
    train(TrainRequest(load_config(toml), "snli", FIXTURE_DIR, out, device="cpu", seed=1, cache_dir=tmp_path / "cache",
                       progress=False, max_steps=2))
    with safe_open(str(out / "model.safetensors"), framework="pt") as handle:
        stored = set(handle.keys())
    assert stored == {f"layers.1.{name}.{kind}" for name in ("query", "key", "value", "attention_output",
                                                              "attention_norm", "output_norm")
                      for kind in ("weight", "bias")} | {"classifier.1.weight", "classifier.1.bias"}
    recorded = json.loads((out / "config.json").read_text(encoding="utf-8"))["weights"]
    assert "layers.0.query.weight" in recorded["fetched_keys"] and "layers.1.output.weight" in recorded["fetched_keys"]
    assert recorded["fetched_from"]["sha256"] == MINILM_SHA256
    loaded = load_checkpoint(out)
    torch.testing.assert_close(loaded.model.word_embedding.weight, fetched_word_rows())
    fetched, real = fetched_encoder(), embeddings.minilm_folder(fetch=False)
    for key in ("layers.0.output.weight", "embeddings.positions.weight", "layers.1.intermediate.weight"):
        torch.testing.assert_close(loaded.model.state_dict()[key], fetched[key], rtol=0, atol=0)
    monkeypatch.setattr(embeddings, "minilm_cache_folder", lambda: tmp_path / "nowhere")
    monkeypatch.setattr(embeddings, "MINILM_PACKAGE", "no_such_package_here")
    with pytest.raises(CheckpointError, match="python -m nlivis fetch-minilm"):
        load_checkpoint(out)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(real / "vocab.txt", other / "vocab.txt")
    save_file({"x": torch.zeros(1)}, str(other / "model.safetensors"))
    monkeypatch.setattr(embeddings, "minilm_cache_folder", lambda: other)
    with pytest.raises(CheckpointError, match="does not match the pinned sha256"):
        load_checkpoint(out)

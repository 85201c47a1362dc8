"""nlivis's ESIM beside two peers of the same sizes, measured in one process in alternating rounds.

    python -m venv /tmp/peer --system-site-packages
    /tmp/peer/bin/pip install --no-deps matchzoo-py==1.1.1 dill==0.4.1 hyperopt==0.3.0 \
        pytorch-transformers==1.2.0 sacremoses==0.2.0
    OMP_NUM_THREADS=1 /tmp/peer/bin/python bench/peer_esim.py [--rounds 7] [--threads 1,2] [--sizes paper,shipped] [--out FILE]

The peers are never project dependencies: MatchZoo-py lives in the scratch environment above (it is
imported only here, after giving `collections` the `Iterable`-style aliases Python 3.10 removed, which
MatchZoo 1.1.1 still imports from there). Without it the MatchZoo rows are left out and the script
says so. Contenders, all with the same frozen word vectors, on the same batches (32 pairs of 20-30
tokens, four batches per repetition):
- nlivis: `nlivis.models.esim.ESIM` (MaskedLSTM: exact padding invariance);
- plain unpacked / plain packed: the 80-line ESIM below with nn.LSTM over the padded batch (the backward
  direction reads the padding first, so its outputs depend on how far a batch is padded) or over
  pack_padded_sequence (padding-exact, as nlivis was before it stopped packing);
- MatchZoo-py: `matchzoo.models.ESIM` with hidden_size = 2n (its BiLSTM width is the sum of both
  directions), which makes its projection, composition and MLP twice as wide as ESIM's paper
  (more FLOPs than the others); unpacked, like the plain unpacked one.
A training repetition is forward + cross-entropy + backward + Adam step on each batch; an inference
repetition is an eval-mode forward under inference_mode. Each round measures every contender once, in
a rotating order; the table gives medians over rounds of pairs per second and each contender's ratio
to nlivis.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from harness import Report, add_out_option, command_line, load_average
from nlivis.features.batch import Batch
from nlivis.models import build

SIZES = {"paper": (300, 300), "shipped": (100, 384)}
"""ESIM hidden width n per LSTM direction and word-vector width: configs/esim.toml's paper and shipped sizes."""
VOCAB, PAIRS, BATCHES = 2000, 32, 4


class PlainESIM(nn.Module):
    """ESIM as a plain PyTorch script would write it: nn.LSTM over the padded batch (or packed), masked
    softmax alignment, [a; ã; a − ã; a∘ã] → ReLU projection, composition BiLSTM, mean+max, tanh MLP."""

    def __init__(self, vectors: torch.Tensor, n: int, packed: bool, classes: int = 3, dropout: float = 0.5):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(vectors, freeze=True, padding_idx=0)
        self.encoder = nn.LSTM(vectors.shape[1], n, batch_first=True, bidirectional=True)
        self.projection = nn.Sequential(nn.Linear(8 * n, n), nn.ReLU())
        self.composition = nn.LSTM(n, n, batch_first=True, bidirectional=True)
        self.classifier = nn.Sequential(nn.Linear(8 * n, n), nn.Tanh(), nn.Dropout(dropout), nn.Linear(n, classes))
        self.dropout = nn.Dropout(dropout)
        self.packed = packed

    def run_lstm(self, lstm: nn.LSTM, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if not self.packed:
            return lstm(x)[0]
        packed = pack_padded_sequence(x, mask.sum(1).cpu(), batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=x.shape[1])[0]

    def forward(self, a_ids: torch.Tensor, b_ids: torch.Tensor) -> torch.Tensor:
        # B batch, P / H lengths, n hidden; returns logits [B, classes]
        am, bm = a_ids != 0, b_ids != 0
        a = self.run_lstm(self.encoder, self.dropout(self.embedding(a_ids)), am)  # [B, P, 2n]
        b = self.run_lstm(self.encoder, self.dropout(self.embedding(b_ids)), bm)  # [B, H, 2n]
        scores = torch.bmm(a, b.transpose(1, 2))  # [B, P, H]
        a_tilde = torch.bmm(torch.softmax(scores.masked_fill(~bm.unsqueeze(1), -1e9), dim=2), b)
        b_tilde = torch.bmm(torch.softmax(scores.transpose(1, 2).masked_fill(~am.unsqueeze(1), -1e9), dim=2), a)
        m_a = torch.cat([a, a_tilde, a - a_tilde, a * a_tilde], dim=-1)
        m_b = torch.cat([b, b_tilde, b - b_tilde, b * b_tilde], dim=-1)
        v_a = self.run_lstm(self.composition, self.projection(self.dropout(m_a)), am)
        v_b = self.run_lstm(self.composition, self.projection(self.dropout(m_b)), bm)

        def pool(v: torch.Tensor, m: torch.Tensor) -> list[torch.Tensor]:
            mf = m.unsqueeze(-1).float()
            return [(v * mf).sum(1) / mf.sum(1), v.masked_fill(~m.unsqueeze(-1), -1e9).max(1).values]

        return self.classifier(self.dropout(torch.cat([*pool(v_a, am), *pool(v_b, bm)], dim=-1)))


def load_matchzoo():
    """matchzoo, or None with the reason (it is a scratch-environment peer, never a dependency)."""
    import collections
    import collections.abc

    for name in ("Iterable", "Mapping", "MutableMapping", "Sequence", "Callable"):
        setattr(collections, name, getattr(collections.abc, name))
    try:
        import matchzoo
    except ImportError as error:
        return None, f"MatchZoo-py not importable here ({error}); see this file's docstring"
    return matchzoo, ""


def make_batches(seed: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(premise ids, hypothesis ids, labels): 32 pairs of 20-30 tokens, right-padded with 0."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(BATCHES):
        sides = []
        for _ in range(2):
            lengths = torch.randint(20, 31, (PAIRS,), generator=g)
            ids = torch.randint(2, VOCAB, (PAIRS, int(lengths.max())), generator=g)
            sides.append(ids * (torch.arange(ids.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)))
        out.append((sides[0], sides[1], torch.randint(0, 3, (PAIRS,), generator=g)))
    return out


def nlivis_batch(a: torch.Tensor, b: torch.Tensor, labels: torch.Tensor) -> Batch:
    zeros = [torch.zeros(*t.shape, 1, dtype=torch.long) for t in (a, b)]
    return Batch(premise_ids=a, hypothesis_ids=b, premise_mask=a != 0, hypothesis_mask=b != 0,
                 premise_chars=zeros[0], hypothesis_chars=zeros[1], premise_pos=torch.zeros_like(a),
                 hypothesis_pos=torch.zeros_like(b), premise_exact_match=torch.zeros(a.shape),
                 hypothesis_exact_match=torch.zeros(b.shape), labels=labels)


def contenders(n: int, word_dim: int) -> tuple[dict, str]:
    """name → (model, function(batch triple) → logits)."""
    torch.manual_seed(0)
    vectors = torch.randn(VOCAB, word_dim) * 0.3
    vectors[0] = 0
    models: dict = {}
    ours = build({"name": "esim", "hidden_size": n, "dropout": 0.5, "word_dim": word_dim, "vocab_size": VOCAB,
                  "char_vocab_size": 10, "num_classes": 3, "freeze_word_embeddings": True})
    ours.load_word_vectors(vectors)
    models["nlivis"] = (ours, lambda t: ours(nlivis_batch(*t)))
    for packed in (False, True):
        plain = PlainESIM(vectors, n, packed)
        models[f"plain {'packed' if packed else 'unpacked'}"] = (plain, lambda t, m=plain: m(t[0], t[1]))
    matchzoo, reason = load_matchzoo()
    if matchzoo is not None:
        params = matchzoo.models.ESIM.get_default_params()
        params.update({"task": matchzoo.tasks.Classification(num_classes=3), "embedding": vectors.numpy(),
                       "embedding_freeze": True, "hidden_size": 2 * n, "dropout": 0.5})
        peer = matchzoo.models.ESIM(params=params)
        peer.build()
        models["MatchZoo-py"] = (peer, lambda t, m=peer: m({"text_left": t[0], "text_right": t[1]}))
    return models, reason


def measure(model: nn.Module, call, batches, train: bool, optimizer) -> float:
    """Pairs per second over one repetition (all batches)."""
    start = time.perf_counter()
    if train:
        model.train()
        for t in batches:
            optimizer.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(call(t), t[2]).backward()
            optimizer.step()
    else:
        model.eval()
        with torch.inference_mode():
            for t in batches:
                call(t)
    return PAIRS * len(batches) / (time.perf_counter() - start)


def run(report: Report, size: str, threads: int, rounds: int) -> None:
    torch.set_num_threads(threads)
    n, word_dim = SIZES[size]
    models, reason = contenders(n, word_dim)
    batches = make_batches(seed=1)
    optimizers = {name: torch.optim.Adam([p for p in m.parameters() if p.requires_grad], lr=1e-4)
                  for name, (m, _) in models.items()}
    for name, (model, call) in models.items():  # warm-up
        measure(model, call, batches[:1], True, optimizers[name])
        measure(model, call, batches[:1], False, None)
    rates: dict[str, dict[str, list[float]]] = {name: {"train": [], "infer": []} for name in models}
    names = list(models)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            model, call = models[name]
            rates[name]["train"].append(measure(model, call, batches, True, optimizers[name]))
            rates[name]["infer"].append(measure(model, call, batches, False, None))
    medians = {name: {k: statistics.median(v) for k, v in r.items()} for name, r in rates.items()}
    base = medians["nlivis"]
    for name, (model, _) in models.items():
        params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        m = medians[name]
        report.print(f"| {size} (n={n}, d={word_dim}) | {threads} | {name} | {params / 1e6:.2f}M | {m['train']:.0f} | "
                     f"{m['infer']:.0f} | {base['train'] / m['train']:.2f}× | {base['infer'] / m['infer']:.2f}× |")
    if reason:
        report.print(f"| {size} | {threads} | MatchZoo-py | — | — | — | {reason} | |")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", default="1")
    parser.add_argument("--sizes", default="paper,shipped")
    add_out_option(parser)
    args = parser.parse_args()
    with Report(args.out) as report:
        report.print(command_line(f"torch {torch.__version__}, {os.cpu_count()} CPUs, median of {args.rounds} "
                                  "alternating rounds"), load_average("start") + "\n",
                     "| size | threads | model | trained parameters | train pairs/s | infer pairs/s | "
                     "nlivis ÷ it, train | nlivis ÷ it, infer |", "|---|---|---|---|---|---|---|---|")
        for size in args.sizes.split(","):
            for threads in (int(t) for t in args.threads.split(",")):
                run(report, size, threads, args.rounds)
        report.print("\n" + load_average("end"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Same maths before and after a speed change: logits, trace tensors and gradients on fixed batches.

    python bench/equivalence.py save /tmp/nlivis-ref.pt      # with the code before the change
    python bench/equivalence.py compare /tmp/nlivis-ref.pt [amn esan ...]   # after it; exit 1 on a difference

Every config in configs/ is built twice (shipped size, and the paper size with a small vocabulary)
with a fixed seed and run in eval mode (dropout off) on fixed synthetic batches of mixed lengths. The
saved parameters are loaded back by name before the comparison, so a change that renames or reshapes
a parameter fails loudly (checkpoints must keep loading), and differences are float round-off only.
Each comparison runs twice, with every token convolution in its oneDNN form and in its window form
(nlivis/models/layers/conv.py picks one by size).
"""
from __future__ import annotations

import sys

import torch

import harness  # noqa: F401  (puts this checkout's nlivis first on sys.path)
from nlivis.workflows.bench import bench_config
from nlivis.features.batch import Batch
from nlivis.features.pos import NUM_POS_TAGS
from nlivis.models import build
from nlivis.training.config import all_configs

SIZES = ("shipped", "paper")
ATOL, RTOL = 2e-5, 1e-4


def fixed_batch(batch_size: int, max_premise: int, max_hypothesis: int, seed: int, vocab: int) -> Batch:
    """Random ids, premise ~ 14±6 tokens and hypothesis ~ 8±3, cut at the limits (frozen here so the
    saved reference and a later comparison always see the same batch)."""
    g = torch.Generator().manual_seed(seed)

    def lengths(mean: float, std: float, cap: int) -> torch.Tensor:
        return (torch.randn(batch_size, generator=g) * std + mean).round().clamp(3, cap).long()

    def side(lens: torch.Tensor):
        t = int(lens.max())
        mask = torch.arange(t).unsqueeze(0) < lens.unsqueeze(1)
        ids = torch.randint(2, vocab, (batch_size, t), generator=g) * mask
        chars = torch.randint(2, 100, (batch_size, t, 16), generator=g) * mask.unsqueeze(-1)
        pos = torch.randint(1, NUM_POS_TAGS, (batch_size, t), generator=g) * mask
        exact = (torch.rand(batch_size, t, generator=g) < 0.2).float() * mask
        return ids, mask, chars, pos, exact

    p = side(lengths(14, 6, max_premise))
    h = side(lengths(8, 3, max_hypothesis))
    return Batch(premise_ids=p[0], hypothesis_ids=h[0], premise_mask=p[1], hypothesis_mask=h[1],
                 premise_chars=p[2], hypothesis_chars=h[2], premise_pos=p[3], hypothesis_pos=h[3],
                 premise_exact_match=p[4], hypothesis_exact_match=h[4],
                 labels=torch.randint(0, 3, (batch_size,), generator=g))


def run_one(config_name: str, size: str, state: dict | None) -> dict:
    config = bench_config(config_name, size)
    config["model"]["vocab_size"] = 500  # small embedding: this checks maths, not speed
    config["model"]["word_dim"] = 300  # fixed, so references saved before bench_config used 384 for shipped still load
    torch.manual_seed(0)
    model = build(config["model"])
    if state is not None:
        model.load_state_dict(state)  # strict: same names and shapes
    model.eval()
    batch = fixed_batch(6, 24, 16, seed=5, vocab=500)
    batch.labels = torch.tensor([0, 1, 2, 0, 1, 2]) % model.config.num_classes
    logits, trace = model(batch, trace=True)
    model.loss(logits, batch.labels).backward()
    out = {"state": {k: v.detach().clone() for k, v in model.state_dict().items()},
           "logits": logits.detach(),
           "grads": {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}}
    for name, entry in trace.items():
        for field, value in vars(entry).items():
            if isinstance(value, torch.Tensor):
                out[f"trace/{name}/{field}"] = value.detach()
    with torch.no_grad():
        out["logits_untraced"] = model(batch)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("save", "compare"):
        print(__doc__)
        return 2
    mode, path, prefixes = argv[0], argv[1], tuple(argv[2:])
    names = sorted(all_configs())
    if mode == "save":
        torch.save({(n, s): run_one(n, s, None) for n in names for s in SIZES}, path)
        print(f"saved {len(names) * len(SIZES)} reference runs to {path}")
        return 0
    reference = torch.load(path, weights_only=True)  # tensors and dicts only: nothing is unpickled
    failures = 0
    from nlivis.models.layers import conv

    runs = [(name, size, ref, elements) for (name, size), ref in reference.items()
            if not prefixes or name.startswith(prefixes) for elements in (0, 10**12)]
    for name, size, ref, elements in runs:
        conv.WINDOW_ELEMENTS = elements  # both forms of every convolution: oneDNN, then windows
        got = run_one(name, size, ref["state"])
        keys = [k for k in ref if k != "state"]
        problems = []
        for key in keys:
            if key == "grads":
                if set(ref[key]) != set(got[key]):
                    problems.append(f"grad names differ: {set(ref[key]) ^ set(got[key])}")
                    continue
                for pname in ref[key]:
                    if not torch.allclose(got[key][pname], ref[key][pname], atol=ATOL, rtol=RTOL):
                        diff = (got[key][pname] - ref[key][pname]).abs().max().item()
                        problems.append(f"grad {pname} differs by {diff:.2e}")
            elif key not in got:
                problems.append(f"{key} missing")
            elif got[key].shape != ref[key].shape:
                problems.append(f"{key} shape {list(ref[key].shape)} → {list(got[key].shape)}")
            elif not torch.allclose(got[key], ref[key], atol=ATOL, rtol=RTOL, equal_nan=True):
                problems.append(f"{key} differs by {(got[key] - ref[key]).abs().max().item():.2e}")
        extra = set(got) - set(ref)
        if extra:
            problems.append(f"new outputs {sorted(extra)}")
        status = "ok" if not problems else "DIFFERENT: " + "; ".join(problems[:5])
        failures += bool(problems)
        print(f"{name:32s} {size:8s} {'windows' if elements else 'oneDNN':8s} {status}")
    print("all equal to float tolerance" if not failures else f"{failures} run(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""oneDNN `nn.Conv1d` against the window product of nlivis/models/layers/conv.py, shape by shape.

    python bench/conv_forms.py [--threads 1] [--out FILE]

Process CPU time per call (median of 3 rounds), inference and forward+backward, at the shapes the
models meet: one pair (the app), ESAN's 8×20 latency batch, training and inference batches. The
`WINDOW_ELEMENTS` threshold in layers/conv.py comes from this table.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from harness import Report, add_out_option
from nlivis.models.layers.conv import token_windows

SHAPES = [  # (batch, tokens, in, out, width, what)
    (1, 10, 384, 128, 3, "one pair, GCNN shipped layer 1"),
    (1, 10, 128, 128, 3, "one pair, GCNN shipped layer 2"),
    (1, 10, 384, 384, 1, "one pair, AttentiveConvNet uni-gram gate"),
    (10, 16, 8, 50, 5, "one pair, char-CNN (10 words × 16 chars)"),
    (8, 20, 384, 128, 3, "8×20 latency batch"),
    (8, 20, 300, 300, 3, "8×20, GCNN paper width"),
    (64, 25, 384, 128, 3, "training batch, GCNN shipped layer 1"),
    (64, 35, 300, 300, 3, "training batch, GCNN paper"),
    (50, 25, 384, 384, 1, "training batch, width 1"),
    (256, 25, 384, 128, 3, "inference batch 256"),
]


def per_call_ms(fn, calls: int) -> float:
    fn()
    rounds = []
    for _ in range(3):
        start = time.process_time()
        for _ in range(calls):
            fn()
        rounds.append((time.process_time() - start) / calls)
    return statistics.median(rounds) * 1000


def forms_row(b: int, t: int, m: int, n: int, k: int, what: str) -> str:
    """One shape: ms per call of both forms, inference and forward+backward."""
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(m, n, k, padding=k // 2)
    x = torch.randn(b, t, m, requires_grad=True)
    weight = conv.weight

    def onednn():
        return conv(x.transpose(1, 2)).transpose(1, 2)

    def windows():
        return torch.nn.functional.linear(token_windows(x, k, k // 2), weight.reshape(n, -1), conv.bias)

    calls = max(2, int(20000 / (b * t)))
    with torch.inference_mode():
        infer = [per_call_ms(f, calls) for f in (onednn, windows)]
    train = [per_call_ms(lambda f=f: f().sum().backward(), max(1, calls // 3)) for f in (onednn, windows)]
    return f"| {b}×{t}, {m}→{n}, {k} | {what} | {infer[0]:.2f} | {infer[1]:.2f} | {train[0]:.2f} | {train[1]:.2f} |"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    add_out_option(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with Report(args.out) as report:
        report.print(f"torch {torch.__version__}, {args.threads} thread(s); ms per call (process CPU time)",
                     "| shape B×T, in→out, width | what | oneDNN infer | windows infer | oneDNN fwd+bwd | windows fwd+bwd |",
                     "|---|---|---|---|---|---|")
        for shape in SHAPES:
            report.print(forms_row(*shape))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""1-D convolutions over the token axis of [B, T, m] tensors, computed the cheaper of two ways.

`nn.Conv1d` on CPU goes through oneDNN, which wants channels first (two transposed copies per layer)
and costs about 0.1-0.25 ms per call whatever the size. For a small input (the app's one-pair
analysis) that fixed cost dominates, and one matrix product over sliding windows is 2-4× faster
(0.24 → 0.07 ms for a 10-token sentence, 384 → 128 channels, width 3); from ESAN's 8×20 latency batch
up, building the windows costs more than it saves, and a width-1 convolution is a plain matrix
product at every size (bench/conv_forms.py has the table). `TokenConv` picks the form once per input,
so several convolutions over the same input (a gate and its candidate) share the windows or the
transposed copy. The weights stay `nn.Conv1d` parameters ([out, in, width]), so checkpoints and
parameter names are those of the convolution; both forms equal `conv(x.transpose(1, 2)).transpose(1, 2)`
up to float round-off (bench/equivalence.py checks every model in both).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

WINDOW_ELEMENTS = 65_536
"""Window tensors up to this many elements (B·T·m·width) are multiplied directly; larger inputs go to
oneDNN. One 32-token sentence at 384 channels, width 3, is 36,864; the 8×20 batch is 184,320."""


def token_windows(x: torch.Tensor, width: int, padding: int) -> torch.Tensor:
    """[B, T, m] → [B, T + 2·padding − width + 1, m·width]: each position's window, channel-major
    (index c·width + j holds x[t − padding + j, c]), zero outside the sequence, as Conv1d sees it."""
    if width == 1 and padding == 0:
        return x
    padded = F.pad(x, (0, 0, padding, padding)) if padding else x
    windows = padded.unfold(1, width, 1)  # [B, T', m, width]
    return windows.reshape(*windows.shape[:2], -1)


class TokenConv:
    """One input [B, T, m] prepared for the convolutions of a given width and padding."""

    def __init__(self, x: torch.Tensor, width: int, padding: int):
        self.width, self.padding = width, padding
        self.as_windows = (width == 1 and padding == 0) or x.numel() * width <= WINDOW_ELEMENTS
        self.input = token_windows(x, width, padding) if self.as_windows else x.transpose(1, 2)

    @classmethod
    def for_conv(cls, x: torch.Tensor, conv: nn.Conv1d) -> TokenConv:
        """`x` prepared for `conv` and every other convolution of its width and padding."""
        return cls(x, conv.kernel_size[0], conv.padding[0])

    def __call__(self, conv: nn.Conv1d) -> torch.Tensor:
        """`conv` (of the width and padding this input was prepared for) applied to it → [B, T', out]."""
        if (conv.kernel_size[0], conv.padding[0]) != (self.width, self.padding):
            raise ValueError(f"input prepared for width {self.width}, padding {self.padding}; "
                             f"the convolution has {conv.kernel_size[0]}, {conv.padding[0]}")
        if self.as_windows:
            return F.linear(self.input, conv.weight.reshape(conv.out_channels, -1), conv.bias)
        return conv(self.input).transpose(1, 2)


def conv_tokens(x: torch.Tensor, conv: nn.Conv1d) -> torch.Tensor:
    """`conv` over the token axis of [B, T, m] → [B, T', out] (T' = T for odd width and "same" padding)."""
    return TokenConv.for_conv(x, conv)(conv)

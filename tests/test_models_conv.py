"""Token convolutions (nlivis/models/layers/conv.py): both forms equal nn.Conv1d over [B, T, m]."""
import pytest
import torch

from nlivis.models.layers import conv as token_conv
from nlivis.models.layers.conv import TokenConv, conv_tokens, token_windows


@pytest.mark.parametrize("width", [1, 3, 5])
@pytest.mark.parametrize("elements", [0, 10**9])
def test_both_forms_equal_conv1d(monkeypatch, width, elements):
    monkeypatch.setattr(token_conv, "WINDOW_ELEMENTS", elements)
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(7, 5, width, padding=width // 2)
    x = torch.randn(3, 9, 7, requires_grad=True)
    expected = conv(x.transpose(1, 2)).transpose(1, 2)
    got = conv_tokens(x, conv)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    grad_expected = torch.autograd.grad(expected.square().sum(), [x, conv.weight])
    grad_got = torch.autograd.grad(got.square().sum(), [x, conv.weight])
    for a, b in zip(grad_got, grad_expected):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_form_follows_size_and_width(monkeypatch):
    monkeypatch.setattr(token_conv, "WINDOW_ELEMENTS", 240)
    assert TokenConv(torch.zeros(2, 10, 4), 3, 1).as_windows  # 2·10·4·3 = 240 window elements
    assert not TokenConv(torch.zeros(3, 10, 4), 3, 1).as_windows
    assert TokenConv(torch.zeros(30, 10, 4), 1, 0).as_windows  # width 1 is a matrix product at any size


def test_windows_are_channel_major_and_zero_padded():
    x = torch.arange(6.0).view(1, 3, 2)  # tokens [0,1], [2,3], [4,5]
    windows = token_windows(x, 3, 1)
    assert windows.shape == (1, 3, 6)
    assert windows[0, 0].tolist() == [0, 0, 2, 0, 1, 3]  # channel 0: (pad, 0, 2); channel 1: (pad, 1, 3)


def test_prepared_input_refuses_a_convolution_of_another_shape():
    x = TokenConv.for_conv(torch.zeros(1, 4, 2), torch.nn.Conv1d(2, 3, 3, padding=1))
    assert (x.width, x.padding) == (3, 1)
    x(torch.nn.Conv1d(2, 5, 3, padding=1))  # same width and padding: fine
    with pytest.raises(ValueError, match="prepared for width 3, padding 1"):
        x(torch.nn.Conv1d(2, 3, 5, padding=2))

"""Whether a checkpoint's weights are stored in fp16: only when rounding them costs nothing on the select
split (the rule below), and then every recorded prediction comes from the rounded weights."""
from __future__ import annotations

import copy
from typing import Any, Sequence

import torch
from torch import nn

from nlivis.inference import accuracy_of, predict_probabilities
from nlivis.store.weights import fetched_state_keys, word_embedding_key

FP16_MAX_ACCURACY_CHANGE = 0.0005
"""fp16 weights are kept when they move select-split accuracy by at most this (0.05 points: 5 pairs in
10k, a tenth of the seed-to-seed spread measured on snli-small)."""
FP16_MAX_LABELS_CHANGED = 0.002
"""… and flip at most this fraction of the select-split labels (near-ties only)."""


def rounded_to_fp16(model: nn.Module, keep: tuple[str, ...] = ()) -> nn.Module:
    """A copy of `model` whose floating weights are rounded to fp16 (kept in their dtype): what loading
    an fp16-stored checkpoint gives. `keep` names state-dict keys stored elsewhere at their own precision
    (the shared frozen word vectors), which stay as they are."""
    rounded = copy.deepcopy(model)
    with torch.no_grad():
        for name, tensor in rounded.state_dict().items():
            if tensor.is_floating_point() and name not in keep:
                tensor.copy_(tensor.to(torch.float16).to(tensor.dtype))
    return rounded


def fp16_verdict(items: Sequence, fp32: torch.Tensor, fp16: torch.Tensor, labels: Sequence[str]) -> dict[str, Any]:
    """Whether fp16 weights cost nothing on the select split: accuracy moves by at most
    `FP16_MAX_ACCURACY_CHANGE` and at most `FP16_MAX_LABELS_CHANGED` of the labels flip. Returns the
    check as recorded in config.json (`use_fp16` says the verdict)."""
    changed = int((fp16.argmax(-1) != fp32.argmax(-1)).sum().item())
    accuracy32, accuracy16 = accuracy_of(items, fp32, labels), accuracy_of(items, fp16, labels)
    use_fp16 = (abs(accuracy16 - accuracy32) <= FP16_MAX_ACCURACY_CHANGE
                and changed <= FP16_MAX_LABELS_CHANGED * max(1, len(items)))
    return {"use_fp16": use_fp16, "pairs_checked": len(items), "predictions_changed_by_fp16": changed,
            "fp32_accuracy": round(accuracy32, 6), "fp16_accuracy": round(accuracy16, 6),
            "max_probability_change": round(float((fp16 - fp32).abs().max().item()) if len(items) else 0.0, 6),
            "rule": f"fp16 when select accuracy moves by <= {FP16_MAX_ACCURACY_CHANGE} and <= "
                    f"{FP16_MAX_LABELS_CHANGED:.1%} of labels flip; recorded predictions come from the stored weights"}


def choose_weights_dtype(model: nn.Module, featurizer, items: Sequence, reference: torch.Tensor,
                         batch_size: int, device: torch.device, labels: Sequence[str], shared_embeddings: bool,
                         ) -> tuple[torch.dtype, dict[str, Any], tuple[nn.Module, torch.Tensor] | None]:
    """fp16 when rounding the weights to fp16 costs nothing on the select split (`fp16_verdict`), else
    fp32; also returns the rounded model and its select-split probabilities when fp16 wins, so every
    recorded prediction comes from the weights as stored. Shared frozen word vectors and the tensors rebuilt from
    a fetched file (`fetched_state_keys`) are not part of model.safetensors and are not rounded."""
    kept = ((word_embedding_key(model),) if shared_embeddings else ()) + fetched_state_keys(model)
    rounded = rounded_to_fp16(model, keep=kept)
    probabilities = predict_probabilities(rounded, featurizer, items, batch_size, device)
    check = fp16_verdict(items, reference, probabilities, labels)
    dtype = torch.float16 if check.pop("use_fp16") else torch.float32
    check = {"stored_as": str(dtype).removeprefix("torch."), **check}
    return dtype, check, ((rounded, probabilities) if dtype == torch.float16 else None)

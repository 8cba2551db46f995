"""Target features recomputed from token ids by teacher forcing, for heads that read inner layers (EAGLE-3).

The corpus need not store features: one batched forward pass of the frozen target over the token ids gives,
at every position, the outputs of the chosen decoder layers (tapped with the same hooks as the decode loop,
engine/decode.body_pass) and the final normed hidden state (whose LM-head logits are the target's p).
Sequences of different lengths are right-padded: causal attention never lets a real position see a pad, so
the real positions get what an unpadded pass gives; the padded ones are garbage and must be masked out.

Helper i24-corpus is adding `specviz/train/corpus.py: features(target, ids_batch, layers)`; until the two are
reconciled, this module is the one the EAGLE-3 trainer calls.
"""
from __future__ import annotations

import torch

from specviz.engine.decode import body_pass
from specviz.engine.models import LoadedModel


@torch.no_grad()
def teacher_forced(target: LoadedModel, ids: torch.Tensor, layers: tuple[int, ...]
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """ids (B, T) -> (the outputs of `layers` concatenated (B, T, n*H), the final normed hidden state (B, T, H)),
    both float32 on the target's device. no_grad, not inference_mode: the results feed a graph being trained."""
    final, fused = body_pass(target.model.get_decoder(), tuple(layers), input_ids=ids.to(target.device))
    return fused.float(), final.float()                                         # (B, T, n*H), (B, T, H)


def features(target: LoadedModel, ids: torch.Tensor, layers: tuple[int, ...]) -> torch.Tensor:
    """ids (B, T) -> the outputs of `layers` concatenated, (B, T, n*H) float32 on the target's device."""
    return teacher_forced(target, ids, layers)[0]

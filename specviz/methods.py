"""Method names -> proposers, and prompt encoding: the one place the app, CLI and bench build a run.

Later proposers (trained drafter, Medusa, EAGLE) register here by adding to METHODS and to
make_proposer(); the app lists available_methods().
"""
from __future__ import annotations

import torch

from .decode import InputError
from .models import LoadedModel, check_same_tokenizer
from .proposers.base import Plain, Proposer
from .proposers.draft_model import DraftModel
from .proposers.lookup import PromptLookup

METHODS = {
    "plain": "plain decoding (no draft)",
    "lookup": "n-gram prompt lookup",
    "draft": "separate draft model",
}


def available_methods(drafter_available: bool = True) -> list[str]:
    return [m for m in METHODS if m != "draft" or drafter_available]


def make_proposer(method: str, target: LoadedModel, n: int = 3, n_min: int | None = None,
                  n_max: int | None = None, drafter: LoadedModel | None = None) -> Proposer:
    if method == "plain":
        return Plain()
    if method == "lookup":
        if n_min is not None or n_max is not None:
            lo, hi = (n_min or 1), (n_max or max(n, n_min or 1))
        else:
            lo = hi = n
        if lo < 1:
            raise InputError(f"n must be >= 1, got {lo}")
        if lo > hi:
            raise InputError(f"n-min ({lo}) must not exceed n-max ({hi})")
        return PromptLookup(n_min=lo, n_max=hi)
    if method == "draft":
        if drafter is None:
            raise InputError("method 'draft' needs a drafter model")
        check_same_tokenizer(target.tokenizer, drafter.tokenizer, target.vocab_size, drafter.vocab_size)
        return DraftModel(drafter.model, name="draft")
    raise InputError(f"unknown method '{method}' (choose from: {', '.join(METHODS)})")


def encode_prompt(tokenizer, text: str, chat: bool) -> list[int]:
    """Text -> token ids; with chat=True, wrapped in the model's chat template."""
    if not text or not text.strip():
        raise InputError("the prompt is empty")
    if chat:
        out = tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                            add_generation_prompt=True, return_tensors="pt")
        ids = out["input_ids"] if not torch.is_tensor(out) else out
        return ids[0].tolist()
    return tokenizer(text)["input_ids"]

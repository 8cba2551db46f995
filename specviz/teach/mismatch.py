"""The tokenizer-mismatch demo: a drafter whose vocabulary is not the target's, and why it is refused.

The other tokenizer is built offline and deterministically: a small byte-level BPE trained with the
`tokenizers` library on the project's own workload texts. The drafter is a tiny random Llama with
that vocabulary. Pairing it with the target goes through the same check the app uses for every
drafter (models.check_same_tokenizer), so the refusal shown is the real one.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from specviz.core.errors import ModelError
from specviz.engine.models import LoadedModel, check_same_tokenizer, tiny_llama
from specviz.engine.workloads import WORKLOADS

OTHER_VOCAB = 600  # small on purpose: trained in well under a second


@functools.lru_cache(maxsize=2)
def other_tokenizer(vocab_size: int = OTHER_VOCAB):
    """A byte-level BPE trained on the workload prompts (same input -> same vocabulary, every time)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([w.prompt for w in WORKLOADS], trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>")


def other_drafter(seed: int = 7) -> LoadedModel:
    """A tiny random Llama over the other tokenizer's vocabulary."""
    tok = other_tokenizer()
    m = tiny_llama(vocab_size=len(tok), layers=2, hidden=32, seed=seed)
    m.tokenizer = tok
    m.name = f"tiny drafter with its own {len(tok)}-token BPE"
    return m


@dataclass
class Mismatch:
    target_vocab: int             # token ids the target scores (its output layer)
    drafter_vocab: int
    text: str
    target_ids: list[int]
    drafter_ids: list[int]
    target_pieces: list[str]
    drafter_pieces: list[str]
    refusal: str | None           # the ModelError message; None would mean the pair was accepted

    @property
    def first_difference(self) -> int | None:
        for i, (a, b) in enumerate(zip(self.target_ids, self.drafter_ids)):
            if a != b:
                return i
        return None if len(self.target_ids) == len(self.drafter_ids) else min(len(self.target_ids),
                                                                               len(self.drafter_ids))


def demo(target: LoadedModel, drafter: LoadedModel, text: str) -> Mismatch:
    """Tokenize `text` with both and try the pairing the draft-model proposer would make."""
    tt, dt = target.tokenizer, drafter.tokenizer
    a = tt(text, add_special_tokens=False)["input_ids"]
    b = dt(text, add_special_tokens=False)["input_ids"]
    try:
        check_same_tokenizer(tt, dt, target.vocab_size, drafter.vocab_size)
        refusal = None
    except ModelError as e:
        refusal = str(e)
    return Mismatch(target.vocab_size, drafter.vocab_size, text, a, b,
                    tt.convert_ids_to_tokens(a), dt.convert_ids_to_tokens(b), refusal)

"""Medusa heads saved, as training saves them, for a given (tiny) target: the loader's card then names
that target's fingerprint (shared by tests/tiny and tests/app)."""
import torch

from specviz.engine import artifacts
from specviz.proposers.medusa import MedusaHeads


def save_medusa_for(target, folder, n_heads: int = 2) -> None:
    """Untrained heads with target's hidden size, its whole vocabulary, and its fingerprint on the card."""
    H = target.model.config.hidden_size
    heads = {f"heads.{k}": v for k, v in MedusaHeads(H, n_heads).state_dict().items()}
    artifacts.save("medusa", {**heads, "vocab_ids": torch.arange(target.vocab_size)},
                   {"n_heads": n_heads, "hidden_size": H, "target_fingerprint": target.fingerprint()}, folder=folder)

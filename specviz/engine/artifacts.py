"""Shipped trained proposers (models/): save, describe and load them against a target.

Each artifact is a bfloat16 safetensors file plus a JSON card. The card carries the fingerprint
of the target checkpoint it was trained against; loading it against another checkpoint warns
(heads are fitted to one model's hidden states) and still runs where the shapes allow.
"""
from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from specviz.core.errors import ModelError
from specviz.engine.models import LoadedModel

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"  # the repository's models/
NAMES = ("drafter", "medusa", "eagle", "eagle3", "lora")
FINETUNED_LABEL = "SmolLM2-135M-Instruct + LoRA fine-tune (Python docs)"


class CheckpointMismatch(UserWarning):
    """An artifact is loaded against a target it was not trained for."""


def _dir(folder) -> Path:
    return Path(folder) if folder is not None else MODELS_DIR


def available(folder=None) -> dict[str, bool]:
    d = _dir(folder)
    return {n: (d / f"{n}.safetensors").exists() and (d / f"{n}.json").exists() for n in NAMES}


def card(name: str, folder=None) -> dict:
    path = _dir(folder) / f"{name}.json"
    if not path.exists():
        raise ModelError(f"no trained '{name}' in {path.parent} (train it: python -m specviz train {name})")
    return json.loads(path.read_text())


def save(name: str, tensors: dict, card_fields: dict, folder=None) -> dict:
    """Write <name>.safetensors (floating tensors in bfloat16) and <name>.json; returns the card."""
    d = _dir(folder)
    d.mkdir(parents=True, exist_ok=True)
    out = {k: (v.detach().to(torch.bfloat16) if v.is_floating_point() else v.detach()).contiguous().cpu()
           for k, v in tensors.items()}
    path = d / f"{name}.safetensors"
    save_file(out, str(path))
    c = dict(card_fields, name=name, file=path.name, bytes=path.stat().st_size)
    (d / f"{name}.json").write_text(json.dumps(c, indent=1))
    return c


def _load(name: str, target: LoadedModel, folder=None) -> tuple[dict, dict]:
    c = card(name, folder)
    fp = c.get("target_fingerprint")
    if fp and fp != target.fingerprint():
        warnings.warn(f"the {name} artifact was trained for another checkpoint (fingerprint {fp[:12]}…, "
                      f"this target is {target.fingerprint()[:12]}…): its predictions are fitted to that "
                      "model's hidden states, so expect lower acceptance", CheckpointMismatch, stacklevel=3)
    t = load_file(str(_dir(folder) / c["file"]))
    H = target.model.config.hidden_size
    if c.get("hidden_size", H) != H:
        raise ModelError(f"the {name} artifact needs hidden size {c['hidden_size']}, this target has {H}")
    return c, t


def _vocab(t: dict, target: LoadedModel) -> torch.Tensor:
    ids = t["vocab_ids"].long()
    return ids[ids < target.vocab_size]


def _cast(module: torch.nn.Module, target: LoadedModel) -> torch.nn.Module:
    return module.to(target.device, target.dtype).eval()


def load_medusa(target: LoadedModel, folder=None, tree: bool = False):
    """The shipped Medusa heads: drafting a chain, or (tree=True) Medusa's sparse candidate tree."""
    from specviz.proposers.medusa import Medusa, MedusaHeads, MedusaTree
    from specviz.proposers.vocab import SubsetHead

    c, t = _load("medusa", target, folder)
    heads = MedusaHeads(target.model.config.hidden_size, c["n_heads"])
    heads.load_state_dict({k[6:]: v for k, v in t.items() if k.startswith("heads.")})
    out = SubsetHead(target.model.get_output_embeddings().weight, _vocab(t, target))
    return (MedusaTree if tree else Medusa)(_cast(heads, target), out)


def load_eagle(target: LoadedModel, folder=None, tree: bool = False, kind: str = "eagle"):
    """The shipped EAGLE head (kind "eagle") or EAGLE-3 head (kind "eagle3", reading the target layers its card
    names): drafting a chain, or (tree=True) EAGLE-2's dynamic tree."""
    from specviz.proposers.eagle import Eagle, EagleHead
    from specviz.proposers.eagle_tree import EagleTree
    from specviz.proposers.vocab import SubsetHead

    c, t = _load(kind, target, folder)
    layers = ()
    if kind == "eagle3":
        from specviz.core.errors import InputError
        try:
            layers = EagleHead.for_target(target.model.config, c["feature_layers"]).feature_layers
        except InputError as e:
            raise ModelError(f"the eagle3 artifact reads target layers {c['feature_layers']}: {e}") from None
    head = EagleHead.for_target(target.model.config, layers)
    head.load_state_dict({k[5:]: v for k, v in t.items() if k.startswith("head.")})
    out = SubsetHead(target.model.get_output_embeddings().weight, _vocab(t, target))
    return (EagleTree if tree else Eagle)(_cast(head, target), target.model.get_input_embeddings(), out,
                                          name=kind + ("-tree" if tree else ""))


def load_drafter(target: LoadedModel, folder=None) -> LoadedModel:
    """The distilled drafter as a complete causal LM (sharing the target's embedding and LM head)."""
    from specviz.proposers.draft_model import build_drafter

    c, t = _load("drafter", target, folder)
    m = build_drafter(target.model, c["n_layers"], _vocab(t, target))
    m.load_state_dict({k[6:]: v for k, v in t.items() if k.startswith("model.")}, strict=False)
    m.to(target.device)
    for mod in (m.model.layers, m.model.norm):
        mod.to(target.dtype)
    return LoadedModel(name=f"distilled drafter ({c['n_layers']} layers, trained for {target.name})",
                       model=m.eval(), tokenizer=target.tokenizer, device=target.device, dtype=target.dtype)


def merge_lora(model: torch.nn.Module, t: dict, scale: float) -> None:
    """W += scale * B @ A for every adapted linear (keys '<module>.lora_A' / '<module>.lora_B')."""
    mods = dict(model.named_modules())
    for key in [k for k in t if k.endswith(".lora_A")]:
        name = key[: -len(".lora_A")]
        if name not in mods:
            raise ModelError(f"the LoRA delta adapts '{name}', which this target does not have")
        w = mods[name].weight
        B, A = (t[k].to(w.device, torch.float32) for k in (name + ".lora_B", key))    # read on the CPU
        delta = (B @ A) * scale                                                          # (out, in)
        if delta.shape != w.shape:
            raise ModelError(f"LoRA delta for '{name}' has shape {tuple(delta.shape)}, the weight {tuple(w.shape)}")
        with torch.no_grad():
            w.add_(delta.to(w.dtype))


def load_finetuned_target(target: LoadedModel, folder=None) -> LoadedModel:
    """A copy of the target with the shipped LoRA delta merged in: another checkpoint, same shapes."""
    c, t = _load("lora", target, folder)
    model = copy.deepcopy(target.model)
    if model.config.tie_word_embeddings and "lm_head" in str(c.get("modules", "")):
        model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    merge_lora(model, t, c["alpha"] / c["rank"])
    return LoadedModel(name=FINETUNED_LABEL, model=model.eval(), tokenizer=target.tokenizer,
                       device=target.device, dtype=target.dtype)

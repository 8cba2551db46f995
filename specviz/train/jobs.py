"""One function per training job: load data, train (resumably), evaluate, ship artifact + card."""
from __future__ import annotations

import datetime
import platform

import torch

from specviz.engine import artifacts
from specviz.engine.models import LoadedModel
from specviz.proposers.draft_model import build_drafter
from specviz.train import common, corpus as corpus_mod
from specviz.train.data import HELDOUT, draft_vocab, load_split


def _corpus_info(corpus_dir) -> dict:
    """The corpus's size and recipe; for several folders, the sizes summed and each seed listed."""
    infos = []
    for d in corpus_mod.dirs(corpus_dir):
        info = corpus_mod.folder_meta(d)
        infos.append({k: info[k] for k in ("shards", "sequences", "tokens", "reply_tokens", "seed", "temperature",
                                           "sampled_share", "n_prompts") if k in info})
    split = {"heldout_split": f"prompt hash, {HELDOUT:.0%} of distinct prompts",
             "folders": [str(d) for d in corpus_mod.dirs(corpus_dir)]}
    if len(infos) == 1:
        return {**infos[0], **split}
    sizes = ("shards", "sequences", "tokens", "reply_tokens", "n_prompts")
    out = {**split, **{k: sum(i.get(k, 0) for i in infos) for k in sizes}}
    out.update(seeds=[i.get("seed") for i in infos], temperature=infos[0].get("temperature"),
               sampled_share=infos[0].get("sampled_share"))
    return out


def _save_with_vocab(kind: str, prefix: str, state: dict, ids, card: dict, out_dir) -> dict:
    """Save a trained drafter's weights (`state`, each under `prefix`.) with its draft vocabulary's ids."""
    tensors = {f"{prefix}.{k}": v for k, v in state.items()}
    tensors["vocab_ids"] = ids.int()
    return artifacts.save(kind, tensors, card, out_dir)


def _card(target: LoadedModel, corpus_dir, log: dict, **extra) -> dict:
    losses = log.get("losses", [])
    tail = losses[-20:] or [float("nan")]
    return dict(
        target=target.name, target_fingerprint=target.fingerprint(),
        hidden_size=target.model.config.hidden_size,
        corpus=_corpus_info(corpus_dir) if corpus_dir else None,
        steps=log["steps_done"], wall_s=round(log["wall_s"], 1),
        device=str(next(iter(target.model.parameters())).device), threads=torch.get_num_threads(),
        machine=platform.processor() or platform.machine(),
        final_loss=round(sum(tail) / len(tail), 4), first_loss=losses[0] if losses else None,
        stopped_early=bool(log.get("stopped_early")),
        trained_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        command=common.cli_command(), **extra)


def _vocab(target, train, size):
    tok = target.tokenizer
    always = [i for i in {getattr(tok, "eos_token_id", None), getattr(tok, "bos_token_id", None)}
              if i is not None] if tok is not None else []
    return draft_vocab(train, size, target.vocab_size, always)


def _head_data(target, corpus_dir, vocab: int, cache, layers=None):
    """A head job's (train, held-out) split, its draft vocabulary ids and the SubsetHead over them."""
    from specviz.proposers.vocab import SubsetHead

    train, held = load_split(corpus_dir, target=target, layers=layers, cache=cache)
    ids = _vocab(target, train, vocab)
    return train, held, ids, SubsetHead(target.model.get_output_embeddings().weight, ids)


def medusa(target: LoadedModel, corpus_dir, run_dir, out_dir=None, steps: int = 300, tokens: int = 512,
           lr: float = 1e-3, vocab: int = 8192, n_heads: int = 4, max_minutes=None, progress=True,
           features_cache=None) -> dict:
    from specviz.train import medusa as tm

    train, held, ids, out = _head_data(target, corpus_dir, vocab, features_cache)
    heads = medusa_heads(target, n_heads)
    H, Y, _ = tm.flatten(train, n_heads, out)
    before = tm.evaluate(heads, out, held, train)
    log = common.train(heads, tm.make_loss(heads, out, H, Y, tokens), run_dir, steps, lr=lr,
                       max_minutes=max_minutes, device=target.device, progress=progress, desc="medusa",
                       eval_fn=lambda: tm.evaluate(heads, out, held, train))
    c = _card(target, corpus_dir, log, kind="medusa", n_heads=n_heads, tokens_per_step=tokens, lr=lr,
              draft_vocab_size=len(ids), heldout_before=before, heldout=log["eval"])
    return _save_with_vocab("medusa", "heads", heads.state_dict(), ids, c, out_dir)


def eagle(target: LoadedModel, corpus_dir, run_dir, out_dir=None, steps: int = 300, tokens: int = 768,
          lr: float = 1e-3, vocab: int = 8192, n_passes: int = 3, max_minutes=None, progress=True,
          init: str = "identity", mode: str = "ce", features_cache=None, reg: float = 1.0,
          warm_from=None) -> dict:
    """The EAGLE-style head on the target's final features; reg weighs the feature-regression term beside the
    token loss (0: the token objective only, as the EAGLE-3 head trains). warm_from: a folder whose EAGLE head's
    weights the training starts from (a fine-tune; the card names it)."""
    from specviz.train import eagle as te

    train, held, ids, out = _head_data(target, corpus_dir, vocab, features_cache)
    head = eagle_head(target, init)
    if warm_from:
        warm_start(head, warm_from)
    embed = target.model.get_input_embeddings()
    before = te.evaluate(head, embed, out, held, train, n_passes)
    log = common.train(head, te.make_loss(head, embed, out, train, tokens, n_passes, mode=mode, reg=reg), run_dir,
                       steps, lr=lr,
                       max_minutes=max_minutes, device=target.device, progress=progress, desc="eagle",
                       eval_fn=lambda: te.evaluate(head, embed, out, held, train, n_passes))
    c = _card(target, corpus_dir, log, kind="eagle", unrolled_passes=n_passes, tokens_per_step=tokens,
              lr=lr, draft_vocab_size=len(ids), init=init, loss=mode, feature_loss_weight=reg,
              warm_from=str(warm_from) if warm_from else None, heldout_before=before, heldout=log["eval"])
    return _save_with_vocab("eagle", "head", head.state_dict(), ids, c, out_dir)


def eagle3(target: LoadedModel, corpus_dir, run_dir, out_dir=None, steps: int = 300, tokens: int = 768,
           lr: float = 1e-3, vocab: int = 8192, n_passes: int = 3, layers=None, max_minutes=None, progress=True,
           init: str = "identity", mode: str = "kl", features_cache=None, warm_from=None) -> dict:
    """The EAGLE-3-style head: fused features of `layers` (default: a low, a middle and the last layer),
    token objective only (mode kl: the target's distribution on the draft vocabulary; ce: its greedy token),
    unrolled on its own outputs. The layers' outputs are recomputed once from the corpus's ids by teacher
    forcing (corpus.load; `features_cache` keeps them for the next job). warm_from: a folder whose (old-design)
    EAGLE head the fused head starts from (warm_start)."""
    from specviz.proposers.eagle import check_feature_layers, default_feature_layers
    from specviz.train import eagle as te

    n_layers = target.model.config.num_hidden_layers
    layers = check_feature_layers(default_feature_layers(n_layers) if layers is None else layers, n_layers)
    train, held, ids, out = _head_data(target, corpus_dir, vocab, features_cache, layers=list(layers))
    head = eagle_head(target, init, layers)
    if warm_from:
        warm_start(head, warm_from, train)
    embed = target.model.get_input_embeddings()
    before = te.evaluate(head, embed, out, held, train, n_passes)
    log = common.train(head, te.make_loss(head, embed, out, train, tokens, n_passes, mode=mode),
                       run_dir, steps, lr=lr, max_minutes=max_minutes, device=target.device, progress=progress,
                       desc="eagle3",
                       eval_fn=lambda: te.evaluate(head, embed, out, held, train, n_passes))
    c = _card(target, corpus_dir, log, kind="eagle3", feature_layers=list(layers), unrolled_passes=n_passes,
              tokens_per_step=tokens, lr=lr, draft_vocab_size=len(ids), init=init, loss=mode,
              warm_from=str(warm_from) if warm_from else None, heldout_before=before, heldout=log["eval"])
    return _save_with_vocab("eagle3", "head", head.state_dict(), ids, c, out_dir)


def medusa_heads(target: LoadedModel, n_heads: int):
    """Fresh Medusa heads for training, on the target's device (float32)."""
    from specviz.proposers.medusa import MedusaHeads
    return MedusaHeads(target.model.config.hidden_size, n_heads).to(target.device)


def eagle_head(target: LoadedModel, init: str = "identity", layers: tuple[int, ...] = ()):
    """A fresh EAGLE head for training, on the target's device (float32); init: identity, last-layer or random.
    With layers: the EAGLE-3 head reading those target layers."""
    from specviz.proposers.eagle import EagleHead
    head = EagleHead.for_target(target.model.config, layers)
    if init == "last-layer":
        _init_from(head.layer, target.model.model.layers[-1])
    elif init == "identity":
        head.identity_init()
    return head.to(target.device)


def warm_head_file(folder):
    """The EAGLE head file a warm start reads (FOLDER/eagle.safetensors), or one clear InputError."""
    from pathlib import Path

    from specviz.core.errors import InputError
    path = Path(folder) / "eagle.safetensors"
    if not path.exists():
        raise InputError(f"no EAGLE head to start from: {path} does not exist")
    return path


def warm_start(head, folder, train: list[dict] | None = None) -> None:
    """Load the EAGLE head of `folder` (eagle.safetensors: fc and the decoder layer) into `head`, in place.
    A fused (EAGLE-3) head keeps its own fuse and norm: fuse reads the top layer alone, one scale per
    dimension fitted by least squares so that its output approximates the target's final normed state, which
    the old head was trained on (the top layer's output is taken before the target's final norm, which divides
    by each position's RMS: a linear fuse can only approximate it); norm starts at ones."""
    from safetensors.torch import load_file

    from specviz.core.errors import InputError
    path = warm_head_file(folder)
    sd = {k[len("head."):]: v.float() for k, v in load_file(str(path)).items() if k.startswith("head.")}
    fused = bool(head.feature_layers)
    own = {k for k in head.state_dict() if k.startswith(("fuse.", "norm."))} if fused else set()
    if set(sd) != set(head.state_dict()) - own:
        raise InputError(f"{path} holds no EAGLE head of this shape (keys differ)")
    dev = next(head.parameters()).device
    head.load_state_dict({k: v.to(dev) for k, v in sd.items()}, strict=False)
    if fused:
        if not train:
            raise ValueError("a fused head's warm start needs the training sequences (the top layer's RMS)")
        top = max(head.feature_layers)
        i = head.feature_layers.index(top)
        H = head.fc.out_features
        x = torch.cat([s["layers"][top].float() for s in train[:64]])           # (n, H) the top layer's outputs
        h = torch.cat([s["hidden"].float() for s in train[:64]])                # (n, H) the final normed states
        scale = (h * x).sum(0) / x.pow(2).sum(0).clamp_min(1e-6)                # (H,) least squares h ≈ x * scale
        with torch.no_grad():
            head.fuse.weight.zero_()
            head.fuse.weight[:, i * H:(i + 1) * H].copy_(torch.diag(scale).to(dev))
            head.norm.weight.fill_(1.0)


def drafter_for_training(target: LoadedModel, ids, n_layers: int = 2):
    """The drafter to train: layers copied from the target's first and last (or first n), in float32."""
    L = target.model.config.num_hidden_layers
    init = (0, L - 1) if n_layers == 2 else tuple(range(n_layers))
    m = build_drafter(target.model, n_layers, ids, init_layers=init)
    m.model.layers.float()
    m.model.norm.float()
    return m


def _init_from(layer, llama_layer) -> None:
    """Copy a Llama decoder layer's weights into the head's layer (a better start than random)."""
    a, m = llama_layer.self_attn, llama_layer.mlp
    pairs = [(layer.q, a.q_proj), (layer.k, a.k_proj), (layer.v, a.v_proj), (layer.o, a.o_proj),
             (layer.gate, m.gate_proj), (layer.up, m.up_proj), (layer.down, m.down_proj)]
    with torch.no_grad():
        for dst, src in pairs:
            dst.weight.copy_(src.weight.float())
        layer.norm1.weight.copy_(llama_layer.input_layernorm.weight.float())
        layer.norm2.weight.copy_(llama_layer.post_attention_layernorm.weight.float())


def drafter(target: LoadedModel, corpus_dir, run_dir, out_dir=None, steps: int = 300, tokens: int = 1024,
            lr: float = 1e-3, vocab: int = 8192, n_layers: int = 2, mode: str = "ce", max_minutes=None,
            progress=True, ship: bool = True, features_cache=None) -> dict:
    from specviz.train import drafter as td

    keys = ("ids", "label", "hidden", "topv", "topi") if mode == "kl" else ("ids", "label", "hidden")
    train, held = load_split(corpus_dir, keys, target, cache=features_cache)
    ids = _vocab(target, train, vocab)
    L = target.model.config.num_hidden_layers
    init = (0, L - 1) if n_layers == 2 else tuple(range(n_layers))
    m = drafter_for_training(target, ids, n_layers)
    out = m.lm_head
    before = td.evaluate(m, out, held, train)
    log = common.train(m, td.make_loss(m, out, train, tokens, mode), run_dir, steps, lr=lr,
                       max_minutes=max_minutes, device=target.device, progress=progress, desc=f"drafter-{mode}",
                       eval_fn=lambda: td.evaluate(m, out, held, train))
    c = _card(target, corpus_dir, log, kind="drafter", n_layers=n_layers, init_layers=list(init), loss=mode,
              tokens_per_step=tokens, lr=lr, draft_vocab_size=len(ids), heldout_before=before,
              heldout=log["eval"])
    if not ship:
        return c
    return _save_with_vocab("drafter", "model", td.own_state(m), ids, c, out_dir)


def lora(target: LoadedModel, run_dir, out_dir=None, steps: int = 120, batch: int = 2, chunk: int = 128,
         lr: float = 2e-3, rank: int = 8, alpha: float = 16.0, modules=("q_proj", "v_proj"), corpus_dir=None,
         max_minutes=None, progress=True, chunks=None) -> dict:
    """Fine-tune a copy of the target; report held-out loss on the new domain and on chat replies."""
    import copy

    from specviz.train import lora as tl

    train, held = chunks if chunks is not None else tl.docs_chunks(target.tokenizer, chunk)
    model = copy.deepcopy(target.model)      # frozen in the target's dtype; the LoRA matrices train in float32
    base_docs = tl.heldout_loss(model, held)
    wrapped = tl.attach(model, rank, alpha, tuple(modules))
    log = common.train(model, tl.make_loss(model, train, batch), run_dir, steps, lr=lr, max_minutes=max_minutes,
                       device=target.device, progress=progress, desc="lora",
                       eval_fn=lambda: {"docs_heldout_loss": round(tl.heldout_loss(model, held), 4)})
    extra = {}
    if corpus_dir is not None:        # fluency check: loss on the held-out chat replies of the corpus
        _, h = load_split(corpus_dir, ("ids",))
        reps = [s["ids"].long()[s["prompt_len"]:][:chunk] for s in h if len(s["ids"]) - s["prompt_len"] > 8]
        reps = [r for r in reps if len(r) == len(reps[0])] or reps[:1]
        extra["chat_heldout_loss_finetuned"] = round(tl.heldout_loss(model, reps, 1), 4)
        tl.detach(model, wrapped)
        extra["chat_heldout_loss_base"] = round(tl.heldout_loss(model, reps, 1), 4)
    c = _card(target, None, log, kind="lora", rank=rank, alpha=alpha, modules=list(modules),
              data="Python reference documentation (pydoc_data.topics, shipped with Python)",
              tokens_per_step=batch * chunk, lr=lr, train_chunks=len(train),
              docs_heldout_loss_base=round(base_docs, 4), **log["eval"], **extra)
    return artifacts.save("lora", tl.delta_tensors(wrapped), c, out_dir)

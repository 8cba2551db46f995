"""A separate draft model: same tokenizer, its own KV cache, k serial small forward passes."""
from __future__ import annotations

import copy
from collections.abc import Callable

import torch
from transformers import DynamicCache, LlamaForCausalLM

from specviz.core.errors import InputError
from specviz.core.sampling import logits_to_probs, sample
from specviz.proposers.base import Context, Draft, Proposer
from specviz.proposers.vocab import SubsetHead


class DraftModel(Proposer):
    name = "draft"

    def __init__(self, model: torch.nn.Module, name: str = "draft", vocab: int | None = None,
                 n_ids: int | None = None, greedy_draft: bool = False,
                 body: Callable[[torch.Tensor, DynamicCache], torch.Tensor] | None = None):
        self.model = model
        # body(ids (1, t), cache) -> the decoder body's final hidden states (1, t, H), as the engine runs the target's
        # (engine/decode.body_pass: the same bits as model(...), less overhead); None: the model's own forward
        self.body = body
        # vLLM's draft_sample_method = "greedy": propose q's argmax and give no q, so the verifier treats the draft
        # as one-hot (kept with probability p(x)); False = "probabilistic": sample x ~ q, the full ratio p/q
        self.greedy_draft = greedy_draft
        self.name = name
        self.vocab, self.n_ids = vocab, n_ids  # set when the output layers differ only in padding rows
        self.device = next(model.parameters()).device
        self.cache: DynamicCache | None = None

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.cache = DynamicCache(config=self.model.config)

    @torch.inference_mode()
    def _forward(self, ids: list[int]) -> torch.Tensor:
        x = torch.tensor([ids], device=self.device)  # (1, t)
        if self.body is not None:   # what model(..., logits_to_keep=1) computes: the output layer on the last row
            logits = self.model.lm_head(self.body(x, self.cache)[:, -1:])[0, -1].float().cpu()   # (V_drafter,)
        else:
            logits = self.model(input_ids=x, cache=self.cache, use_cache=True,
                                logits_to_keep=1).logits[0, -1].float().cpu()   # (V_drafter,)
        if self.vocab is None:
            return logits
        fitted = torch.full((self.vocab,), float("-inf"))  # (V_target,): padding rows get q = 0
        fitted[:self.n_ids] = logits[:self.n_ids]
        return fitted

    def propose(self, ctx: Context, k: int) -> Draft:
        if self.cache is None:
            self.reset(ctx.ids)
        ids = ctx.ids.tolist()
        seen = self.cache.get_seq_length()
        logits = self._forward(ids[seen:])  # catch up on tokens the drafter has not seen
        tokens, qs = [], []
        for i in range(k):
            q = logits_to_probs(logits, ctx.sampling)  # (V,)
            x = sample(q, ctx.generator) if not (ctx.sampling.greedy or self.greedy_draft) else int(q.argmax())
            tokens.append(x)
            qs.append(q)
            if i < k - 1:
                logits = self._forward([x])
        if self.greedy_draft and not ctx.sampling.greedy:
            return Draft(tokens=torch.tensor(tokens, dtype=torch.long))   # q one-hot on the argmax: no q given
        return Draft(tokens=torch.tensor(tokens, dtype=torch.long), q=torch.stack(qs))  # q: (k, V)

    def cache_length(self) -> int | None:
        return self.cache.get_seq_length() if self.cache is not None else None

    def update(self, ctx: Context, n_accepted: int) -> None:
        # Keep the cache only for tokens that are now committed; drafted-and-rejected ones go.
        extra = self.cache.get_seq_length() - (len(ctx.ids) - 1)
        if extra > 0:
            self.cache.crop(-extra)


def build_drafter(target_model: torch.nn.Module, n_layers: int, ids: torch.Tensor,
                  init_layers: tuple[int, ...] | None = None) -> LlamaForCausalLM:
    """A complete causal LM with the target's tokenizer ids; layers copied from `init_layers` if given."""
    cfg = copy.deepcopy(target_model.config)
    cfg.num_hidden_layers = n_layers
    cfg.tie_word_embeddings = False
    if getattr(cfg, "layer_types", None):
        cfg.layer_types = cfg.layer_types[:n_layers]
    cfg.quantization_config = None
    with torch.device("meta"):
        m = LlamaForCausalLM(cfg)
    m.lm_head = torch.nn.Identity()                       # replaced below; avoids a random 49K x H matrix
    m.model.embed_tokens = target_model.get_input_embeddings()  # shared, frozen
    dev = m.model.embed_tokens.weight.device                 # the target's: the new layers go there too
    m.model.layers = torch.nn.ModuleList([_fresh_layer(cfg, i) for i in range(n_layers)]).to(dev)
    m.model.norm = copy.deepcopy(target_model.model.norm)
    m.model.rotary_emb = copy.deepcopy(target_model.model.rotary_emb)
    if init_layers:
        for i, j in enumerate(init_layers):
            m.model.layers[i].load_state_dict(target_model.model.layers[j].state_dict())
    m.lm_head = SubsetHead(target_model.get_output_embeddings().weight, ids)
    dt = target_model.get_input_embeddings().weight.dtype
    for mod in (m.model.layers, m.model.norm):
        mod.to(dt)
    for p in m.model.embed_tokens.parameters():
        p.requires_grad_(False)
    m.lm_head.weight.requires_grad_(False)
    m.generation_config = copy.deepcopy(target_model.generation_config)
    return m.eval()


def _fresh_layer(cfg, i):
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer
    return LlamaDecoderLayer(cfg, layer_idx=i)


def first_layers(target_model: torch.nn.Module, n_layers: int) -> LlamaForCausalLM:
    """The target's own first `n_layers` decoder layers, its final norm and its output layer as a causal LM: an
    untrained drafter (self-speculation by cutting the model short). Every module is the target's, shared, not
    copied: it adds no weights, only its own KV cache of `n_layers` layers."""
    total = target_model.config.num_hidden_layers
    if not 1 <= n_layers < total:
        raise InputError(f"the drafter's layers must be between 1 and {total - 1} (the target has {total}), "
                         f"got {n_layers}")
    cfg = copy.deepcopy(target_model.config)
    cfg.num_hidden_layers = n_layers
    if getattr(cfg, "layer_types", None):
        cfg.layer_types = cfg.layer_types[:n_layers]
    with torch.device("meta"):
        m = LlamaForCausalLM(cfg)
    body = target_model.get_decoder()
    m.model.embed_tokens, m.model.norm, m.model.rotary_emb = body.embed_tokens, body.norm, body.rotary_emb
    m.model.layers = torch.nn.ModuleList(body.layers[:n_layers])
    m.lm_head = target_model.get_output_embeddings()
    m.generation_config = copy.deepcopy(target_model.generation_config)
    return m.eval()

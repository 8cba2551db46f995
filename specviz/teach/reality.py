"""Serving reality: what a drafter costs in memory at scale, how v(k) grows with the batch, and what the
papers report next to this app's numbers; plus self-speculation by layer skipping, untrained."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from specviz.core import fmt as F
from specviz.core.stats import median
from specviz.engine import measure
from specviz.engine.passcost import VTable, measure_v_batch

KIB, GB = 1024, 1e9


@dataclass(frozen=True)
class Arch:
    """What the KV cache per token and the weights depend on."""
    name: str
    params_b: float      # parameters, billions
    layers: int
    kv_heads: int
    head_dim: int
    bytes_per: int = 2   # bfloat16

    @property
    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.bytes_per   # K and V, every layer

    @property
    def weight_bytes(self) -> float:
        return self.params_b * 1e9 * self.bytes_per


# The worked example: a 70B target (80 layers, 8 KV heads of 128) with a 1B drafter (16 layers, 8 KV heads of 64).
TARGET_70B = Arch("70B target", 70.6, 80, 8, 128)
DRAFTER_1B = Arch("1B drafter", 1.24, 16, 8, 64)


@dataclass
class Budget:
    sequences_without: int
    sequences_with: int
    kv_per_seq_target: float   # bytes
    kv_per_seq_drafter: float
    free_without: float        # bytes left for KV cache after the weights
    free_with: float

    @property
    def lost(self) -> int:
        return self.sequences_without - self.sequences_with

    @property
    def lost_to_weights(self) -> int:
        """Sequences the drafter's weights alone cost: those that no longer fit beside them, before its cache."""
        return self.sequences_without - max(0, int(self.free_with // self.kv_per_seq_target))

    @property
    def lost_to_kv(self) -> int:
        """The rest of the loss: the drafter's own KV cache in every sequence that still fits."""
        return self.lost - self.lost_to_weights


def split_words(b: Budget) -> str:
    """'its weights cost W sequences and its cache C': which of the two a drafter's memory goes to."""
    w, c = b.lost_to_weights, b.lost_to_kv
    most = ("mostly its cache" if c > 2 * w else "mostly its weights" if w > 2 * c else "both, about alike")
    return (f"its weights cost {w} sequence{'s' if w != 1 else ''} and its KV cache {c} "
            f"({most})")


def concurrent_sequences(target: Arch, drafter: Arch, memory_gb: float, context: int) -> Budget:
    """Sequences of `context` tokens that fit beside the weights, without and with the drafter."""
    return fit(target.weight_bytes, target.kv_bytes_per_token, drafter.weight_bytes, drafter.kv_bytes_per_token,
               memory_gb, context)


def fit(target_weights: float, target_kv: float, drafter_weights: float, drafter_kv: float, memory_gb: float,
        context: int) -> Budget:
    """The same from bytes: weights, and KV cache per token, of the target and of the drafter."""
    kv_t, kv_d = target_kv * context, drafter_kv * context
    free0 = memory_gb * GB - target_weights
    free1 = free0 - drafter_weights
    return Budget(max(0, int(free0 // kv_t)), max(0, int(free1 // (kv_t + kv_d))), kv_t, kv_d, free0, free1)


def lost_share(b: Budget) -> float:
    """The share of concurrent sequences the drafter costs, in % (0 when nothing fits without it)."""
    return 100 * b.lost / b.sequences_without if b.sequences_without else 0.0


def measured_kv_bytes_per_token(model, tokens: int = 16) -> float:
    """Bytes one token occupies in a real KV cache: a prefill of `tokens` tokens, every K and V tensor summed."""
    dev = next(model.parameters()).device
    ids = torch.arange(1, tokens + 1, device=dev).view(1, -1) % model.config.vocab_size   # (1, tokens)
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        model(input_ids=ids, cache=cache, use_cache=True, logits_to_keep=1)
    return sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values)) / tokens


def measured_memory(target, drafter, memory_gb: float, context: int) -> dict:
    """This app's own pair: weights counted from the loaded parameters, KV per token read from real caches."""
    kv_t, kv_d = measured_kv_bytes_per_token(target.model), measured_kv_bytes_per_token(drafter.model)
    b = fit(target.param_bytes(), kv_t, drafter.param_bytes(), kv_d, memory_gb, context)
    return {"kv_target": kv_t, "kv_drafter": kv_d, "weights_target": target.param_bytes(),
            "weights_drafter": drafter.param_bytes(), "budget": b, "lost_pct": lost_share(b)}


def v_by_batch(model, vocab: int, batches=(1, 4, 16), ks=(1, 4, 8), context: int = 128, repeats: int = 5,
               progress=None) -> dict[int, VTable]:
    """{batch: {k: v_B(k)}} through passcost.measure_v_batch (v(k)'s one definition, a bare forward over a KV
    cache of `context` tokens per sequence); each table's t1: that batch's one-token pass, seconds."""
    g = torch.Generator().manual_seed(0)
    out = {}
    for bi, b in enumerate(batches):
        out[b] = measure_v_batch(model, vocab, b, ks, context, repeats, generator=g)
        if progress:
            progress((bi + 1) / len(batches), f"batch {b}")
    return out


# What the papers report, each figure with its model, hardware and source (only what the cited text states;
# where it does not name the hardware, the row says so rather than guess).
APP_RUN = {"k": 4, "n": 3, "tokens": 48, "repeats": 3}  # the settings of the "this app" rows


def app_experiment(tokens: int | None = None):
    """The "this app" rows' experiment: lookup at fixed k and n, greedy, against plain decoding, on the first
    copy-heavy and the first novel workload. The page's caption is its describe(), and the page runs it."""
    from specviz.engine.experiment import Experiment, Setting
    from specviz.engine.workloads import COPY, NOVEL, of_kind

    lookup = Setting.resolve("lookup", APP_RUN["k"], APP_RUN["n"], "fixed")
    return Experiment((lookup,), (of_kind(COPY)[0].name, of_kind(NOVEL)[0].name), tokens or APP_RUN["tokens"],
                      repeats=APP_RUN["repeats"])


def app_rows(rows: list[dict], ex, where: str) -> list[dict]:
    """The "this app" rows beside the papers, each naming its experiment: the run's own setting (comparisons.table's
    label), its workload, mode, tokens and repeats (from `ex`, the Experiment that ran), and where it ran."""
    mode = "greedy" if ex.temperature == 0 else f"T = {ex.temperature:g}"
    return [{"method": f"{r['method']} (this app)",
             "setting": f"{where}; {r['workload']}; {r['setting']}, {mode}, {ex.new_tokens} new tokens, "
                        f"median of {r['repeats']} of {ex.repeats} repeats",
             "measured": F.num(r.get("speedup"), ".2f", "×")} for r in rows]


PAPERS = [
    {"method": "Speculative decoding (Leviathan et al., 2023)", "setting": "T5-XXL 11B, T5-small drafter, TPU",
     "reported": "2–3×", "source": "arXiv 2211.17192"},
    {"method": "Speculative sampling (Chen et al., 2023)", "setting": "Chinchilla 70B, 4B drafter, TPU",
     "reported": "2–2.5×", "source": "arXiv 2302.01318"},
    {"method": "Prompt lookup decoding (Saxena, 2023)", "setting": "input-grounded tasks (summarisation, document "
     "QA, code editing); model and hardware not named in the summary", "reported": "2–4×",
     "source": "github.com/apoorvumang/prompt-lookup-decoding (README)"},
    {"method": "Medusa-1 (Cai et al., 2024)", "setting": "Vicuna 7B–33B, heads on a frozen target, single GPU, "
     "batch 1", "reported": "over 2.2×", "source": "arXiv 2401.10774 (abstract); FasterDecoding/Medusa README"},
    {"method": "Medusa-2 (Cai et al., 2024)", "setting": "heads fine-tuned *together with the target*: the "
     "target's own weights change; sampling with 'typical acceptance' (not lossless)", "reported": "2.3–3.6×",
     "source": "arXiv 2401.10774 (abstract)"},
    {"method": "EAGLE (Li et al., 2024)", "setting": "LLaMA2-Chat 70B, one-layer head, GPU; MT-bench, greedy",
     "reported": "2.7–3.5× (Figure 1: 3.01×)", "source": "arXiv 2401.15077; ICML 2024 PMLR v235"},
    {"method": "EAGLE-2 (Li et al., 2024)", "setting": "dynamic draft tree; three model series, six tasks; "
     "hardware not named in the abstract", "reported": "3.05–4.26× (20–40% over EAGLE-1)",
     "source": "arXiv 2406.16858 (abstract)"},
    {"method": "EAGLE-3 (Li et al., 2025)", "setting": "LLaMA-3.1-Instruct 8B, MT-bench, SGLang, 1× H100 (batch "
     "not stated): 158 → 373 tokens/s (EAGLE-2: 244)", "reported": "2.36× throughput",
     "source": "SGLang speculative decoding docs, citing arXiv 2503.01840"},
]

def bench_cost(method: str = "draft", data=None) -> dict | None:
    """c of `method` in the last bench's cost-model table (greedy, per workload): {"lo", "median", "hi", "n",
    "run"} with "run" naming that bench (date, command, dtype, tokens, repeats); None without a bench file."""

    from specviz.bench.results import latest_bench

    if data is None:
        found = latest_bench()
        data = found[1] if found else None
    if not isinstance(data, dict):
        return None
    cs = [r["c"] for r in data.get("cost_model") or [] if r.get("method") == method and r.get("c") is not None]
    if not cs:
        return None
    m = data.get("meta", {})
    run = (f"the bench of {m.get('started', '?')} (`{m.get('command', 'python -m specviz bench')}`, "
           f"{m.get('dtype', '?')}, {m.get('device', '?')}, greedy, {m.get('max_new_tokens', '?')} new tokens, "
           f"median of {m.get('repeats', '?')} repeats, {len(cs)} workloads)")
    return {"lo": min(cs), "median": median(cs), "hi": max(cs), "n": len(cs), "run": run}


def cost_words(method: str = "draft", data=None) -> str:
    """'c = 0.12–0.13 (median 0.12) in <the bench>', or a pointer to measuring it when no bench file is found."""
    b = bench_cost(method, data)
    if b is None:
        return "not measured in a bench file here: measure it on Step through (Run plain decoding alongside)"
    return f"c = {b['lo']:.2f}–{b['hi']:.2f} (median {b['median']:.2f}) in {b['run']}"


def gap_reasons(data=None) -> list[str]:
    """Why this app's speedups differ from the papers', the drafter's cost rendered from the last bench."""
    return [
        "Target size: a 135M target's pass is so cheap that fixed costs per step (Python, sampling, the drafter's "
        "own passes) are a large share of it; a 7B–70B target on a GPU is bound by reading its weights, so verifying "
        "k tokens costs about one pass and the drafter is a tiny fraction.",
        f"Drafter cost c: this app's 2-layer draft model has {cost_words('draft', data)}, in target "
        "steps per drafted token (its output layer over the draft vocabulary is a large share of it). c follows the "
        "drafter's depth and its fixed cost per call, not its parameter count, so a 1B drafter for a 70B target is "
        "not ~1.5% of a step: a rule of thumb for small drafters on GPUs is c ≈ 0.05–0.15 (a rule of thumb, not one "
        "paper's figure: measure yours; the break-even calculator fills c from a run).",
        "Training: this app's heads and drafter were trained for under an hour each on a CPU, on about 0.4M tokens of "
        "the target's own replies (models/README.md); the papers' for hours or days on GPUs and large chat corpora, so "
        "their acceptance is far higher.",
        "Batch: every number here is batch 1; the papers report latency at small batches too, and gains shrink as the "
        "batch grows (measured above).",
    ]


def truncation_breakeven(model, ns, k: int = 4) -> dict[int, tuple[float, float | None]]:
    """{N: (c, break-even α)} for drafting with the first N layers of `model` plus its output layer: c priced from
    the parameters that draft pass reads (families.truncation, core/costmodel.py `truncation_cost`), α* from the
    calculator's cost model (costmodel.breakeven_alpha) at draft length k with v = 1 (verifying k + 1 tokens
    costs one pass)."""
    from specviz.core.costmodel import breakeven_alpha
    from specviz.teach.families import layer_params, truncation

    params = layer_params(model)
    return {n: (c, breakeven_alpha(k, c, 1.0)) for n in ns for c in [truncation(params, n).c]}


def layer_agreement(model, ids: torch.Tensor, ns=(2, 4, 8, 16, 24, 28)) -> dict[int, float]:
    """Top-1 agreement with the full model when only the first N layers run (final norm and output layer kept),
    over every position of `ids` (1, T). No training: what self-speculation by layer skipping starts from."""
    ids = ids.to(next(model.parameters()).device)                                 # built on the CPU by the page

    @torch.inference_mode()
    def agree() -> dict[int, float]:
        out = model(input_ids=ids, output_hidden_states=True)
        full = out.logits[0].argmax(-1)                                           # (T,)
        body, head = model.get_decoder(), model.get_output_embeddings()
        return {n: float((head(body.norm(out.hidden_states[n][0])).argmax(-1) == full).float().mean())
                for n in ns if n < model.config.num_hidden_layers}                # hidden_states[n]: after layer n
    return measure.timed(ids.device, agree)[0]                                    # inside the session's turn


# -- batch size and the roofline -----------------------------------------------------------------------------
def weight_bytes(model) -> int:
    """Bytes of weights one decode step reads: every parameter once (a tied embedding counts once)."""
    return sum(p.numel() * p.element_size() for p in model.parameters())


def wasted_per_pass(alpha: float, k: int) -> float:
    """Positions the verify pass computes and throws away, per sequence: (k + 1) − E[τ]."""
    from specviz.core.costmodel import expected_tokens_per_pass
    return (k + 1) - expected_tokens_per_pass(alpha, k)

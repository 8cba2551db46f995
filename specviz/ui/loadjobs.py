"""Loading a model in a background job, one per (name, device, dtype): a page stays usable (and says what is
loading) while the weights arrive, and ui/loading.cached_model() waits for the same job. No Streamlit here.

`tiny:<seed>` names a tiny random Llama with the SmolLM2 tokenizer (test-sized mode, SPECVIZ_TINY=1).
"""
from __future__ import annotations

import functools
import threading
import time

from specviz.core.errors import ModelError
from specviz.engine import autodtype
from specviz.engine.models import DEFAULT, LoadedModel, load_tokenizer, tiny_llama


@functools.lru_cache(maxsize=4)
def _tokenizer(name: str):
    return load_tokenizer(name)


def _load(name: str, device: str, dtype: str) -> LoadedModel:
    if name.startswith("tiny:"):  # tiny:<seed> — a random test model with the SmolLM2 tokenizer
        tok = _tokenizer(DEFAULT)
        m = tiny_llama(vocab_size=len(tok), layers=2, hidden=32, seed=int(name.split(":")[1]),
                       max_positions=2048)
        m.tokenizer = tok
        return m
    try:
        return autodtype.load(name, None if device == "auto" else device, dtype, "speculative")
    except ModelError:
        raise
    except Exception as e:  # noqa: BLE001 - e.g. device "cuda" on a machine without one
        raise ModelError(f"could not load '{name}' on {device} as {dtype}: {type(e).__name__}: {e}") from e


_JOBS: dict[tuple, dict] = {}
_JOBS_LOCK = threading.Lock()


def job(key: tuple) -> dict:
    """The load of `key`: started now in its own thread unless one was; {done, result, error, started}."""
    with _JOBS_LOCK:
        j = _JOBS.get(key)
        if j is None:
            j = {"done": threading.Event(), "result": None, "error": None, "started": time.time()}
            _JOBS[key] = j

            def work():
                try:
                    j["result"] = _load(*key)
                    # The weights' fingerprint (a sha256 over them, 0.6 s for the default model on a 2-core EPYC)
                    # keys the server's run cache and every recording: computed here, in the load a page already
                    # waits for, not inside the first Play on a fresh server (which it made ~1.4 s slower to start).
                    j["result"].fingerprint()
                except Exception as e:  # noqa: BLE001 - handed to the waiting page
                    j["error"] = e  # kept: pages show the failure instead of restarting the load on every
                                    # rerun; retry_failed() (the sidebar's Apply) starts it again
                finally:
                    j["done"].set()

            threading.Thread(target=work, name=f"specviz-load-{key[0]}", daemon=True).start()
        return j


def retry_failed(key: tuple) -> None:
    """Forget a failed load of `key`, so that the next request starts it again."""
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is not None and job["done"].is_set() and job["error"] is not None:
            _JOBS.pop(key, None)

"""Making a recording (core/recording.py) from a run made here: the environment it ran in, the code's version,
the target's fingerprint and the texts of the tokens it shows."""
from __future__ import annotations

import functools
import hashlib
import time
from pathlib import Path

import torch

from specviz.core import recording as R
from specviz.engine.models import LoadedModel


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 (first 16 hex digits) over specviz's own source files: any change to the code changes it, so a
    run remembered by older code is never served as this code's."""
    root = Path(__file__).resolve().parents[1]   # specviz/
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def environment(target: LoadedModel) -> dict:
    """torch, the device, the dtype, the threads in use now and specviz's code version."""
    return {"torch": torch.__version__, "device": str(target.device), "dtype": str(target.dtype).removeprefix("torch."),
            "threads": torch.get_num_threads(), "code": code_version()}


def model_info(target: LoadedModel) -> dict:
    return {"name": target.name, "fingerprint": target.fingerprint()}


def token_texts(tokenizer, ids) -> dict[int, str]:
    """Each id's own text (what a replay labels it with)."""
    if tokenizer is None:
        return {}
    return {int(t): tokenizer.decode([int(t)]) for t in sorted(ids)}


def recording(kind: str, target: LoadedModel, settings: dict, runs: list[R.RecordedRun],
              prompt_ids: list[int] | None = None, extra: dict | None = None,
              recorded_at: float | None = None) -> R.Recording:
    prompt_ids = [int(t) for t in (prompt_ids or [])]
    rec = R.Recording(kind=kind, settings=settings, model=model_info(target), environment=environment(target),
                      recorded_at=time.time() if recorded_at is None else recorded_at, runs=runs,
                      prompt_ids=prompt_ids, extra=extra or {})
    rec.tokens = token_texts(target.tokenizer, R.token_ids_shown(runs, prompt_ids))
    return rec


def step_recording(target: LoadedModel, settings: dict, prompt_ids, summary, steps, **kw) -> R.Recording:
    """One run (Step through, the CLI's generate)."""
    return recording("step", target, settings, [R.RecordedRun({"method": summary.method}, summary, list(steps))],
                     prompt_ids=[int(t) for t in torch.as_tensor(prompt_ids).flatten().tolist()], **kw)

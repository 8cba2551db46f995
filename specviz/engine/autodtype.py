"""`--dtype auto`: the dtype chosen by timing this machine, once, and remembered.

The first time a target is loaded with dtype auto on a machine, it is loaded in each dtype the device offers
(candidates()) and the shapes speculative decoding runs are timed through the decode loop itself (one-token
steps, a chain pass of 1 + 8 rows, a tree pass of 1 + 24 rows, the prefill of a 192-token prompt), the dtypes
interleaved in rounds so that a busy moment hits each alike. core/dtypechoice.py turns the times into the
choice and its reason. The times are kept in a small JSON file (cache_path(): $SPECVIZ_CACHE_DIR, else
$XDG_CACHE_HOME/specviz or ~/.cache/specviz, never the repository) under a key naming the machine (CPU model
and capability or GPU name, threads, torch version) and the target, so later loads read them back instead. The
target is loaded once, in float32, and the other candidate is a cast copy of it (models.as_dtype: the same weights
as a load in that dtype, in about a second instead of a second load).

Why: a CPU without native bfloat16 kernels (AVX2 only: no AVX512-BF16, no AMX) computes a bfloat16 verify
pass of 25 rows in nearly 25 one-row times, while a CPU with AMX does it in little more than one; the same
method is then 1.2× on one machine and 4× on the other (issue 33). A forced dtype is never second-guessed.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable, TypeVar

import torch

from specviz import runtime
from specviz.core import dtypechoice as DC
from specviz.core.errors import ModelError
from specviz.core.stats import median
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.device import default_device, half_dtype, machine
from specviz.engine.modelcache import CACHE_ENV, cache_root  # noqa: F401 (CACHE_ENV: re-exported)
from specviz.engine.models import LoadedModel, as_dtype, load_model, load_tokenizer
from specviz.engine.passcost import RandomDraft

ROUNDS = 3             # timed rounds; each times every shape in every dtype once (steps: STEPS of them)
STEPS = 3              # one-token steps per round (the cheapest shape: more of them, their median)
T = TypeVar("T")
WARM_PROMPT = 16       # tokens of the untimed prefill that warms each dtype's kernels up


def cache_path() -> Path:
    """The choice cache: dtype.json under engine/modelcache's cache root ($SPECVIZ_CACHE_DIR, else
    $XDG_CACHE_HOME/specviz or ~/.cache/specviz)."""
    return cache_root() / "dtype.json"


def candidates(device: torch.device) -> list[str]:
    """The dtypes auto chooses from: float32 and the device's half type (bfloat16; float16 on a CUDA GPU
    without native bfloat16 or on Apple's mps)."""
    half = "float16" if device.type == "mps" else str(half_dtype(device)).removeprefix("torch.")
    return ["float32", half]


def machine_key(device: torch.device, target: str) -> str:
    """The cache key: the machine (machine() without dtype), the device type, the target's name, how its
    linears run (engine/packed.py) and how its decoder body runs (engine/llama.py): a timing taken before the
    packed linears or the module-by-module body is not read back."""
    from specviz.engine import llama, packed
    m = machine(device)
    return json.dumps({**m, "device": device.type, "target": target, "linears": packed.label(device),
                       "body": llama.LABEL}, sort_keys=True)


def read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}               # missing or unreadable: measure again (and rewrite it)


def write_cache(path: Path, key: str, entry: dict) -> None:
    data = read_cache(path)
    data[key] = entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(path)        # atomic: two processes measuring at once leave one whole file
    except OSError:
        pass                     # a read-only home: the choice still holds for this process


def time_shapes(models: dict[str, LoadedModel], rounds: int = ROUNDS, steps: int = STEPS) -> dict[str, DC.ShapeTimes]:
    """{dtype: ShapeTimes} timed through decode.Decoder on random tokens: a prefill of PROMPT tokens (after an
    untimed one), one-token steps, chain passes of 1 + CHAIN_K rows and tree passes of 1 + TREE_NODES rows (a
    random draft, rejected and rolled back as in a real run); medians over rounds, dtypes and shapes
    interleaved within each round."""
    any_model = next(iter(models.values()))
    room = 2 * (rounds + 1) * (steps + 2) + DC.TREE_NODES + 2       # random drafts: about one token per pass
    n = min(DC.PROMPT, any_model.context_window - room - DC.TREE_NODES - 2)
    if n < WARM_PROMPT:
        raise ModelError(f"a context window of {any_model.context_window} tokens is too small to time the dtypes "
                         "in: pass --dtype float32 or bfloat16")
    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, any_model.vocab_size, (n,), generator=g)                     # (n,)
    shapes = [("step", 0, False)] * steps + [("chain", DC.CHAIN_K, False), ("tree", DC.TREE_NODES, True)]
    dec, prefill = {}, {}
    for dt, m in models.items():
        cfg = DecodeConfig(k=DC.TREE_NODES, max_new_tokens=room, record=False, stop_at_eos=False)
        Decoder(m, None, prompt[:WARM_PROMPT], cfg).prefill()        # untimed: first-call costs, cheaply
        d = dec[dt] = Decoder(m, RandomDraft(m.vocab_size), prompt, cfg)
        runtime.follow_load()                                        # threads as a run's first step sets them
        d.prefill()
        prefill[dt] = d.prefill_s
    got = {dt: {s: [] for s in DC.SHAPES if s != "prefill"} for dt in models}
    for r in range(rounds + 1):                                      # round 0 warms every shape up, untimed
        order = list(models) if r % 2 else list(models)[::-1]
        for name, k, tree in shapes:
            for dt in order:
                dec[dt].k, dec[dt].proposer.tree = k, tree
                rec = dec[dt].step()
                if r:
                    got[dt][name].append(rec.verify_s)
    return {dt: DC.ShapeTimes(prefill=prefill[dt], **{s: median(v) for s, v in got[dt].items()}) for dt in models}


RETIME_ENV = "SPECVIZ_RETIME_DTYPE"    # =1: time this machine again even when a settled choice is remembered


def busy_during(work: Callable[[], T]) -> tuple[T, float | None]:
    """work(), and how many cores the rest of the machine kept busy meanwhile (runtime's /proc/stat reading: all
    CPU time but this process's own); None where there is no /proc."""
    w = runtime.LoadWatch()
    a = w.sample()
    out = work()
    b = w.sample()
    return out, (None if a is None or b is None else round(runtime.others_busy(a, b, runtime.default_cpus()), 2))


def quiet_now(seconds: float = 0.3) -> bool:
    """Whether the rest of the machine is quiet enough now for a timing to be settled (core/dtypechoice.settled)."""
    busy = busy_during(lambda: time.sleep(seconds))[1]
    return busy is None or busy <= DC.QUIET_CORES


def remembered(entry: dict | None) -> dict[str, DC.ShapeTimes] | None:
    try:
        return {dt: DC.ShapeTimes.from_dict(t) for dt, t in entry["times"].items()} if entry else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None                                                    # an entry of another shape: measure again


def time_now(name: str, dev: torch.device, loader: Callable, measure: Callable, busy: Callable, tries: int,
             path: Path, key: str) -> tuple[dict, dict, dict]:
    """Load each candidate (one load, the others cast), time them, remember: (models, times, the entry kept)."""
    t0 = time.perf_counter()
    first, *others = candidates(dev)
    models = {first: loader(name, dev, first, tokenizer=False)}        # loaded once; the others cast from it
    models.update({dt: as_dtype(models[first], dt) for dt in others})
    times, others_busy = busy(lambda: measure(models))
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    entry = {"times": {dt: t.as_dict() for dt, t in times.items()}, "seconds": round(time.perf_counter() - t0, 1),
             "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(dev),
             "load1": None if load1 is None else round(load1, 2), "others_busy": others_busy, "tries": tries}
    write_cache(path, key, entry)
    return models, times, entry


def how_timed(entry: dict, path: Path, now: bool) -> str:
    """The reason line's tail: when and how busy the machine was, and where the timing is kept."""
    when = f"timed now in {entry['seconds']:.0f} s, loads included" if now else \
        f"timed here on {str(entry.get('measured', '?'))[:10]}"
    load = f" at load average {entry['load1']:.1f}" if isinstance(entry.get("load1"), (int, float)) else ""
    busy = DC.conditions(entry.get("others_busy"), runtime.default_cpus(), int(entry.get("tries", 1)))
    return f"{when}{load}{'; ' + busy if busy else ''}, {'kept' if now else 'remembered'} in {path}"


def load_auto(name: str, device: str | torch.device | None, purpose: str = "speculative", tokenizer: bool = True,
              path: Path | None = None, loader: Callable = load_model, measure: Callable = time_shapes,
              busy: Callable = busy_during, quiet: Callable[[], bool] = quiet_now) -> LoadedModel:
    """Load `name` in the dtype chosen for `purpose` (core/dtypechoice.py): from the cache when this machine and
    target were timed before, else time them now (each candidate dtype loaded once) and remember. A timing taken
    while other work kept the machine busy is used but timed again on a later, quiet load (DC.settled); set
    $SPECVIZ_RETIME_DTYPE=1 to time again regardless."""
    dev = torch.device(device) if device not in (None, "auto") else default_device()
    path = path or cache_path()
    key = machine_key(dev, name)
    entry = read_cache(path).get(key)
    times, models, now = remembered(entry), {}, False
    tries = int(entry.get("tries", 1)) if times else 0
    if times and (os.environ.get(RETIME_ENV) == "1"
                  or (not DC.settled(entry.get("others_busy"), tries) and quiet())):
        times = None                                                   # time again, counted as one more try
    if not times:
        models, times, entry = time_now(name, dev, loader, measure, busy, tries + 1, path, key)
        now = True
    choice = DC.choose(times, purpose)
    model = models.get(choice.dtype)
    models.clear()                                                     # the other dtype's weights go now
    if model is None:
        model = loader(name, dev, choice.dtype, tokenizer=tokenizer)
    elif tokenizer:
        model.tokenizer = load_tokenizer(name)
    model.dtype_reason = f"auto: {choice.reason} ({how_timed(entry, path, now)})"
    model.dtype_choice, model.pass_times = choice, times[choice.dtype]
    return model


def load(name: str, device: str | torch.device | None, dtype: str | None, purpose: str = "speculative",
         tokenizer: bool = True, **kw) -> LoadedModel:
    """load_model, with dtype 'auto' (or None) chosen by load_auto; a dtype asked for by name is kept."""
    if dtype in (None, "auto"):
        return load_auto(name, device, purpose, tokenizer=tokenizer, **kw)
    model = load_model(name, device, dtype, tokenizer=tokenizer)
    model.dtype_reason = f"{str(model.dtype).removeprefix('torch.')}: asked for by name"
    model.pass_times = remembered_times(model, name, kw.get("path"))
    return model


def remembered_times(model: LoadedModel, name: str, path: Path | None = None) -> DC.ShapeTimes | None:
    """This machine's remembered pass times of the model's dtype (a dtype asked for by name is not timed, but auto may
    have timed it here before), None when none are kept."""
    times = remembered(read_cache(path or cache_path()).get(machine_key(model.device, name)))
    return (times or {}).get(str(model.dtype).removeprefix("torch."))

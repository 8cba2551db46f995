"""Runs computed once for a whole server: a deterministic run (greedy, or sampled with its seed) is kept under a
key made of everything that decides it, and a second session asking for the same run gets its recording.

The key (run_key) is a sha256 over: the recording format's version, specviz's code version (engine/recorder:
a hash of its source, so an upgrade never serves a run made by older code), the target's fingerprint, dtype and
device, and the page's resolved settings (method and its knobs, prompt token ids, sampling and seed, k, tokens).
Torch's thread count is not in it: the count follows the load during a run, and greedy verification keeps
plain decoding's text whatever it is.

Bounded twice: in memory, at most MAX_ENTRIES recordings and MAX_MEMORY_BYTES of their JSON, least recently used
evicted first; on disk (optional), one JSON file per run in a folder, at most MAX_DISK_BYTES, least recently used
(by mtime, touched on a hit) removed first, and files of another code version removed when a run is written.
A file read back goes through core/recording.loads like any upload: a bad one is dropped, never served.

SPECVIZ_RUN_CACHE: "off" turns the cache off; a folder path keeps runs on disk there too; unset: memory only.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path

from specviz.core import recording as R
from specviz.engine.recorder import code_version

MAX_ENTRIES = 64
MAX_MEMORY_BYTES = 64 * 2**20
MAX_DISK_BYTES = 256 * 2**20
ENV = "SPECVIZ_RUN_CACHE"


def run_key(fingerprint: str, dtype: str, device: str, settings: dict, prompt_ids: list[int]) -> str:
    """Everything that decides a deterministic run, hashed (the code's version first, so the key names it)."""
    body = json.dumps({"format": R.VERSION, "code": code_version(), "fingerprint": fingerprint, "dtype": dtype,
                       "device": device, "settings": settings, "prompt": [int(t) for t in prompt_ids]},
                      sort_keys=True, default=str)
    return f"{code_version()}-{hashlib.sha256(body.encode()).hexdigest()[:32]}"


class RunCache:
    def __init__(self, enabled: bool = True, folder: str | Path | None = None, max_entries: int = MAX_ENTRIES,
                 max_bytes: int = MAX_MEMORY_BYTES, max_disk_bytes: int = MAX_DISK_BYTES):
        self.enabled, self.folder = enabled, None if folder is None else Path(folder)
        self.max_entries, self.max_bytes, self.max_disk_bytes = max_entries, max_bytes, max_disk_bytes
        self._mem: OrderedDict[str, tuple[R.Recording, int]] = OrderedDict()   # key -> (recording, JSON bytes)
        self._lock = threading.Lock()
        self.hits = self.misses = self.stored = 0

    @classmethod
    def from_env(cls) -> RunCache:
        v = os.environ.get(ENV, "").strip()
        if v.lower() in ("off", "0", "no"):
            return cls(enabled=False)
        return cls(folder=v or None)

    @property
    def bytes(self) -> int:
        return sum(n for _, n in self._mem.values())

    def __len__(self) -> int:
        return len(self._mem)

    def get(self, key: str) -> R.Recording | None:
        if not self.enabled:
            return None
        with self._lock:
            got = self._mem.get(key)
            if got is not None:
                self._mem.move_to_end(key)
                self.hits += 1
                return got[0]
        rec = self._read(key)
        if rec is None:
            self.misses += 1
            return None
        self.hits += 1
        return rec

    def put(self, key: str, rec: R.Recording) -> None:
        if not self.enabled:
            return
        text = R.dumps(rec)
        with self._lock:
            self._mem[key] = (rec, len(text))
            self._mem.move_to_end(key)
            while len(self._mem) > self.max_entries or (len(self._mem) > 1 and self.bytes > self.max_bytes):
                self._mem.popitem(last=False)
            self.stored += 1
        self._write(key, text)

    # -- disk --------------------------------------------------------------------------------------
    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def _read(self, key: str) -> R.Recording | None:
        if self.folder is None:
            return None
        p = self._path(key)
        try:
            rec = R.loads(p.read_bytes())
        except OSError:
            return None
        except R.RecordingError:
            p.unlink(missing_ok=True)   # a bad file is never served
            return None
        os.utime(p)                     # least recently used = oldest mtime
        with self._lock:
            self._mem[key] = (rec, p.stat().st_size)
        return rec

    def _write(self, key: str, text: str) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self._path(key).with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(self._path(key))
            files = sorted(self.folder.glob("*.json"), key=lambda f: f.stat().st_mtime)
            for f in files:
                if not f.name.startswith(code_version() + "-"):   # another code version's run
                    f.unlink(missing_ok=True)
            files = [f for f in files if f.exists()]
            total = sum(f.stat().st_size for f in files)
            for f in files[:-1]:                                   # oldest first; the newest always stays
                if total <= self.max_disk_bytes:
                    break
                total -= f.stat().st_size
                f.unlink(missing_ok=True)
        except OSError:
            pass   # a full or read-only disk: the memory cache still serves


RUNS = RunCache.from_env()   # one per server process, like the cached model
STATS = "specviz-stats:"     # the start of stats_line(): the load test reads the server's log for it


def stats_line(event: str) -> str:
    """One line for the server's log: the target passes this process has run and what the run cache did."""
    from specviz.engine.decode import TARGET_PASSES
    c = RUNS
    return (f"{STATS} {event}; target_passes={TARGET_PASSES.n} run_cache={'on' if c.enabled else 'off'} "
            f"hits={c.hits} misses={c.misses} stored={c.stored} entries={len(c)}")

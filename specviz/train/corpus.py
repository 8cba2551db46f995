"""Self-distillation corpus: the target answers a seeded prompt set; the token ids are kept.

Each shard (one batch of prompts) holds the token ids of prompt + reply as uint16 (the vocabulary,
49,152 ids, fits in 16 bits), where each sequence starts, its prompt length, whether it is copy-heavy
and the temperature of its batch: a few bytes a token, small enough to commit (data/corpus/). The
per-token training targets — the target's final normed hidden state (bf16), its greedy next token (the
label all proposers are trained on), its top-8 logits (for the KL variant) and, for a fused-feature
head, the hidden states of chosen layers — are recomputed from the ids by one batched teacher-forced
pass (`features`) when a job loads the corpus with the target. Shards written before (with `hidden`,
`label`, `topv`, `topi` stored) still load as they are. Shards already on disk are skipped, so an
interrupted run resumes where it stopped.
"""
from __future__ import annotations

import datetime
import json
import platform
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from specviz.engine.decode import body_pass
from specviz.engine.models import LoadedModel
from specviz.train.common import cli_command
from specviz.train.prompts import COPY, make_prompts

TOPK = 8
FEATURE_KEYS = ("hidden", "label", "topv", "topi")   # recomputed from the ids by `features`
ID_DTYPE = torch.uint16                              # every id of a 49,152-token vocabulary fits


def encode_chat(tok, prompt) -> list[int]:
    """A prompt (one user message, or a multi-turn chat as a list of messages) through the chat template."""
    msgs = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    out = tok.apply_chat_template(msgs, add_generation_prompt=True)
    ids = out["input_ids"] if isinstance(out, dict) or hasattr(out, "keys") else out
    return list(ids)


@torch.inference_mode()
def generate_batch(target: LoadedModel, prompts: list[list[int]], max_new: int, temperature: float,
                   seed: int, pad: int, eos: int | None) -> list[list[int]]:
    """Batched generation with left padding; each reply is cut after its first end-of-turn token."""
    dev = target.device
    width = max(map(len, prompts))
    x = torch.full((len(prompts), width), pad, dtype=torch.long)            # (B, P)
    mask = torch.zeros_like(x)
    for i, p in enumerate(prompts):
        x[i, width - len(p):] = torch.tensor(p)
        mask[i, width - len(p):] = 1
    torch.manual_seed(seed)
    kw = dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0) if temperature > 0 else \
        dict(do_sample=False)
    out = target.model.generate(input_ids=x.to(dev), attention_mask=mask.to(dev), max_new_tokens=max_new,
                                pad_token_id=pad, eos_token_id=eos, **kw)  # (B, P+N)
    replies = []
    for row in out[:, width:].tolist():
        if eos is not None and eos in row:
            row = row[: row.index(eos) + 1]
        replies.append(row)
    return replies


def check_layers(target: LoadedModel, layers) -> list[int]:
    """The layer indices asked for, checked: decoder layers 0..L-1 of the target."""
    n = target.model.config.num_hidden_layers
    layers = [int(x) for x in (layers or [])]
    bad = [x for x in layers if not 0 <= x < n]
    if bad:
        raise ValueError(f"layers {bad} out of range: the target has decoder layers 0..{n - 1}")
    return layers


@torch.inference_mode()
def features(target: LoadedModel, ids_batch: list, layers=None) -> list[dict]:
    """The training targets of whole sequences, recomputed by one teacher-forced batched pass.

    ids_batch: token-id sequences (lists or 1-D tensors), right padded here into one (B, T) batch.
    Returns per sequence: hidden (T, H) bf16, the final normed hidden state (what the LM head reads);
    label (T,) int32, the greedy next token; topv (T, 8) float16 and topi (T, 8) int32, the top-8
    logits; and, when `layers` is given, layers {i: (T, H) bf16}, the output of decoder layer i
    (0-based, the residual stream before the final norm), captured by forward hooks on just those layers."""
    model, dev = target.model, target.device
    body, head = model.get_decoder(), model.get_output_embeddings()
    layers = check_layers(target, layers)
    seqs = [torch.as_tensor(s).long().flatten() for s in ids_batch]
    width = max(map(len, seqs))
    x = torch.zeros((len(seqs), width), dtype=torch.long)                  # (B, T), right padded
    mask = torch.zeros_like(x)
    for i, s in enumerate(seqs):
        x[i, : len(s)] = s
        mask[i, : len(s)] = 1
    # the decode loop's own taps (engine.decode.body_pass): no hook at all without layers
    h, fused = body_pass(body, tuple(layers), input_ids=x.to(dev),
                         attention_mask=mask.to(dev))  # (B, T, H), (B, T, n*H)
    H = h.shape[-1]
    caught = {j: fused[..., n * H:(n + 1) * H] for n, j in enumerate(layers)} if layers else {}  # (B, T, H) each
    out = []
    for i, s in enumerate(seqs):
        hi = h[i, : len(s)]                                                 # (T, H)
        logits = head(hi).float()                                           # (T, V)
        top = torch.topk(logits, TOPK, dim=-1)
        row = dict(hidden=hi.to(torch.bfloat16).cpu(), label=logits.argmax(-1).int().cpu(),
                   topv=top.values.half().cpu(), topi=top.indices.int().cpu())
        if layers:
            row["layers"] = {j: caught[j][i, : len(s)].to(torch.bfloat16).cpu() for j in layers}  # (T, H) each
        out.append(row)
    return out


def features_rate(target: LoadedModel, seqs: list, batch: int = 8, layers=None) -> dict:
    """Teacher-forced features of `seqs` in batches of similar lengths, timed (engine.measure.timed):
    tokens, seconds and tokens/s of the recompute a job pays when it loads an ids-only corpus."""
    from specviz.engine.measure import timed

    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    _, wall = timed(target.device, lambda: [features(target, [seqs[i] for i in order[a:a + batch]], layers)
                                            for a in range(0, len(order), batch)])
    n = sum(len(s) for s in seqs)
    return dict(sequences=len(seqs), tokens=n, batch=batch, seconds=round(wall, 3),
                tokens_per_s=round(n / wall, 1) if wall > 0 else float("inf"), device=str(target.device),
                threads=torch.get_num_threads())


def ids_tensor(ids, vocab_size: int) -> torch.Tensor:
    """(N,) uint16 ids; a vocabulary past 65,536 ids would not fit, so it is refused."""
    if vocab_size > 2 ** 16:
        raise ValueError(f"a vocabulary of {vocab_size:,} ids does not fit the corpus's uint16 ids (65,536 at most)")
    return torch.as_tensor(ids, dtype=torch.int32).to(ID_DTYPE)


def shard_size_bytes(tokens: int, sequences: int) -> int:
    """Bytes of an ids-only corpus (tensor data, without the small safetensors headers): uint16 ids, int32
    starts and prompt lengths, int8 copy flags."""
    return 2 * tokens + 4 * (sequences + 1) + 4 * sequences + sequences


def build(target: LoadedModel, out_dir: str | Path, n_prompts: int = 480, batch: int = 16,
          max_new: int = 160, seed: int = 0, sampled_share: float = 0.5, temperature: float = 0.8,
          progress: bool = True, max_minutes: float | None = None) -> dict:
    """The chat corpus: the seeded prompt set, answered by the target; see build_from_ids."""
    tok = target.tokenizer
    prompts = make_prompts(n_prompts, seed)
    encoded = [encode_chat(tok, p) for _, p in prompts]
    order = sorted(range(len(prompts)), key=lambda i: len(encoded[i]))  # similar lengths share a batch
    meta = build_from_ids(target, [encoded[i] for i in order], [prompts[i][0] == COPY for i in order],
                          out_dir, batch, max_new, seed, sampled_share, temperature, progress=progress,
                          max_minutes=max_minutes)
    # the prompts answered so far (a run stopped by max_minutes has answered only some of n_prompts)
    meta.update(n_prompts=meta["sequences"], copy_prompts=meta["copy_sequences"],
                novel_prompts=meta["sequences"] - meta["copy_sequences"], prompt_set_size=n_prompts)
    (Path(out_dir) / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def build_from_ids(target: LoadedModel, encoded: list[list[int]], is_copy: list[bool], out_dir: str | Path,
                   batch: int = 16, max_new: int = 160, seed: int = 0, sampled_share: float = 0.5,
                   temperature: float = 0.8, pad_id: int | None = None,
                   eos_id: int | None = None, progress: bool = True, max_minutes: float | None = None) -> dict:
    """Generate shard by shard and keep the token ids (shards on disk are skipped; after `max_minutes` the
    run stops between shards, and a rerun resumes); returns the meta summary. No labelling pass: the
    features are recomputed from the ids when a job loads the corpus (`load(..., target=)`)."""
    from tqdm import tqdm

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = target.tokenizer
    if tok is not None:
        eos_id = tok.eos_token_id if eos_id is None else eos_id
        pad_id = (tok.pad_token_id if tok.pad_token_id is not None else eos_id) if pad_id is None else pad_id
    n_shards = (len(encoded) + batch - 1) // batch
    t0, made = time.perf_counter(), 0
    for s in tqdm(range(n_shards), desc="corpus shards", disable=not progress):
        path = out / f"shard_{s:04d}.safetensors"
        if path.exists():
            continue
        made += 1
        if max_minutes is not None and time.perf_counter() - t0 > 60 * max_minutes:
            break
        enc, cp = encoded[s * batch:(s + 1) * batch], is_copy[s * batch:(s + 1) * batch]
        temp = temperature if (s * sampled_share) % 1 + sampled_share >= 1 else 0.0  # every 1/share-th shard
        replies = generate_batch(target, enc, max_new, temp, seed * 100003 + s, pad_id, eos_id)
        seqs = [e + r for e, r in zip(enc, replies)]
        save_file({
            "ids": ids_tensor([t for q in seqs for t in q], target.vocab_size),   # (N,) uint16
            "starts": torch.tensor([0] + [len(q) for q in seqs]).cumsum(0).int(),  # (S+1,)
            "prompt_len": torch.tensor([len(e) for e in enc], dtype=torch.int32),  # (S,)
            "copy": torch.tensor(cp, dtype=torch.int8),                            # (S,)
            "temperature": torch.tensor([temp]),
        }, str(path))
    old = json.loads((out / "meta.json").read_text()) if (out / "meta.json").exists() else {}
    wall = round(time.perf_counter() - t0, 1)
    meta = summarize(out)
    meta.update(seed=seed, max_new_tokens=max_new, temperature=temperature, sampled_share=sampled_share,
                batch=batch, target_fingerprint=target.fingerprint(), last_run_wall_s=wall,
                wall_s_total=round(old.get("wall_s_total", old.get("last_run_wall_s", 0.0)) + wall, 1),
                device=str(target.device), threads=torch.get_num_threads(), stores="ids",
                machine=platform.processor() or platform.machine(),
                finished_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M") if made
                else old.get("finished_utc", "not recorded"),
                command=cli_command())
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def dirs(corpus_dir: str | Path) -> list[Path]:
    """A corpus is one folder or several, comma-separated (e.g. two seeds built apart)."""
    return [Path(x.strip()) for x in str(corpus_dir).split(",") if x.strip()]


def shards(corpus_dir: str | Path) -> list[Path]:
    return sorted(p for d in dirs(corpus_dir) for p in d.glob("shard_*.safetensors"))


def _small(path: Path, keys=("ids", "starts", "prompt_len", "copy")) -> dict:
    """The id-side tensors of one shard (never its stored features, if an old shard has them); ids as int32."""
    from safetensors import safe_open

    with safe_open(str(path), "pt") as f:
        d = {k: f.get_tensor(k) for k in keys}
        d["stored"] = set(f.keys())
    d["ids"] = d["ids"].to(torch.int32)
    return d


def summarize(corpus_dir: str | Path) -> dict:
    n_tok = n_reply = n_seq = n_copy = 0
    for p in shards(corpus_dir):
        d = _small(p)
        n_tok += len(d["ids"])
        n_seq += len(d["prompt_len"])
        n_copy += int(d["copy"].sum())
        n_reply += int((d["starts"][1:] - d["starts"][:-1]).sum() - d["prompt_len"].sum())
    return dict(shards=len(shards(corpus_dir)), sequences=n_seq, tokens=n_tok, reply_tokens=n_reply,
                copy_sequences=n_copy)


def token_ids(corpus_dir: str | Path):
    """(ids (T,) int32, prompt_len) per sequence, reading only the ids of each shard, not the features."""
    for p in shards(corpus_dir):
        d = _small(p)
        st, pl = d["starts"].tolist(), d["prompt_len"].tolist()
        yield from ((d["ids"][a:b], m) for a, b, m in zip(st[:-1], st[1:], pl))


def prompt_keys(corpus_dir: str | Path) -> set[bytes]:
    """The distinct prompts of a corpus, as token-id bytes (data.prompt_key of each sequence)."""
    return {ids[:m].numpy().tobytes() for ids, m in token_ids(corpus_dir)}


def duplicates(corpus_dir: str | Path) -> tuple[int, int]:
    """(sequences that repeat an earlier one word for word, their reply tokens): greedy answers to a prompt
    asked twice are identical, so they add no new text."""
    seen, n, reply = set(), 0, 0
    for ids, m in token_ids(corpus_dir):
        key = ids.numpy().tobytes()
        if key in seen:
            n, reply = n + 1, reply + len(ids) - m
        seen.add(key)
    return n, reply


def _cache_path(cache: Path, shard: Path, d: dict, target: LoadedModel, layers: list[int]) -> Path:
    """One cache file per shard content (its ids and sequence starts), target (weights and dtype) and layers."""
    import hashlib

    h = hashlib.sha256(d["ids"].numpy().tobytes() + d["starts"].to(torch.int64).numpy().tobytes())
    h.update(f"|{target.fingerprint()}|{target.dtype}|{layers}".encode())
    key = h.hexdigest()[:16]
    return cache / f"{shard.parent.name}-{shard.stem}-{key}.safetensors"


def _shard_features(target: LoadedModel, rows: list[dict], layers: list[int], batch: int) -> dict:
    """Every feature of a shard's sequences, concatenated in shard order: {key: (N, ...)}."""
    got = [None] * len(rows)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]["ids"]))
    for a in range(0, len(order), batch):
        part = order[a:a + batch]
        for i, f in zip(part, features(target, [rows[i]["ids"] for i in part], layers)):
            got[i] = f
    out = {k: torch.cat([f[k] for f in got]) for k in FEATURE_KEYS}
    out.update({f"layer.{j}": torch.cat([f["layers"][j] for f in got]) for j in layers})
    return out


def load(corpus_dir: str | Path, keys=("ids", "hidden", "label"), target: LoadedModel | None = None,
         layers=None, batch: int = 8, progress: bool = False, cache: str | Path | None = None) -> list[dict]:
    """One dict per sequence: the requested per-token tensors (ids as int32) plus prompt_len, copy and folder.

    Feature keys (hidden, label, topv, topi) and `layers` (row["layers"] = {i: (T, H)}) come from the shard
    when it stored them (shards written before the ids-only format), else from `features` run on the
    target in batches of `batch` sequences of similar length. `cache`: a folder (not committed, e.g.
    runs/features) where recomputed features are kept per shard, target and layers, so that the next job
    on the same corpus and target reads them instead of recomputing."""
    from tqdm import tqdm

    want = [k for k in keys if k in FEATURE_KEYS]
    unknown = [k for k in keys if k not in FEATURE_KEYS and k != "ids"]
    if unknown:
        raise ValueError(f"unknown corpus keys {unknown}: ids, {', '.join(FEATURE_KEYS)}")
    layers = check_layers(target, layers) if target is not None else list(layers or [])
    seqs = []
    for p in tqdm(shards(corpus_dir), desc="corpus features", disable=not progress):
        d = _small(p)
        st = d["starts"].tolist()
        rows = [dict(ids=d["ids"][st[i]:st[i + 1]], prompt_len=int(d["prompt_len"][i]), copy=bool(d["copy"][i]),
                     folder=p.parent.name) for i in range(len(st) - 1)]
        if want and set(want) <= d["stored"] and not layers:       # an old shard with its features stored
            from safetensors import safe_open
            with safe_open(str(p), "pt") as f:
                stored = {k: f.get_tensor(k) for k in want}
            for i, r in enumerate(rows):
                r.update({k: stored[k][st[i]:st[i + 1]] for k in want})
        elif want or layers:
            if target is None:
                raise ValueError(f"{p} holds token ids only: pass the target to recompute "
                                 f"{', '.join(want + (['layers'] if layers else []))} by teacher forcing")
            path = _cache_path(Path(cache), p, d, target, layers) if cache is not None else None
            if path is not None and path.exists():
                feats = load_file(str(path))
            else:
                feats = _shard_features(target, rows, layers, batch)
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    save_file(feats, str(path.with_suffix(".tmp")))
                    path.with_suffix(".tmp").replace(path)
            for i, r in enumerate(rows):
                r.update({k: feats[k][st[i]:st[i + 1]] for k in want})
                if layers:
                    r["layers"] = {j: feats[f"layer.{j}"][st[i]:st[i + 1]] for j in layers}
        seqs += rows
    return seqs


def keep_ids(src: str | Path, dst: str | Path) -> dict:
    """Copy a corpus folder keeping only what the ids-only format stores (an old shard's hidden states,
    labels and top-8 are dropped: `load` recomputes them). Returns the new folder's meta."""
    src, dst = Path(src), Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    for p in shards(src):
        d = _small(p, ("ids", "starts", "prompt_len", "copy", "temperature"))
        top = int(d["ids"].max()) + 1 if len(d["ids"]) else 0
        save_file({"ids": ids_tensor(d["ids"], top),                                # (N,) uint16, or refused
                   "starts": d["starts"].int(), "prompt_len": d["prompt_len"].int(), "copy": d["copy"].to(torch.int8),
                   "temperature": d["temperature"]}, str(dst / p.name))
    meta = {**folder_meta(src), **summarize(dst), "stores": "ids", "ids_from": str(src)}
    meta["bytes"] = sum(p.stat().st_size for p in shards(dst))
    (dst / "meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def folder_meta(folder: Path) -> dict:
    """One corpus folder's meta.json (written by build_from_ids), else its sizes counted from the shards."""
    meta = folder / "meta.json"
    return json.loads(meta.read_text()) if meta.exists() else summarize(folder)


def trained_on(folder: Path, meta: dict, cards: dict) -> str:
    """The shipped artifacts whose card lists this folder (or, for cards older than that field, its seed)."""
    out = []
    for name, c in cards.items():
        info = c.get("corpus") or {}
        if "folders" in info:
            hit = any(Path(f).name == folder.name for f in info["folders"])
        else:
            hit = meta.get("seed") in info.get("seeds", [info.get("seed")])
        out += [name] if hit else []
    return ", ".join(out) or "–"


OLD_BYTES_PER_TOKEN = 4 + 2 * 576 + 4 + 8 * 2 + 8 * 4   # int32 id, bf16 hidden (SmolLM2: 576), label, top-8 values, ids


def stores(folder: Path, meta: dict) -> str:
    """What a folder's shards hold: token ids only, or ids with the features (shards from before)."""
    if meta.get("stores") == "ids":
        return "ids"
    first = shards(folder)[:1]
    return ("ids" if first and "hidden" not in _small(first[0])["stored"] else "ids + features") if first else "?"


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("shard_*.safetensors"))


CORPUS_TEXT = (  # the card's account of how the corpus is made
    "The target (SmolLM2-135M-Instruct, bfloat16) answers a seeded prompt set (`specviz/train/prompts.py`: "
    "copy-heavy tasks built from Python's standard-library docstrings and functions, from short code "
    "snippets in eight languages and from synthetic tables and records — rewrite, quote, summarise, "
    "convert, proofread, sort, repeat or translate code — open-ended ones — stories, poems, explanations, "
    "advice, recipes, comparisons, trips, dialogues, emails, reviews — with varied length and tone "
    "constraints, and multi-turn chats whose earlier turns go through the chat template). None of the "
    "app's workload prompts is in it. Replies are generated in batches with left padding (greedy, or "
    "sampled at T = 0.8 for the sampled share of batches), cut after the first end-of-turn token. A shard "
    "keeps the token ids (uint16), where each sequence starts, its prompt length and kind: the features a "
    "job trains on — the target's final hidden state, its greedy next token, its top-8 logits and, for a "
    "fused-feature head, chosen layers' hidden states — are recomputed from the ids by a batched "
    "teacher-forced pass when the job loads the corpus (`python -m specviz train features` measures its "
    "rate). Folders from before that format also stored those features (\"ids + features\"); they load as "
    "they are. The training jobs hold out every sequence of 6% of the distinct prompts, picked by a hash of "
    "the prompt's tokens: a prompt asked twice (in one folder or in two) is never on both sides, so "
    "held-out prompts are never trained on. Wall time is generation (and, for the older folders, their "
    "labelling pass); reply tokens/s is reply tokens ÷ wall time.")


def folder_rows(corpus_dir: str | Path, cards: dict | None = None) -> tuple[list[str], dict, list[Path]]:
    """The card's table: its header and one row per corpus folder; the totals; the folders that store ids only."""
    cards = cards or {}
    rows = ["| folder | seed | prompts (copy-heavy / novel) | sequences | tokens | reply tokens | batch | "
            "max new | sampled share (T) | wall (min) | reply tokens/s | stores (MB on disk) | made on | "
            "finished (UTC) | shipped artifacts trained on it |", "|" + "---|" * 15]
    tot = dict(sequences=0, tokens=0, reply_tokens=0, wall=0.0, bytes=0)
    kept = []
    for d in dirs(corpus_dir):
        m = folder_meta(d)
        wall = m.get("wall_s_total", m.get("last_run_wall_s", 0.0))
        for k in ("sequences", "tokens", "reply_tokens"):
            tot[k] += m.get(k, 0)
        tot["wall"] += wall
        size, what = folder_bytes(d), stores(d, m)
        tot["bytes"] += size
        kept += [d] if what == "ids" else []
        mix = (f"{m.get('n_prompts', '?')} ({m['copy_prompts']} / {m['novel_prompts']})" if "copy_prompts" in m
               else str(m.get("n_prompts", "?")))
        rows.append(f"| {d.name} | {m.get('seed', '?')} | {mix} | {m['sequences']:,} | {m['tokens']:,} | "
                    f"{m['reply_tokens']:,} | {m.get('batch', '?')} | {m.get('max_new_tokens', '?')} | "
                    f"{m.get('sampled_share', '?')} ({m.get('temperature', '?')}) | {wall / 60:.1f} | "
                    f"{m['reply_tokens'] / wall if wall else float('nan'):.0f} | {what} ({size / 1e6:.2f}) | "
                    f"{m.get('device', '?')}, {m.get('threads', '?')} threads, {m.get('machine', '?')} | "
                    f"{m.get('finished_utc', '?')} | {trained_on(d, m, cards)} |")
    return rows, tot, kept


def data_card(corpus_dir: str | Path, cards: dict | None = None) -> str:
    """models/corpus.md: the corpus folders, what each stores and its size on disk, and which shipped
    artifacts (`cards`) trained on each."""
    rows, tot, kept = folder_rows(corpus_dir, cards)
    n_distinct = len(prompt_keys(corpus_dir))
    n_dup, dup_reply = duplicates(corpus_dir)
    ids_bytes = shard_size_bytes(tot["tokens"], tot["sequences"])
    others = len(kept) < len(dirs(corpus_dir))
    where = (f"The folders that store ids only ({', '.join(f'`{d}`' for d in kept)}) are meant to be committed "
             "with this card" + ("; the others predate that format (`python -m specviz train corpus-ids --corpus "
                                 "OLD --out data/corpus/NAME` keeps their ids)." if others else ".") if kept else
             "None of these folders is in the ids-only format yet: `python -m specviz train corpus-ids --corpus OLD "
             "--out data/corpus/NAME` keeps their ids, small enough to commit.")
    return "\n".join([
        "# Data card: the self-distillation corpus",
        "",
        CORPUS_TEXT,
        "",
        *rows,
        f"| **total** | | {n_distinct:,} distinct | {tot['sequences']:,} | {tot['tokens']:,} | "
        f"{tot['reply_tokens']:,} | | | | {tot['wall'] / 60:.1f} | "
        f"{tot['reply_tokens'] / tot['wall'] if tot['wall'] else float('nan'):.0f} | "
        f"({tot['bytes'] / 1e6:.2f}) | | | |",
        "",
        f"{n_dup:,} sequences repeat an earlier one word for word (greedy replies to a prompt asked twice); "
        f"without them the corpus holds {tot['reply_tokens'] - dup_reply:,} distinct reply tokens.",
        "",
        f"As token ids these {tot['tokens']:,} tokens take {ids_bytes / 1e6:.2f} MB (2 bytes a token, 9 a "
        f"sequence, before git's compression); with the features stored, as the older shards did, they took "
        f"about {tot['tokens'] * OLD_BYTES_PER_TOKEN / 1e9:.2f} GB. {where}",
        "",
        "Regenerate a folder (resumable; shards on disk are skipped) with the command its meta.json records, "
        "e.g. `python -m specviz train corpus --prompts 4400 --batch 32 --max-new-tokens 192 --seed 2 "
        "--run data/corpus/corpus-s2`, then this card with "
        "`python -m specviz train card --corpus FOLDER[,FOLDER...]`.",
        ""])

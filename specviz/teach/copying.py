"""When copying pays, in words: the suffix cache across a session's requests, and the numbers a session run
measured (engine/sessions.session_against_plain's rows), formatted for Compare's session panel."""
from __future__ import annotations

from specviz.core import fmt as F

WHEN_CACHE_PAYS = (
    "**When does a suffix cache pay?** Lookup and suffix decoding copy text the model is about to write again. "
    "Within one request they can only copy this prompt and this output so far. Suffix decoding also keeps the "
    "session's earlier requests (their outputs, oldest evicted first), so it pays when requests *repeat each "
    "other*: an agent or a coding assistant restating the same function after each edit, the same table "
    "reformatted, the same document questioned again, an agent's tool calls writing the same JSON record for "
    "each new order. The model's answer to request 3 then often contains long "
    "stretches of its answer to request 2, and each of them is a draft the target checks in one pass. "
    "It **cannot** pay on novel text: when nothing earlier continues the context, nothing is drafted and the "
    "step is an ordinary decoding step (the cost is only the search, well under a millisecond here). Nor does "
    "the cache help the session's first request, or one whose answer shares nothing with the earlier ones.")

MEASURED_ALONE = (
    "Measured by the bench (`python -m specviz bench --out bench`, 2026-12-02, on a 2-thread CPU the file does "
    "not name: bfloat16, greedy, 128 new tokens, "
    "3 repeats, the four copy-heavy single requests, median): suffix with its defaults (a tree of up to 8 × the "
    "match's tokens) 2.55× plain, lookup with the match-length rule (up to 4 × the match) 2.42×, transformers' "
    "prompt lookup at k = 10 2.15×; on sampled novel prompts (T = 0.8, 3 seeds) lookup 1.00× and suffix 1.07×. "
    "Those are single requests: the cache plays no part in them. The session panel measures what it adds, live.")

MEASURED_SESSION = (
    "Measured by the bench (`python -m specviz bench --out bench`, 2026-12-02, on a 2-thread CPU the file does "
    "not name: bfloat16, greedy, 64 new tokens "
    "per request, 2 repeats, speedup × plain decoding of the same requests): in `edit-function-session` suffix ran the "
    "whole session at 2.13× with the cache and 2.10× "
    "without. Requests 1–3 drafted about the same either way (1.45–1.77× with it): their answers did not restate "
    "an earlier answer yet. Request 4 went from 2.76× to 4.53× with the cache: there the model rewrote the "
    "function it had written the request before. The cache pays per request, exactly where an answer repeats an "
    "earlier one. It pays most where the prompt never shows the answer's shape: in `order-records-session` (five "
    "orders, each to be written as the same JSON record) suffix ran at 2.31× with the cache, 1.42× without and "
    "lookup at 1.24×: from request 2 on, the record's keys, quotes and indentation came from the earlier answers "
    "(1.43× on request 1, 2.27–3.25× after).")


def session_rows(rows: list[dict]) -> list[dict]:
    """sessions.SessionMeasured.row() dicts -> the table Compare shows (one row per contender)."""
    out = []
    for r in rows:
        same = [s for s in r.get("same_as_plain") or [] if s is not None]
        out.append({"method": r["label"],
                    "cross-request cache": "on" if r["cache"] else "off",
                    "speedup": f"{r['speedup']:.2f}×",
                    "spread": F.num(r.get("spread")),
                    "τ (tokens per pass)": f"{r['tokens_per_pass']:.2f}",
                    "k̄ (drafted per step)": f"{r['mean_k']:.2f}",
                    "tokens/s": f"{r['tokens_per_s']:.1f}",
                    "plain tokens/s": f"{r['plain_tokens_per_s']:.1f}",
                    "speedup per request": " · ".join(f"{x:.2f}" for x in r["request_speedups"]),
                    "same text as plain": ("–" if not same else f"{sum(same)} of {len(same)} requests")})
    return out


def cache_verdict(rows: list[dict]) -> str | None:
    """One sentence on what the cache added: the same method with the cache on against off; None when the
    rows do not hold such a pair."""
    on = next((r for r in rows if r["cache"]), None)
    off = next((r for r in rows if not r["cache"] and r["label"].split(",")[0] == on["label"].split(",")[0]),
               None) if on else None
    if on is None or off is None or not off["speedup"]:
        return None
    gain = on["speedup"] / off["speedup"]
    first_on, later_on = on["request_speedups"][:1], on["request_speedups"][1:]
    first_off, later_off = off["request_speedups"][:1], off["request_speedups"][1:]
    said = (f"With the cache on the session ran at {on['speedup']:.2f}× plain, with it off at "
            f"{off['speedup']:.2f}×: {gain:.2f}× from remembering earlier requests.")
    if later_on and later_off:
        said += (f" The first request cannot use the cache ({first_on[0]:.2f}× vs {first_off[0]:.2f}×); the later "
                 f"ones averaged {sum(later_on) / len(later_on):.2f}× with it and "
                 f"{sum(later_off) / len(later_off):.2f}× without.")
    if gain < 1.05:
        said += " Little or nothing gained: these answers did not repeat each other enough to copy."
    return said

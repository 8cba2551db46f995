"""models/README.md from the cards and the evaluation tables (python -m specviz train readme)."""
from __future__ import annotations

import json
from pathlib import Path

from specviz.engine import artifacts
from specviz.train.evaluate import markdown


def _cards(folder) -> dict:
    return {n: artifacts.card(n, folder) for n, ok in artifacts.available(folder).items() if ok}


def artifact_table(cards: dict) -> str:
    rows = ["| artifact | what | bytes | corpus tokens | steps | wall (min) | final train loss | held-out top-1 vs "
            "target (reply positions) | held-out Σ min(p, q) at T = 0.8 | most-frequent-token baseline |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for n, c in cards.items():
        h = c.get("heldout", {})
        if n == "medusa":
            what, acc = f"{c['n_heads']} heads, draft vocab {c['draft_vocab_size']}", h.get("heldout_top1_per_head")
            ov = h.get("heldout_sum_min_pq_t08_per_head")
        elif n in ("eagle", "eagle3"):
            fed = f"reads target layers {', '.join(map(str, c['feature_layers']))}, " if n == "eagle3" else ""
            what, acc = (f"1 layer, {fed}{c['unrolled_passes']} unrolled passes, {c.get('loss', 'ce')} loss, "
                         f"draft vocab {c['draft_vocab_size']}"
                         + ("" if n == "eagle" and c.get("feature_loss_weight", 1) else ", token objective only")
                         + (f"; fine-tuned from {c['warm_from']} (steps and minutes are the fine-tune's)"
                            if c.get("warm_from") else ""), h.get("heldout_top1_per_step"))
            ov = h.get("heldout_sum_min_pq_t08_per_step")
        elif n == "drafter":
            what = f"{c['n_layers']} layers, {c['loss']} loss, draft vocab {c['draft_vocab_size']}"
            acc = h.get("heldout_top1")
            ov = h.get("heldout_sum_min_pq_t08")
        else:
            what = f"rank {c['rank']} on {', '.join(c['modules'])}"
            acc = (f"docs loss {c['docs_heldout_loss_base']} → {c['docs_heldout_loss']}; chat loss "
                   f"{c.get('chat_heldout_loss_base')} → {c.get('chat_heldout_loss_finetuned')}")
            ov = None
        base = h.get("most_frequent_token_top1", "–")
        missing = "not in its card (trained before it was reported; see the notes)"
        tokens = (c.get("corpus") or {}).get("tokens")
        rows.append(f"| {n} | {what} | {c['bytes']:,} | {f'{tokens:,}' if tokens else '–'} | {c['steps']} | "
                    f"{c['wall_s'] / 60:.1f} | {c['final_loss']} | {acc} | "
                    f"{ov if ov is not None else missing if n != 'lora' else '–'} | {base} |")
    return "\n".join(rows)


TITLES = {"greedy": "base target, greedy, all 8 workloads",
          "sampled": "base target, sampled at temperature 0.8, the 4 novel workloads × seeds 0 and 1",
          "finetuned": "LoRA-fine-tuned target, greedy, all 8 workloads: the heads on a checkpoint they were not "
                       "trained for"}


def tables(eval_dir) -> str:
    """One table per measuring process (each has its own interleaved plain baseline)."""
    out = []
    for p in sorted(Path(eval_dir).glob("table_*.json")):
        t = json.loads(p.read_text())
        group = p.stem[len("table_"):]
        out.append(markdown(t["rows"], f"{group}: {TITLES.get(t['part'], t['part'])} "
                                       f"({t['max_new_tokens']} new tokens, {t['reps']} repetition)"))
    return "\n\n".join(out)


def _cli(line: str) -> str:
    return line if line.startswith("python") else f"python -m specviz {line}"


def reproduce(cards: dict) -> str:
    """Corpus commands (from each folder's meta.json, where the folder is on this machine), then one per card."""
    lines, seen = [], []
    for c in cards.values():
        for d in (c.get("corpus") or {}).get("folders", []):
            if d not in seen:
                seen.append(d)
                m = Path(d) / "meta.json"
                cmd = json.loads(m.read_text()).get("command") if m.exists() else None
                lines.append(_cli(cmd) if cmd else f"# {d}: no command recorded (not on this machine, or made "
                             "outside the CLI); models/corpus.md has its recipe")
    if seen:
        lines.append(f"python -m specviz train card --corpus {','.join(seen)}    # models/corpus.md")
    for n, c in cards.items():
        lines.append(_cli(c["command"]) if c.get("command") else
                     f"# {n}: no command recorded (trained before cards kept one, or outside the CLI); "
                     "see the notes' Commands, and its card")
    return "\n".join(lines)


def write(folder=None, eval_dir="runs/eval", notes: str = "") -> str:
    folder = Path(folder) if folder else artifacts.MODELS_DIR
    cards = _cards(folder)
    runs = tables(eval_dir) or ("No `train evaluate` tables in this folder: the shipped proposers' speedups, "
                                "τ and α beside lookup and plain decoding on the same runs are the bench's, "
                                "in `bench/results.md` (the same measuring path, docs/metrics.md).")
    total = sum(c["bytes"] for c in cards.values())
    fp = next(iter(cards.values()), {}).get("target_fingerprint", "?")
    text = f"""# Trained proposers for the default target

Trained here, on a 2-core CPU shared with other jobs, against **SmolLM2-135M-Instruct** (the embedded
GGUF, run in bfloat16), target fingerprint `{fp}`. Each artifact is a bfloat16 safetensors file
(weights only, never pickle) with a JSON card: fingerprint, corpus, steps, wall time, losses, held-out
top-1 agreement with the target's greedy token. Loading an artifact against another checkpoint warns.
All artifacts together: {total / 1e6:.1f} MB.

## Artifacts

{artifact_table(cards)}

## Notes, levers and measurements

{notes}

## Every measuring run

Measured through engine/measure.py, the same path as Compare and the bench (docs/metrics.md):
speedup = method tokens/s ÷ the same repeat's plain tokens/s on the same workload and decoding mode,
median of the per-repeat ratios, then median over the workloads of the kind; tokens per pass τ =
emitted ÷ target passes; α = accepted ÷ tested, α̂ = accepted ÷ drafted.

{runs}

## Reproduce

The commands that made the corpus and each shipped artifact, as their meta files and cards recorded them:

```
{reproduce(cards)}
python -m specviz train readme                       # this file; its notes come from models/notes.md
```
Every job resumes from its run folder (runs/<job>/ckpt.*) when started again; add `--device cuda`
on a GPU. `--threads 1` lets two jobs train side by side on 2 cores.
"""
    (folder / "README.md").write_text(text)
    return text

"""Does the EAGLE head's second draft step see at run time what it was trained and scored on?

    OMP_NUM_THREADS=2 .venv/bin/python scripts/eagle_context.py [--new 128] [--models models]

Training (specviz/train/eagle.py, unroll) feeds pass 2 the head's own pass-1 guesses at *every* position, so
the second step attends over keys built from guessed features. At run time (proposers/eagle.py) the head's
cache holds keys from the target's *real* features, and only the newest entry is a guess. EAGLE-3 and HASS
train with the run-time context instead ("training-time test"). This script measures how much that gap
costs the shipped head, without a corpus: it decodes each workload greedily with the target (the text the
bench's greedy runs verify), takes the target's features over it in one pass, and scores the head's drafts
both ways on the reply positions:
    step 1      the head's first draft from real features equals the target's greedy token
    step 2      its second draft equals it (the head unrolled on its own step-1 guess)
    step 2 | 1  the same, among positions whose step 1 was right (what a chain of k = 2 keeps)
"train" = the unroll of training and held-out scoring; "run time" = keys of real features for the
context, guesses only on the diagonal (a custom attention mask over both passes' keys).
"""
import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from specviz.engine import artifacts, measure, workloads  # noqa: E402
from specviz.engine.decode import DecodeConfig  # noqa: E402
from specviz.engine.methods import encode_prompt  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402
from specviz.train.eagle import unroll  # noqa: E402


def run_time_unroll(head, embed, feat, ids, n_passes: int = 2) -> list[torch.Tensor]:
    """Like train.eagle.unroll, but pass j at position t attends to pass-1 keys at positions <= t-j+1
    and to pass i's key at t-j+i (i = 2..j): the context the head's cache holds while drafting."""
    T = feat.shape[1] - 1
    emb = embed(ids[:, 1:]).to(feat.dtype)                                    # (1, T, H)
    pos = torch.arange(T)
    y, (k1, v1) = head(feat[:, :-1], emb, pos)                                # (1, T, H); keys (1, nkv, T, hd)
    preds, ks, vs = [y], [k1], [v1]
    t = torch.arange(T)
    for j in range(2, n_passes + 1):
        x = torch.cat([feat[:, :1], y[:, :-1]], 1)                            # own guesses, shifted
        mask = torch.zeros(T, j * T, dtype=torch.bool)                        # (T, j*T): pass blocks side by side
        mask[:, :T] = torch.arange(T)[None] <= (t[:, None] - j + 1)
        for i in range(2, j + 1):
            s = t - j + i
            mask[t[s >= 0], (i - 1) * T + s[s >= 0]] = True
        y, (k, v) = head(x, emb, pos, (torch.cat(ks, 2), torch.cat(vs, 2)), mask)
        preds.append(y)
        ks.append(k[:, :, -T:]), vs.append(v[:, :, -T:])
    return preds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", type=int, default=128)
    ap.add_argument("--models", default=None, help="artefact folder (default: models/)")
    a = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    target = load_model("default", "cpu", "bfloat16")
    eagle = artifacts.load_eagle(target, a.models)
    head, embed, out = eagle.head, eagle.embed, eagle.out
    totals = {}
    print("| workload | kind | positions | step 1 | step 2 train / run time | step 2 given 1 train / run time |")
    print("|---|---|---|---|---|---|")
    with torch.inference_mode():
        for w in workloads.WORKLOADS:
            prompt = encode_prompt(target.tokenizer, w.prompt, w.chat)
            s, _ = measure.run(target, None, prompt, DecodeConfig(k=1, max_new_tokens=a.new, record=False),
                               target.tokenizer.eos_token_id)
            ids = torch.tensor(prompt + s.token_ids)[None]                    # (1, T+1)
            # draft vocabulary + the prompt's ids, as at run time
            eagle.reset(ids[0, :len(prompt)])
            feat = target.model.get_decoder()(input_ids=ids).last_hidden_state.to(head.fc.weight.dtype)
            goal = ids[0, 2:]                                                 # entry t of a pass guesses token t+2
            reply = torch.arange(len(goal)) + 2 >= len(prompt)
            row = {}
            for style, fn in (("train", unroll), ("run time", run_time_unroll)):
                p1, p2 = (out.ids[out.sub_logits(p[0, :-1]).argmax(-1)] for p in fn(head, embed, feat, ids, 2))
                hit1, hit2 = p1 == goal, p2 == goal
                prev1 = torch.cat([torch.zeros(1, dtype=torch.bool), hit1[:-1]])  # step 1 drafted token t+1 right
                row[style] = [int(x.sum()) for x in (reply, hit1 & reply, hit2 & reply, prev1 & reply,
                                                     hit2 & prev1 & reply)]
            for style, r in row.items():
                tot = totals.setdefault((w.kind, style), [0] * 5)
                totals[(w.kind, style)] = [x + y for x, y in zip(tot, r)]
            tr, rt = row["train"], row["run time"]
            print(f"| {w.name} | {w.kind} | {tr[0]} | {tr[1] / tr[0]:.3f} | {tr[2] / tr[0]:.3f} / {rt[2] / rt[0]:.3f} "
                  f"| {tr[4] / max(1, tr[3]):.3f} / {rt[4] / max(1, rt[3]):.3f} |", flush=True)
    for kind in dict.fromkeys(k for k, _ in totals):
        tr, rt = totals[(kind, "train")], totals[(kind, "run time")]
        print(f"| **all {kind}** | | {tr[0]} | {tr[1] / tr[0]:.3f} | {tr[2] / tr[0]:.3f} / {rt[2] / rt[0]:.3f} | "
              f"{tr[4] / max(1, tr[3]):.3f} / {rt[4] / max(1, rt[3]):.3f} |")


if __name__ == "__main__":
    main()

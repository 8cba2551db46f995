"""The losslessness lab: many speculative draws through specviz.core.verify.verify, tallied against p.

Each trial drafts one token x ~ q and lets the verifier decide: keep x, or replace it with a draw
from the residual norm(max(0, p - q)). The first emitted token of every trial is counted. The
theory says those counts follow p exactly, whatever q is, and that a trial keeps x with
probability Σ_x min(p(x), q(x)).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig, logits_to_probs, sample
from specviz.core.verify import acceptance_probability, one_hot_q, residual, verify
from specviz.engine import measure
from specviz.engine.decode import body_pass
from specviz.engine.models import LoadedModel
from specviz.proposers.base import Context

PRESETS = {  # name -> (p, q) over a 5-token toy vocabulary
    "q close to p": ("0.40, 0.25, 0.15, 0.12, 0.08", "0.35, 0.30, 0.15, 0.10, 0.10"),
    "q far from p": ("0.05, 0.10, 0.15, 0.30, 0.40", "0.50, 0.25, 0.15, 0.05, 0.05"),
    "q misses a token p likes": ("0.30, 0.30, 0.30, 0.10, 0.00", "0.45, 0.45, 0.00, 0.10, 0.00"),
    "q one-hot (lookup)": ("0.40, 0.25, 0.15, 0.12, 0.08", "0, 1, 0, 0, 0"),
}


def parse_dist(text: str, name: str) -> torch.Tensor:
    """'0.2, 0.3, 0.5' -> a (V,) distribution (normalised); InputError with a plain message if bad."""
    parts = [x for x in re.split(r"[,\s;]+", text.strip()) if x]
    if not parts:
        raise InputError(f"{name} is empty: type numbers separated by commas")
    try:
        vals = [float(x) for x in parts]
    except ValueError:
        raise InputError(f"{name} must be numbers separated by commas, got '{text.strip()}'") from None
    t = torch.tensor(vals, dtype=torch.float64)  # (V,)
    if not torch.isfinite(t).all() or (t < 0).any():
        raise InputError(f"{name} must be finite and non-negative")
    if t.sum() <= 0:
        raise InputError(f"{name} must have some positive mass")
    if len(t) < 2 or len(t) > 26:
        raise InputError(f"{name} needs between 2 and 26 values, got {len(t)}")
    return (t / t.sum()).float()


def pair(p_text: str, q_text: str) -> tuple[torch.Tensor, torch.Tensor]:
    p, q = parse_dist(p_text, "p"), parse_dist(q_text, "q")
    if len(p) != len(q):
        raise InputError(f"p has {len(p)} values and q has {len(q)}: both must cover the same tokens")
    return p, q


@dataclass
class Stats:
    acceptance: float        # Σ min(p, q): P(the draft is kept)
    residual: torch.Tensor   # (V,) norm(max(0, p - q)): where corrections are drawn from
    tv: float                # total variation distance between p and q


def stats(p: torch.Tensor, q: torch.Tensor) -> Stats:
    return Stats(float(acceptance_probability(p, q)), residual(p, q), 0.5 * float((p - q).abs().sum()))


RULES = {  # what happens to a drafted x ~ q: the exact rule, and two ways to break it
    "exact": "the exact rule: keep x with probability min(1, p/q), else draw from the residual norm(max(0, p − q))",
    "resample from p": "broken: keep x with probability min(1, p/q), else draw the replacement from p itself",
    "accept every draft": "broken: keep every drafted x, no test",
}


def kept_share(p: torch.Tensor, q: torch.Tensor, rule: str) -> float:
    """P(a drafted x ~ q is kept) under each rule: Σ min(p, q) when x is tested with min(1, p/q) (the exact rule
    and 'resample from p'), 1 when every draft is accepted."""
    if rule not in RULES:
        raise InputError(f"unknown rule '{rule}' (choose from: {', '.join(RULES)})")
    return 1.0 if rule == "accept every draft" else float(acceptance_probability(p, q))


KEPT_WORDS = {"exact": "Σ min(p, q), the share of drafts the exact rule keeps",
              "resample from p": "the share of drafts this rule keeps (it tests x as the exact rule does)",
              "accept every draft": "the share of drafts this rule keeps"}


def drift(p: torch.Tensor, q: torch.Tensor, rule: str) -> float:
    """Total variation between what a rule's output follows and p (0 for the exact rule)."""
    return 0.5 * float((output_distribution(p, q, rule) - p).abs().sum())


CLEAR_PRESET = "q far from p"  # the preset on which a broken rule's drift is plain to see


def output_distribution(p: torch.Tensor, q: torch.Tensor, rule: str = "exact") -> torch.Tensor:
    """What the emitted token follows under each rule, in closed form. (V,) -> (V,)

    exact: min(p, q) + P(reject)·residual = min(p, q) + (p − q)⁺ = p.
    resample from p: min(p, q) + P(reject)·p, which is not p unless q = p.
    accept every draft: q."""
    kept = torch.minimum(p, q)                                   # (V,)
    reject = 1.0 - kept.sum()                                    # P(reject) = total variation(p, q)
    if rule == "exact":
        return kept + reject * residual(p, q)
    if rule == "resample from p":
        return kept + reject * p
    if rule == "accept every draft":
        return q.clone()
    raise InputError(f"unknown rule '{rule}' (choose from: {', '.join(RULES)})")


def proof_rows(p: torch.Tensor, q: torch.Tensor) -> list[dict]:
    """The three-line losslessness proof, one row per token: q·min(1, p/q) + P(reject)·residual = p."""
    kept, res = torch.minimum(p, q), residual(p, q)
    reject = 1.0 - float(kept.sum())
    return [{"q(x)·min(1, p(x)/q(x))": float(kept[i]), "P(reject)·residual(x)": reject * float(res[i]),
             "(p(x) − q(x))⁺": max(0.0, float(p[i] - q[i])),
             "sum": float(kept[i]) + reject * float(res[i]), "p(x)": float(p[i])} for i in range(len(p))]


@dataclass
class Simulation:
    counts: torch.Tensor              # (V,) first emitted token counts after all trials
    accepted: int                     # trials whose draft was kept
    checkpoints: list[int]            # trial counts at which the histogram was snapshotted
    tv_to_p: list[float]              # TV(empirical, p) at each checkpoint
    tv_to_q: list[float]              # TV(empirical, q) at each checkpoint
    snapshots: list[torch.Tensor]     # (V,) empirical frequencies at each checkpoint

    @property
    def trials(self) -> int:
        return int(self.counts.sum())

    @property
    def freq(self) -> torch.Tensor:
        return self.counts / max(1, self.trials)


def _tv(a: torch.Tensor, b: torch.Tensor, shown: list[int] | None) -> float:
    if shown is not None:
        a, b = project(a, shown), project(b, shown)
    return 0.5 * float((a - b).abs().sum())


def checkpoints_for(n: int) -> list[int]:
    pts, c = [], 10
    while c < n:
        pts += [c, int(c * 2.5), c * 5]
        c *= 10
    return sorted({x for x in pts if x < n} | {n})


def simulate(p: torch.Tensor, q: torch.Tensor, trials: int, seed: int = 0, progress=None,
             shown: list[int] | None = None, rule: str = "exact") -> Simulation:
    """`trials` speculative draws (k = 1) through verify(); counts of the token each one emits.

    shown: measure the distances over these ids plus one 'all others' bucket (large vocabularies).
    rule: 'exact' uses verify() as is; the broken rules (RULES) change what a trial emits."""
    if trials < 1:
        raise InputError("the number of trials must be >= 1")
    if rule not in RULES:
        raise InputError(f"unknown rule '{rule}' (choose from: {', '.join(RULES)})")
    gen = torch.Generator().manual_seed(seed)
    V = len(p)
    p2 = torch.stack([p, p])  # (2, V): position 1 and the bonus position
    counts = torch.zeros(V)
    accepted, marks = 0, checkpoints_for(trials)
    tv_p, tv_q, snaps = [], [], []
    for t in range(1, trials + 1):
        x = sample(q, gen)
        v = verify(torch.tensor([x]), q.view(1, V), p2, greedy=False, generator=gen)
        if rule == "accept every draft":
            v.n_accepted = 1
        tok = x if v.n_accepted == 1 else v.next_token if rule == "exact" else sample(p, gen)
        counts[tok] += 1
        accepted += v.n_accepted
        if t in marks:
            f = counts / t
            tv_p.append(_tv(f, p, shown))
            tv_q.append(_tv(f, q, shown))
            snaps.append(f)
            if progress:
                progress(t / trials, f"{t} trials")
    return Simulation(counts, accepted, marks, tv_p, tv_q, snaps)


# -- the real model ---------------------------------------------------------------------------
@dataclass
class RealCase:
    p: torch.Tensor          # (V,) target's next-token distribution under the sampling settings
    q: torch.Tensor          # (V,) the proposer's distribution for the same position (one-hot for lookup)
    drafted: int             # the token the proposer drafted
    one_hot: bool            # True when the proposer gives no q (lookup)


@torch.inference_mode()
def real_case(target: LoadedModel, proposer, prompt_ids: list[int], sampling: SamplingConfig,
              seed: int = 0) -> RealCase | None:
    """p and q at the first generated position, built as the decode loop builds them. None: no draft."""
    if sampling.greedy:
        raise InputError("set a temperature above 0: at temperature 0 p is one-hot and there is nothing to sample")
    ids = torch.as_tensor(prompt_ids, dtype=torch.long)                       # (T,)
    x = ids.view(1, -1).to(target.device)                                     # (1, T)
    (h, f), _ = measure.timed(target.device, lambda: body_pass(target.model.get_decoder(),   # inside the turn
                                                                tuple(proposer.feature_layers), input_ids=x))
    # h (1, T, H); f (1, T, n*H) for EAGLE-3, else None
    logits = target.model.get_output_embeddings()(h)[0, -1].float().cpu()      # (V,)
    p = logits_to_probs(logits, sampling)                                     # (V,)
    gen = torch.Generator().manual_seed(seed)
    hidden = h[0, :-1].float().cpu() if proposer.needs_hidden else None       # (T-1, H)
    features = f[0, :-1].float().cpu() if f is not None else None             # (T-1, n*H) for EAGLE-3
    proposer.reset(ids)
    draft = proposer.propose(Context(ids=ids, hidden=hidden, sampling=sampling, generator=gen, features=features), 1)
    if len(draft.tokens) == 0:
        return None
    tok = int(draft.tokens[0])
    q = draft.q[0].float() if draft.q is not None else one_hot_q(draft.tokens[:1], len(p))[0]  # (V,)
    return RealCase(p, q, tok, draft.q is None)


def first_drafting_prefix(target: LoadedModel, proposer, prompt_ids: list[int], ahead: int = 32) -> list[int]:
    """The prompt plus the shortest prefix of the target's greedy reply at which `proposer` drafts.

    For lookup: a chat prompt's last tokens (the template) rarely occur earlier, so the first draft
    usually comes a few tokens into the reply. Falls back to the prompt when it never drafts."""
    from specviz.engine.decode import DecodeConfig
    from specviz.engine.measure import run

    _, steps = run(target, None, prompt_ids, DecodeConfig(k=1, max_new_tokens=ahead, record=False))
    reply = [t for s in steps for t in s.emitted]
    for i in range(len(reply) + 1):
        ids = torch.tensor(list(prompt_ids) + reply[:i])                     # (T,)
        proposer.reset(ids)
        if len(proposer.propose(Context(ids, None, SamplingConfig(), None), 1).tokens):
            return ids.tolist()
    return list(prompt_ids)


def shown_tokens(p: torch.Tensor, q: torch.Tensor, m: int = 8) -> list[int]:
    """The ids worth drawing: p's top m and q's top m (by mass), in p order."""
    ids = torch.topk(p, min(m, len(p))).indices.tolist()
    ids += [i for i in torch.topk(q, min(m, len(q))).indices.tolist() if i not in ids and q[i] > 0]
    return ids


def project(v: torch.Tensor, ids: list[int]) -> torch.Tensor:
    """(V,) -> (len(ids)+1,): the chosen ids' mass, then everything else as one 'other' bar."""
    part = v[ids]                                      # (m,)
    return torch.cat([part, (1 - part.sum()).clamp_min(0).view(1)])


@dataclass
class Reduced:
    """A real case cut down to the ids that carry almost all of p's and q's mass, plus one bucket
    for the long tail (so that thousands of draws take seconds, not minutes, on a CPU)."""
    p: torch.Tensor          # (m+1,) last entry = the merged tail
    q: torch.Tensor          # (m+1,)
    ids: list[int]           # the m kept token ids (the tail bucket is index m)
    tail_p: float
    tail_q: float

    @property
    def acceptance(self) -> float:
        """Σ min(p, q) over the reduced vocabulary: what the draws should keep."""
        return float(acceptance_probability(self.p, self.q))


COVERAGE, MAX_IDS = 0.999, 2048  # reduce(): each distribution's top ids up to this mass, at most this many


def reduce(case: RealCase, coverage: float = COVERAGE, max_ids: int = MAX_IDS) -> Reduced:
    keep: set[int] = set()
    for d in (case.p, case.q):
        v, i = torch.sort(d, descending=True)                      # (V,)
        m = min(max_ids, int((v.cumsum(0) < coverage).sum()) + 1)
        keep |= set(i[:m].tolist())
    ids = sorted(keep, key=lambda j: -float(case.p[j]))
    pr, qr = project(case.p, ids), project(case.q, ids)            # (m+1,)
    return Reduced(pr / pr.sum(), qr / qr.sum(), ids, float(pr[-1]), float(qr[-1]))


def simulate_real(red: Reduced, trials: int, seed: int = 0, progress=None) -> tuple[Simulation, list[int]]:
    """simulate() over the reduced vocabulary. Returns (simulation, shown), where shown indexes the
    reduced vectors (p's and q's top ids); distances are measured over shown + one bucket for the rest."""
    shown = shown_tokens(red.p[:-1], red.q[:-1])
    return simulate(red.p, red.q, trials, seed, progress, shown=shown), shown


# -- tree sampling, by hand: sibling candidates at one node -------------------------------------------------
SIBLING_RULES = {
    "exact": "each sibling is tested against the residual the rejected ones left (core/tree.py, verify_tree)",
    "against p": "broken: every sibling is tested against p itself, as if it were the only candidate",
}


@dataclass
class SiblingTrial:
    residuals: list[torch.Tensor]     # (V,) the distribution each candidate is tested against, in turn, then the last
    keep: list[float]                 # P(candidate i kept | the earlier ones rejected)
    some_kept: float                  # P(some candidate kept) = the p mass the candidates cover (exact rule)
    output: torch.Tensor              # (V,) what the emitted token follows, in closed form


def parse_candidates(text: str, V: int) -> list[int]:
    """'A, C' or '0, 2' -> distinct token indices into the toy vocabulary; InputError with a plain message."""
    out = []
    for part in [x for x in re.split(r"[,\s;]+", text.strip()) if x]:
        i = ord(part.upper()) - ord("A") if part.isalpha() and len(part) == 1 else int(part) if part.isdigit() else -1
        if not 0 <= i < V:
            raise InputError(f"'{part}' is not a token of the toy vocabulary (A to {chr(ord('A') + V - 1)})")
        if i in out:
            raise InputError(f"'{part}' is a candidate twice: siblings are distinct tokens")
        out.append(i)
    if not out:
        raise InputError("give one to three candidate tokens, e.g. 'A, B'")
    if len(out) > 3:
        raise InputError("at most three sibling candidates here")
    return out


def siblings(p: torch.Tensor, cands: list[int], rule: str = "exact") -> SiblingTrial:
    """Chosen (not sampled) candidates, so each q is one-hot: candidate c is kept with probability r(c), where r
    is p for the first and, under the exact rule, the residual norm(max(0, r − onehot(c))) after each rejection."""
    if rule not in SIBLING_RULES:
        raise InputError(f"unknown rule '{rule}' (choose from: {', '.join(SIBLING_RULES)})")
    r, reach = p.clone(), 1.0
    residuals, keep = [], []
    out = torch.zeros_like(p)
    for c in cands:
        test = r if rule == "exact" else p
        residuals.append(test.clone())
        keep.append(float(test[c]))
        out[c] += reach * float(test[c])
        reach *= 1.0 - float(test[c])
        r = residual(r, torch.nn.functional.one_hot(torch.tensor(c), len(p)).to(p.dtype))   # (V,)
    residuals.append(r.clone())
    out += reach * r                                           # nothing kept: the correction from the last residual
    return SiblingTrial(residuals, keep, 1.0 - reach, out)


def simulate_siblings(p: torch.Tensor, cands: list[int], trials: int, rule: str = "exact", seed: int = 0
                      ) -> tuple[torch.Tensor, int]:
    """`trials` draws of the first emitted token. The exact rule runs specviz's own tree verifier (a root with the
    candidates as its children); the broken rule tests each sibling against p. Returns (counts (V,), kept)."""
    from specviz.core.tree import Tree, verify_tree

    if trials < 1:
        raise InputError("the number of trials must be >= 1")
    gen = torch.Generator().manual_seed(seed)
    V, n = len(p), len(cands)
    counts, kept = torch.zeros(V), 0
    if rule == "exact":
        tree = Tree(torch.tensor(cands), [-1] * n, torch.nn.functional.one_hot(torch.tensor(cands), V).to(p.dtype))
        rows = p.expand(n + 1, V)                              # (n+1, V): p at the root (the leaves' rows unused)
        for _ in range(trials):
            v = verify_tree(tree, rows, greedy=False, generator=gen)
            tok = cands[v.path[0]] if v.path else v.next_token
            counts[tok] += 1
            kept += bool(v.path)
    else:
        last = siblings(p, cands, "exact").residuals[-1]      # the correction: p without the candidates
        for _ in range(trials):
            u = torch.rand(n, generator=gen).tolist()
            hit = next((c for c, x in zip(cands, u) if x < float(p[c])), None)
            tok = hit if hit is not None else int(torch.multinomial(last, 1, generator=gen))
            counts[tok] += 1
            kept += hit is not None
    return counts, kept

"""Serving reality's roofline lab: this machine's roof measured (engine/peaks.py), one decode step placed on it at
batch B and k drafted tokens, the v_B(k) the roofline predicts (core/roofline.py) beside the one measured
(teach/reality.v_by_batch), and tokens/s per machine beside per-sequence speedup (core/costmodel.py)."""
from __future__ import annotations

from dataclasses import dataclass

from specviz.core import roofline as RL
from specviz.core.costmodel import speedup
from specviz.engine.experiment import runs_words
from specviz.engine.passcost import VTable
from specviz.engine.peaks import Peaks
from specviz.teach.reality import measured_kv_bytes_per_token

BATCHES = (1, 2, 4, 8, 16, 32)     # the batch sizes the lab measures by default
FREE = 1.25                        # "nearly free": a pass over k + 1 tokens costs at most a quarter of a step more

# For contrast: a datacenter GPU's roof, from its maker's datasheet (dense, i.e. without 2:4 sparsity).
H100 = RL.Machine("NVIDIA H100 SXM (datasheet)", 3.35e12, 989e12,
                  "NVIDIA H100 Tensor Core GPU datasheet: 3.35 TB/s of HBM3, 989 TFLOP/s BF16 Tensor Core dense "
                  "(1,979 with sparsity)")


@dataclass
class Lab:
    """One measurement of the lab: the roof, v_B(k) at each batch, and the experiment's settings."""
    peaks: Peaks
    vb: dict[int, VTable]
    step: RL.Step
    k: int
    context: int
    repeats: int
    dtype: str
    bytes_per_weight: float

    @property
    def machine(self) -> RL.Machine:
        return RL.Machine("this machine (measured)", self.peaks.bandwidth, self.peaks.peak, self.peaks.describe())

    def describe(self) -> str:
        return (f"{self.dtype}, k = {self.k}, batches {', '.join(map(str, self.vb))}, a {self.context}-token cache "
                f"per sequence, v_B(k) of a bare forward ({runs_words(self.repeats)}, interleaved with the one-token "
                f"pass); roof from {self.peaks.describe()}")


def step_of(model, context: int) -> RL.Step:
    """The roofline's model of one decode step of `model`: its parameters (2 FLOPs each per token), the bytes of
    its weights, and the KV bytes one sequence's `context`-token cache holds (read from a real cache)."""
    params = sum(p.numel() for p in model.parameters())                  # a tied weight counts once
    wbytes = sum(p.numel() * p.element_size() for p in model.parameters())
    return RL.Step(float(params), float(wbytes), measured_kv_bytes_per_token(model) * context)


def measure(target, peaks: Peaks, k: int, context: int = 64, repeats: int = 3, batches=BATCHES,
            progress=None) -> Lab:
    """v_B(k) at each batch through reality.v_by_batch (the one batch-size measurement), on the given roof."""
    from specviz.teach.reality import v_by_batch
    vb = v_by_batch(target.model, target.vocab_size, batches=batches, ks=(k,), context=context, repeats=repeats,
                    progress=progress)
    bpw = next(target.model.parameters()).element_size()
    return Lab(peaks, vb, step_of(target.model, context), k, context, repeats, str(target.dtype).replace("torch.", ""),
               float(bpw))


def rows(lab: Lab, alpha: float, c: float) -> list[dict]:
    """Per batch: predicted and measured v_B(k), the roofline's t1 and the measured one, per-sequence speedup
    (costmodel.speedup with the measured v_B(k)) and tokens/s for the whole machine, plain and speculating."""
    m, k = lab.machine, lab.k
    out = []
    for b, vrow in lab.vb.items():
        s = speedup(alpha, k, c, vrow)
        out.append({"batch": b, "intensity": lab.step.intensity(b, k), "predicted v": RL.predicted_v(lab.step, b, k, m),
                    "measured v": vrow[k], "roofline t1": RL.step_time(lab.step, b, 0, m), "measured t1": vrow.t1,
                    "speedup": s, "plain tok/s": RL.throughput(b, 1.0, vrow.t1),
                    "speculating tok/s": RL.throughput(b, s, vrow.t1)})
    return out


def nearly_free_until(lab: Lab) -> dict:
    """{"measured": , "predicted": } the first batch whose v_B(k) exceeds FREE, as one of CHOICES."""
    meas = RL.first_batch_over({b: r[lab.k] for b, r in lab.vb.items()}, FREE)
    pred = RL.first_batch_over({b: RL.predicted_v(lab.step, b, lab.k, lab.machine) for b in lab.vb}, FREE)
    beyond = choices(lab.vb)[-1]
    return {"measured": beyond if meas is None else str(meas), "predicted": beyond if pred is None else str(pred)}


def intensity_words(bytes_per_weight: float) -> str:
    """How many FLOPs per weight byte one token per sequence buys, in this dtype."""
    per = 2.0 / bytes_per_weight
    return (f"{per:g} FLOP per weight byte per token ({bytes_per_weight:g}-byte weights): a step over B sequences "
            f"× (k + 1) tokens does about {per:g}·B·(k + 1) FLOP per byte it reads")


def gap_words(rs: list[dict]) -> str:
    """What the gap between the roofline's plain step and the measured one says (batch 1)."""
    r = rs[0]
    share = r["roofline t1"] / r["measured t1"]
    return (f"At batch 1 the roofline says a plain step needs at least {r['roofline t1'] * 1e3:.1f} ms (reading the "
            f"weights at the copy's bandwidth); it took {r['measured t1'] * 1e3:.1f} ms, so the memory limit explains "
            f"{share:.0%} of it. The rest is overhead a model this small cannot hide: hundreds of small operator calls "
            "per step, Python and the framework between them, matmuls too thin to reach the copy's bandwidth "
            "(docs/profile_plain_step.md). Overhead is paid once per pass however many tokens it carries, so it "
            "makes extra tokens look cheaper than the roof predicts, until the arithmetic takes over.")


def parse_sizes(text: str, lo: int, hi: int, what: str) -> tuple[int, ...]:
    """'1, 2, 4' -> (1, 2, 4), sorted, without repeats; InputError naming the bad entry otherwise."""
    from specviz.core.errors import InputError
    out = []
    for part in (p.strip() for p in text.replace(";", ",").split(",")):
        if not part:
            continue
        if not part.isdigit() or not lo <= int(part) <= hi:
            raise InputError(f"{what} must be whole numbers from {lo} to {hi}, separated by commas; got '{part}'")
        out.append(int(part))
    if not out:
        raise InputError(f"give at least one of the {what}, e.g. '{lo}, {min(hi, 2 * lo)}'")
    return tuple(sorted(set(out)))


def choices(batches) -> tuple[str, ...]:
    """The guess's options: each batch measured, or beyond the largest."""
    return tuple(str(b) for b in batches) + (f"beyond {max(batches)}",)

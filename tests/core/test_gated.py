"""The hit-rate gate: lookup stops drafting while its recent drafts are rejected, probes, and reopens."""
import json

import pytest
import torch

from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.engine.experiment import Setting
from specviz.proposers.base import Context
from specviz.proposers.gated import Gate, Gated, hit_rate, pass_gain
from specviz.proposers.lookup import PromptLookup

IDS = [1, 2, 3, 4, 5, 1, 2]   # the tail "1 2" occurred before: lookup drafts "3 4 5 ..."


def ctx(ids):
    return Context(torch.tensor(ids), None, SamplingConfig(), None)


def test_gate_closes_after_rejections_probes_and_reopens():
    g = Gated(PromptLookup(n=2), Gate(threshold=0.5, window=2, probe_every=3))
    g.reset(torch.tensor(IDS))
    d = g.propose(ctx(IDS), 4)
    g.update(ctx(IDS), 1)                    # one draft of 4, 1 kept: α̂ = 0.25 < 0.5
    assert len(d.tokens) == 4 and hit_rate(g.history) == 0.25 and not g.is_open()
    shut = [len(g.propose(ctx(IDS), 4).tokens) for _ in range(2)]   # closed: no draft ...
    for _ in range(2):
        g.update(ctx(IDS), 0)                # an empty step adds nothing to the history
    assert shut == [0, 0] and g.closed_steps == 2
    probe = g.propose(ctx(IDS), 4)           # ... until the third closed step: a probe
    assert len(probe.tokens) == 4
    g.update(ctx(IDS), 4)                    # the probe fully kept: history (4, 1), (4, 4) -> α̂ 0.625, open again
    assert hit_rate(g.history) == 0.625 and g.is_open()
    g.update(ctx(IDS), 0)                    # an update without a new draft: the history is unchanged
    assert list(g.history) == [(4, 1), (4, 4)]


def test_ungated_lookup_keeps_drafting_where_the_gate_would_not():
    plain = PromptLookup(n=2)
    plain.reset(torch.tensor(IDS))
    assert all(len(plain.propose(ctx(IDS), 4).tokens) == 4 for _ in range(4))


def test_the_gate_is_described_and_read_back_from_what_ran():
    gate = Gate(0.3, 8, 4)
    s = Setting.resolve("lookup", gate=gate)
    assert s.describe().startswith("lookup drafting as far as the match goes") and "gated: off while α̂" in s.describe()
    g = Gated(PromptLookup(n_min=2, k_rule="match"), gate)

    class Cfg:
        k, adaptive = 24, False
    assert Setting.of(g, Cfg) == s


def test_a_bad_gate_is_refused():
    with pytest.raises(InputError, match="threshold"):
        Gated(PromptLookup(), Gate(threshold=1.5))


def test_a_gated_recycler_still_learns_from_every_pass_and_keeps_its_tree_size():
    """The decode loop reads reads_logits, prefill_rows and max_nodes off the proposer and hands it the target's
    logits through observe(): behind a gate, recycling must still fill its table (else a closed gate starves it and
    it never drafts again), and a tree's size must still reach the context-window check."""
    from specviz.proposers.recycle import Recycle

    inner = Recycle(vocab=16, nodes=6)
    g = Gated(inner, Gate())
    assert (g.reads_logits, g.prefill_rows, g.max_nodes) == (True, inner.prefill_rows, 6)
    g.reset(torch.tensor([1, 2]))
    assert g.table_rows() == 0 and len(g.propose(ctx([1, 2]), 4).tokens) == 0
    logits = torch.full((2, 16), -10.0)                       # (t, V): after 1 the target rates 5, 6, 7; after 2, 8
    logits[0, [5, 6, 7]] = torch.tensor([3.0, 2.0, 1.0])
    logits[1, 8] = 3.0
    g.observe(torch.tensor([1, 2]), logits, 0)
    assert g.table_rows() == inner.table_rows() == 2
    assert 8 in g.propose(ctx([1, 2]), 4).tokens.tolist()     # drafted from what it observed


AVX2_V = ((1, 1.42), (8, 1.79), (24, 2.53))   # v(k) of a CPU without native bfloat16 (bench/results/cpu-avx2)
AMX_V = ((1, 1.02), (8, 1.10), (24, 1.25))    # nearly free rows (a CPU with AMX)


def test_the_pays_gate_is_the_break_even_of_the_last_passes():
    """Σ (kept + 1) against Σ v(drafted): the same history pays where rows are cheap and not where they cost."""
    history = [(8, 0), (8, 1), (8, 0), (8, 1)]          # α̂ 1/16: an 8-node tree keeping half a token a pass
    assert pass_gain(history, dict(AVX2_V)) == pytest.approx(4 + 2 - 4 * 1.79)
    assert not Gate(v=AVX2_V).is_open(history)
    assert Gate(v=AMX_V).is_open(history)               # 6 tokens for 4 × 1.10 plain steps: it pays there
    assert not Gate().is_open(history)                  # the hit-rate gate shuts it everywhere (α̂ < 0.3)
    assert Gate(v=AVX2_V).is_open([(1, 1), (1, 0)])     # 3 tokens for 2 × 1.42: pays, at α̂ 0.5
    assert not Gate(v=AVX2_V).is_open([(1, 0), (2, 1), (1, 0)])   # 4 tokens for 1.42 + 1.48 + 1.42
    assert Gate(v=AVX2_V).is_open([])                   # open before any draft


def test_a_pays_gated_lookup_closes_on_unpaid_drafts_and_probes():
    g = Gated(PromptLookup(n=2), Gate(window=2, probe_every=2, v=AVX2_V))
    g.reset(torch.tensor(IDS))
    assert len(g.propose(ctx(IDS), 4).tokens) == 4
    g.update(ctx(IDS), 0)                    # 4 drafted, none kept: 1 token for v(4) ≈ 1.56 plain steps
    assert not g.is_open() and len(g.propose(ctx(IDS), 4).tokens) == 0
    g.update(ctx(IDS), 0)
    assert len(g.propose(ctx(IDS), 4).tokens) == 4   # the probe
    g.update(ctx(IDS), 4)                    # fully kept: (4, 0), (4, 4): 6 tokens for 3.1 steps, open again
    assert g.is_open()


def test_the_pays_gate_says_what_it_asks_and_refuses_a_table_cheaper_than_plain():
    words = Gate(v=AVX2_V, where="on a 2-core AMD EPYC (AVX2)").words()
    assert "did not pay" in words and "AMD EPYC (AVX2)" in words and "α̂" not in words
    with pytest.raises(InputError, match="v table"):
        Gated(PromptLookup(), Gate(v=((4, 0.5),)))
    with pytest.raises(InputError, match="v table"):
        Gated(PromptLookup(), Gate(v=()))


def test_gate_for_reads_the_v_of_this_kinds_bench(tmp_path):
    """bench/results.gate_for: pays prices a chain with the bench's v and a tree with v_tree where measured; with no
    bench of the kind it refuses with the way out."""
    from specviz.bench.results import gate_for, kind_folder

    here = {"device": "cpu", "capability": "AVX2", "cpu": "AMD EPYC", "threads": 2}
    folder = tmp_path / "bench" / "results" / kind_folder(here)
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"v": {"1": 1.4, "8": 1.8}, "v_tree": {"8": 1.7},
                                                     "meta": {"started": "2026-12-06 21:35 UTC"}}))
    root = str(tmp_path)
    chain, tree = gate_for("pays", "lookup", here, root=root), gate_for("pays", "recycle", here, root=root)
    assert chain.v == ((1, 1.4), (8, 1.8)) and tree.v == ((1, 1.4), (8, 1.7))
    assert f"by the bench of {kind_folder(here)}, 2026-12-06 21:35 UTC" in chain.words()
    assert gate_for("hit-rate", "lookup", here, root=root) == Gate()
    with pytest.raises(InputError, match="--gate hit-rate"):
        gate_for("pays", "lookup", here, root=str(tmp_path / "elsewhere"))

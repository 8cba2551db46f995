"""The hit-rate gate: lookup stops drafting while its recent drafts are rejected, probes, and reopens."""
import pytest
import torch

from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.engine.experiment import Setting
from specviz.proposers.base import Context
from specviz.proposers.gated import Gate, Gated, hit_rate
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

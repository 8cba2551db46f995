"""tau = 1 + alpha-hat * k-bar on records of real decode runs of a tiny random model (docs/metrics.md)."""
import copy

import pytest
import torch

from specviz.core import costmodel as be
from specviz.core.sampling import SamplingConfig
from specviz.engine.decode import DecodeConfig, generate
from specviz.engine.models import tiny_llama
from specviz.proposers.draft_model import DraftModel
from specviz.proposers.lookup import PromptLookup

V = 96


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)


def noisy(target):
    """The target with noise on its weights: some drafts kept, some rejected."""
    m = copy.deepcopy(target.model)
    g = torch.Generator().manual_seed(9)
    with torch.no_grad():
        for w in m.parameters():
            w.add_(0.1 * w.std() * torch.randn(w.shape, generator=g))
    return m


@pytest.mark.parametrize("method,temperature", [("lookup", 0.0), ("draft", 0.0), ("draft", 1.0)])
def test_tau_identity_holds_on_a_tiny_model_run(target, method, temperature):
    g = torch.Generator().manual_seed(0)
    ids = (torch.randint(2, V, (12,), generator=g).tolist() * 4)[:40]
    prop = PromptLookup(n_min=2, n_max=2) if method == "lookup" else DraftModel(noisy(target))
    cfg = DecodeConfig(k=4, max_new_tokens=60, stop_at_eos=False, sampling=SamplingConfig(temperature=temperature))
    s, steps = generate(target, prop, ids, cfg)
    assert s.drafted > 0 and 0 < s.accepted < s.drafted  # a run with both kept and rejected drafts
    # only the last step can be cut short by max_new_tokens; the identity is exact up to what it cut
    cut = sum(r.n_accepted + 1 - r.n_emitted for r in steps)
    assert 0 <= cut <= cfg.k and all(r.n_emitted == r.n_accepted + 1 for r in steps[:-1])
    assert s.tokens_per_pass == pytest.approx(be.tau_identity(s.draft_acceptance_rate, s.mean_k) - cut / len(steps))
    # and alpha (tested) is the larger rate: untested drafts are not counted as failures
    assert s.alpha >= s.draft_acceptance_rate

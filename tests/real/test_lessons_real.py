"""Lessons on the real default model: translation gives lookup little to copy; the layer-skip shortcut, untrained."""
import os

import pytest
import torch

from specviz.core.sampling import SamplingConfig
from specviz.engine import measure, workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model
from specviz.teach import reality as R

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def target():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    return load_model("default", device="cpu", dtype="bfloat16")


def tau(target, name, temperature):
    w = workloads.get(name)
    ids = encode_prompt(target.tokenizer, w.prompt, w.chat)
    cfg = DecodeConfig(k=4, max_new_tokens=64, sampling=SamplingConfig(temperature), seed=0, record=False)
    s, _ = measure.run(target, make_proposer("lookup", target, n=3), ids, cfg, target.tokenizer.eos_token_id)
    return s.tokens_per_pass


def test_lookup_finds_little_to_copy_in_a_sampled_translation(target):
    assert workloads.get("translate").kind == workloads.GROUNDED
    assert tau(target, "translate", 0.8) < 1.3
    assert tau(target, "quote-document", 0.0) > 2.5   # control: a copy-heavy prompt does give lookup runs


def test_untrained_layer_skipping_rarely_agrees_early(target):
    ids = torch.cat([torch.tensor(encode_prompt(target.tokenizer, w.prompt, w.chat)).view(1, -1)
                     for w in workloads.WORKLOADS], 1)
    a = R.layer_agreement(target.model, ids, ns=(2, 16, 28))
    assert a[2] < 0.15 and a[16] < 0.3 and a[2] < a[16] < a[28]

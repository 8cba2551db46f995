"""Serving reality: the memory arithmetic, v(k) by batch and layer-skip agreement on tiny models."""
import torch

from specviz.engine.models import tiny_llama
from specviz.teach import reality as R


def test_worked_example_kv_sizes_and_sequences_lost():
    assert R.TARGET_70B.kv_bytes_per_token == 320 * 1024 and R.DRAFTER_1B.kv_bytes_per_token == 32 * 1024
    b = R.concurrent_sequences(R.TARGET_70B, R.DRAFTER_1B, 160, 4096)
    free = 160e9 - 70.6e9 * 2
    assert b.sequences_without == int(free // (320 * 1024 * 4096))
    assert b.sequences_with == int((free - 1.24e9 * 2) // (352 * 1024 * 4096))
    assert b.lost == b.sequences_without - b.sequences_with > 0
    none = R.Arch("nothing", 0.0, 1, 1, 1, 0)   # a proposer with no weights and no cache (lookup) loses nothing
    assert R.concurrent_sequences(R.TARGET_70B, none, 160, 4096).lost == 0
    # the 70B example: the 1B drafter's weights (2.5 GB ~ 1.8 sequences' KV) cost as much as its cache, not nothing
    assert b.lost_to_weights == int(free // (320 * 1024 * 4096)) - int((free - 1.24e9 * 2) // (320 * 1024 * 4096)) >= 1
    assert b.lost_to_weights + b.lost_to_kv == b.lost and "weights cost 2" in R.split_words(b)
    small = R.fit(0.0, 1000.0, 1e3, 500.0, 1.00005, 100)             # tiny weights, a cache half the target's
    assert small.lost_to_weights == 0 and small.lost_to_kv == small.lost > 0
    assert "mostly its cache" in R.split_words(small)


def test_kv_bytes_read_from_a_real_cache_equal_the_config_arithmetic_and_the_share_lost():
    t, d = tiny_llama(max_positions=256, seed=0), tiny_llama(max_positions=256, seed=1, layers=1)
    assert R.measured_kv_bytes_per_token(t.model) == t.kv_bytes_per_token()       # layers x K,V x heads x dim x bytes
    assert R.measured_kv_bytes_per_token(d.model) == d.kv_bytes_per_token() < t.kv_bytes_per_token()
    m = R.measured_memory(t, d, 1.0, 512)
    b = m["budget"]
    free = 1e9 - t.param_bytes()
    assert b.sequences_without == int(free // (t.kv_bytes_per_token() * 512))
    assert b.sequences_with == int((free - d.param_bytes()) // ((t.kv_bytes_per_token() + d.kv_bytes_per_token())
                                                                 * 512))
    assert m["lost_pct"] == 100 * (b.sequences_without - b.sequences_with) / b.sequences_without > 0
    assert R.lost_share(R.fit(2e9, 1.0, 0.0, 0.0, 1.0, 16)) == 0.0                   # nothing fits: nothing lost


def test_v_by_batch_has_every_size_and_positive_ratios():
    t = tiny_llama(max_positions=256)
    v = R.v_by_batch(t.model, t.vocab_size, batches=(1, 4), ks=(1, 4), context=16, repeats=2)
    assert set(v) == {1, 4} and all(set(r) == {1, 4} and all(x > 0 for x in r.values()) for r in v.values())
    assert all(r.t1 > 0 for r in v.values())                      # each batch's one-token pass, in seconds


def test_layer_skip_agreement_is_one_when_later_layers_do_nothing():
    t = tiny_llama(layers=4)
    ids = torch.randint(2, 96, (1, 40), generator=torch.Generator().manual_seed(0))
    before = R.layer_agreement(t.model, ids, ns=(2,))
    for layer in t.model.model.layers[2:]:       # make layers 3 and 4 identities (residual branches zeroed)
        layer.self_attn.o_proj.weight.data.zero_()
        layer.mlp.down_proj.weight.data.zero_()
    after = R.layer_agreement(t.model, ids, ns=(2, 4))
    assert after == {2: 1.0}                      # n = 4 (all layers) is not a skip and is left out
    assert before[2] < 1.0                        # negative control: with working layers 3-4 the argmax moves


def test_layer_params_account_for_every_parameter_and_price_truncation():
    from specviz.core.costmodel import truncation_cost
    from specviz.teach.families import layer_params

    t = tiny_llama(seed=0, layers=3)                                              # untied: the embedding is 'other'
    lp = layer_params(t.model)
    total = sum(p.numel() for p in t.model.parameters())
    assert len(lp.layers) == 3 and sum(lp.layers) + lp.head + lp.other == total
    assert lp.other == t.model.get_input_embeddings().weight.numel()
    got = R.truncation_breakeven(t.model, [1, 2], k=4)
    assert got[1][0] == truncation_cost(lp, 1) < got[2][0] < 1.0


def test_the_drafters_cost_is_quoted_with_the_bench_it_comes_from():
    data = {"meta": {"started": "2026-12-02 04:22 UTC", "command": "python -m specviz bench", "dtype": "bfloat16",
                     "device": "cpu", "max_new_tokens": 128, "repeats": 3},
            "cost_model": [{"method": "draft", "c": 0.10}, {"method": "draft", "c": 0.14},
                           {"method": "draft", "c": 0.12}, {"method": "lookup", "c": 0.001}]}
    b = R.bench_cost("draft", data)
    assert (b["lo"], b["median"], b["hi"], b["n"]) == (0.10, 0.12, 0.14, 3)
    words = R.cost_words("draft", data)
    assert words.startswith("c = 0.10–0.14 (median 0.12)") and "2026-12-02 04:22 UTC" in words
    assert "bfloat16" in words and "128 new tokens" in words and "3 workloads" in words
    assert R.bench_cost("draft", {"meta": {}, "cost_model": []}) is None and "Step through" in R.cost_words("x", {})
    assert any("0.10–0.14" in x for x in R.gap_reasons(data))

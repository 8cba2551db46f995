"""Every vLLM config specviz can generate meets vLLM's rules; bad settings are refused with a message."""
import itertools
import json
import shlex

import pytest

from specviz.teach import serving as S

# vLLM 0.33.0's SpeculativeConfig, written out independently of serving.validate: the methods it accepts
# (medusa and mlp_speculator were removed after 0.32), the n-gram bounds, the methods that load a checkpoint,
# and draft_sample_method's two values.
ALLOWED = {"ngram", "ngram_gpu", "draft_model", "suffix", "eagle", "eagle3", "mtp", "dflash", "dspark",
           "extract_hidden_states", "custom_class"}
WITH_CHECKPOINT = {"draft_model", "eagle", "eagle3", "dflash", "dspark"}


def check_rules(cfg: dict) -> None:
    assert cfg["method"] in ALLOWED
    k = cfg["num_speculative_tokens"]
    assert isinstance(k, int) and not isinstance(k, bool) and k >= 1
    if cfg["method"] in ("ngram", "ngram_gpu"):
        assert 1 <= cfg["prompt_lookup_min"] <= cfg["prompt_lookup_max"]
        assert "model" not in cfg
    else:
        assert "prompt_lookup_min" not in cfg and "prompt_lookup_max" not in cfg
    if cfg["method"] in WITH_CHECKPOINT:
        assert isinstance(cfg["model"], str) and cfg["model"].strip()
    assert cfg.get("draft_sample_method", "greedy") in ("greedy", "probabilistic")
    assert json.loads(S.to_json(cfg)) == cfg


GENERATED = ["lookup", "draft", "eagle", "ngram", "ngram_gpu", "suffix", "draft_model", "eagle3", "mtp", "dflash",
             "dspark"]


def test_the_export_targets_vllm_0_33_and_medusa_is_gone():
    assert S.VLLM_VERSION == "0.33.0" and set(S.VLLM_METHODS) == ALLOWED
    for gone in ("medusa", "mlp_speculator"):
        with pytest.raises(S.ConfigError, match="no longer serves"):
            S.build(gone, 3, model="m")
        assert S.validate({"method": gone, "num_speculative_tokens": 3, "model": "m"})
    with pytest.raises(S.ConfigError, match="eagle3"):  # the nearest current equivalent is named
        S.build("medusa", 3, model="m")


def test_probabilistic_draft_sampling_only_where_the_settings_need_it():
    assert S.build("draft", 4, model="m", temperature=0.8)["draft_sample_method"] == "probabilistic"
    assert S.build("eagle3", 4, model="m", temperature=0.5)["draft_sample_method"] == "probabilistic"
    assert "draft_sample_method" not in S.build("draft", 4, model="m", temperature=0.0)  # greedy: q is one-hot anyway
    assert "draft_sample_method" not in S.build("lookup", 4, 1, 2, temperature=0.8)      # lookup has no q
    assert S.validate({"method": "eagle", "num_speculative_tokens": 2, "model": "m", "draft_sample_method": "typical"})


METHODS = GENERATED


@pytest.mark.parametrize("method", METHODS)
def test_every_generated_config_meets_the_rules(method):
    made = 0
    for k, lo, hi in itertools.product(range(1, 11), range(1, 7), range(1, 7)):
        if lo > hi:
            continue
        cfg = S.build(method, k, lo, hi, model="org/some-checkpoint", temperature=0.7 if k % 2 else 0.0)
        check_rules(cfg)
        assert S.validate(cfg) == []
        assert cfg["num_speculative_tokens"] == k
        made += 1
    assert made == 10 * 21


def test_specviz_names_map_to_vllm_methods():
    assert S.build("lookup", 3, 1, 2)["method"] == "ngram"
    assert S.build("draft", 3, model="m")["method"] == "draft_model"
    assert S.build("eagle", 3, model="m")["method"] == "eagle"


@pytest.mark.parametrize("args", [("lookup", 0, 1, 2, None), ("lookup", 4, 0, 2, None), ("lookup", 4, 3, 2, None),
                                  ("draft", 4, None, None, None), ("medusa", 4, None, None, "  "),
                                  ("plain", 4, None, None, None), ("beam", 4, None, None, "m")])
def test_bad_settings_are_refused(args):
    with pytest.raises(S.ConfigError):
        S.build(*args)


@pytest.mark.parametrize("bad", [
    {"method": "ngram", "num_speculative_tokens": 0, "prompt_lookup_min": 1, "prompt_lookup_max": 2},
    {"method": "ngram", "num_speculative_tokens": True, "prompt_lookup_min": 1, "prompt_lookup_max": 2},
    {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 3, "prompt_lookup_max": 2},
    {"method": "ngram", "num_speculative_tokens": 3},
    {"method": "eagle", "num_speculative_tokens": 3},
    {"method": "medusa", "num_speculative_tokens": 3, "model": "m", "prompt_lookup_min": 1, "prompt_lookup_max": 2},
    {"method": "lookup", "num_speculative_tokens": 3},
])
def test_validate_catches_each_broken_rule(bad):
    assert S.validate(bad)


def test_command_line_round_trips():
    cfg = S.build("lookup", 5, 2, 4)
    argv = shlex.split(S.command("HuggingFaceTB/SmolLM2-135M-Instruct", cfg))
    assert argv[:3] == ["vllm", "serve", "HuggingFaceTB/SmolLM2-135M-Instruct"]
    assert argv[3] == "--speculative-config" and json.loads(argv[4]) == cfg


def test_every_generated_method_says_what_does_not_carry_over():
    assert {S.FROM_SPECVIZ.get(m, m) for m in GENERATED} <= set(S.CAVEATS)
    assert "earliest" in S.CAVEATS["ngram"] and "upper bound" not in S.CAVEATS["ngram"]


def test_greedy_drafting_keeps_p_at_q_argmax_and_either_rule_can_keep_more():
    from specviz.teach.serving import SAMPLING_NOTE, kept_greedy_vs_probabilistic as kept

    assert kept([0.9, 0.05, 0.05], [0.4, 0.3, 0.3]) == pytest.approx((0.90, 0.50))   # greedy keeps more
    assert kept([0.3, 0.7], [0.6, 0.4]) == pytest.approx((0.30, 0.70))               # probabilistic keeps more
    assert "fewer drafts" not in SAMPLING_NOTE and "0.90" in SAMPLING_NOTE and "0.70" in SAMPLING_NOTE


# vLLM 0.33's suffix keys and defaults, written out from vllm/config/speculative.py (SpeculativeConfig, read at
# vllm-project/vllm 002e77c), independently of serving.SUFFIX_KEYS.
VLLM_SUFFIX = {"suffix_decoding_max_tree_depth": 24, "suffix_decoding_max_cached_requests": 10000,
               "suffix_decoding_max_spec_factor": 1.0, "suffix_decoding_min_token_prob": 0.1}


def test_suffix_exports_vllm_keys_with_their_defaults_and_the_settings_given():
    cfg = S.build("suffix", 8)
    assert cfg == {"method": "suffix", "num_speculative_tokens": 8, **VLLM_SUFFIX}
    cfg = S.build("suffix", 8, suffix={"suffix_decoding_max_spec_factor": 2.0, "suffix_decoding_min_token_prob": 0.05})
    assert cfg["suffix_decoding_max_spec_factor"] == 2.0 and cfg["suffix_decoding_min_token_prob"] == 0.05
    assert cfg["suffix_decoding_max_tree_depth"] == 24 and S.validate(cfg) == []
    assert S.build("suffix", 3)["method"] == S.FROM_SPECVIZ["suffix"] == "suffix"
    assert "arctic-inference" in S.SUFFIX_DEPENDENCY


@pytest.mark.parametrize("suffix", [{"suffix_decoding_max_tree_depth": 0}, {"suffix_decoding_max_tree_depth": 2.5},
                                    {"suffix_decoding_max_cached_requests": -1},
                                    {"suffix_decoding_max_spec_factor": 0.0},
                                    {"suffix_decoding_min_token_prob": 1.5}, {"suffix_decoding_depth": 3}])
def test_bad_suffix_settings_are_refused_naming_the_key(suffix):
    with pytest.raises(S.ConfigError, match="suffix_decoding_"):
        S.build("suffix", 4, suffix=suffix)


def test_suffix_keys_belong_to_the_suffix_method_only():
    with pytest.raises(S.ConfigError):
        S.build("lookup", 4, 1, 2, suffix={"suffix_decoding_max_tree_depth": 8})
    assert S.validate({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 1,
                       "prompt_lookup_max": 2, "suffix_decoding_max_tree_depth": 8})
    assert S.validate({"method": "suffix", "num_speculative_tokens": 3, "suffix_decoding_cache": 8})
    assert "no factor key" in S.LOOKUP_MATCH_NOTE


def test_recycling_has_no_vllm_method_and_block_verification_exports():
    for m in ("recycle", "recycle-chain", "copy-recycle"):
        with pytest.raises(S.ConfigError, match="no token-recycling method"):
            S.build(m, 4)
    cfg = S.build("eagle", 4, model="m", temperature=0.8, verify="block")
    assert cfg["rejection_sample_method"] == "block" and S.validate(cfg) == []
    assert "rejection_sample_method" not in S.build("eagle", 4, model="m")           # token-wise: vLLM's default
    assert S.validate({**cfg, "rejection_sample_method": "joint"})
    with pytest.raises(S.ConfigError, match="verify mode"):
        S.build("eagle", 4, model="m", verify="joint")

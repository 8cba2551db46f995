"""Every vLLM config specviz can generate meets vLLM's rules; bad settings are refused with a message."""
import itertools
import json
import shlex

import pytest

from specviz.teach import serving as S

ALLOWED = {"ngram", "draft_model", "eagle", "eagle3", "medusa"}


def check_rules(cfg: dict) -> None:
    """The issue's rules, written out independently of serving.validate."""
    assert cfg["method"] in ALLOWED
    k = cfg["num_speculative_tokens"]
    assert isinstance(k, int) and not isinstance(k, bool) and k >= 1
    if cfg["method"] == "ngram":
        assert 1 <= cfg["prompt_lookup_min"] <= cfg["prompt_lookup_max"]
        assert "model" not in cfg
    else:
        assert "prompt_lookup_min" not in cfg and "prompt_lookup_max" not in cfg
        assert isinstance(cfg["model"], str) and cfg["model"].strip()
    assert json.loads(S.to_json(cfg)) == cfg


METHODS = list(S.FROM_SPECVIZ) + sorted(ALLOWED)


@pytest.mark.parametrize("method", METHODS)
def test_every_generated_config_meets_the_rules(method):
    made = 0
    for k, lo, hi in itertools.product(range(1, 11), range(1, 7), range(1, 7)):
        if lo > hi:
            continue
        cfg = S.build(method, k, lo, hi, model="org/some-checkpoint")
        check_rules(cfg)
        assert S.validate(cfg) == []
        assert cfg["num_speculative_tokens"] == k
        made += 1
    assert made == 10 * 21


def test_specviz_names_map_to_vllm_methods():
    assert S.build("lookup", 3, 1, 2)["method"] == "ngram"
    assert S.build("draft", 3, model="m")["method"] == "draft_model"
    assert S.build("medusa", 3, model="m")["method"] == "medusa"
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


def test_every_method_says_what_does_not_carry_over():
    assert set(S.CAVEATS) == ALLOWED

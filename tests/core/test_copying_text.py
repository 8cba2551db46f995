"""The session panel's table and its sentence on the cache (teach/copying.py), from hand-made rows."""
from specviz.teach.copying import cache_verdict, session_rows


def row(label, cache, speedup, per_request, same=(True, True, True)):
    return {"label": label, "cache": cache, "speedup": speedup, "spread": None, "tokens_per_pass": 2.5,
            "mean_k": 3.0, "tokens_per_s": 20.0, "plain_tokens_per_s": 10.0, "request_speedups": list(per_request),
            "same_as_plain": list(same)}


def test_the_verdict_compares_the_same_method_with_the_cache_on_and_off():
    rows = [row("lookup (match length)", False, 1.5, [1.5, 1.5, 1.5]),
            row("suffix, cache on", True, 2.4, [1.2, 3.0, 3.0]), row("suffix, cache off", False, 1.2, [1.2, 1.2, 1.2])]
    said = cache_verdict(rows)
    assert said.startswith("With the cache on the session ran at 2.40× plain, with it off at 1.20×: 2.00× from")
    assert "(1.20× vs 1.20×)" in said and "averaged 3.00× with it and 1.20× without" in said
    assert "Little or nothing" not in said


def test_no_gain_is_said_and_no_pair_gives_no_sentence():
    said = cache_verdict([row("suffix, cache on", True, 1.0, [1.0, 1.0]),
                          row("suffix, cache off", False, 1.0, [1.0, 1.0])])
    assert "Little or nothing gained" in said
    assert cache_verdict([row("lookup (match length)", False, 1.5, [1.5])]) is None
    assert cache_verdict([row("suffix, cache on", True, 1.5, [1.5])]) is None


def test_table_rows():
    [r] = session_rows([row("suffix, cache on", True, 2.4, [1.2, 3.0], same=(True, False, None))])
    assert r["cross-request cache"] == "on" and r["speedup"] == "2.40×" and r["spread"] == "–"
    assert r["speedup per request"] == "1.20 · 3.00" and r["same text as plain"] == "1 of 2 requests"


def test_suffix_sweep_values_are_parsed_and_checked():
    import pytest

    from specviz.core.errors import InputError
    from specviz.engine.sweeps import SUFFIX_KNOBS, SUFFIX_VALUES, suffix_values

    assert suffix_values("max_depth", "8, 16,24") == [8, 16, 24]
    assert suffix_values("factor", "0.5; 1, 1") == [0.5, 1.0]
    assert all(suffix_values(k, SUFFIX_VALUES[k]) for k in SUFFIX_KNOBS)   # the defaults the page opens on
    for knob, text, said in (("max_depth", "1, 8", "whole numbers from 2 to 64"), ("max_depth", "8.5", "whole"),
                             ("factor", "0", "above 0"), ("min_prob", "-0.1", "between 0 and 1"),
                             ("factor", "a, b", "numbers separated by commas"), ("factor", " ", "at least one"),
                             ("factor", "1,2,3,4,5,6,7", "at most 6"), ("depth", "8", "unknown suffix knob")):
        with pytest.raises(InputError, match=said):
            suffix_values(knob, text)


def test_the_anatomy_says_suffix_keeps_no_kv_cache_rather_than_calling_it_medusa():
    from types import SimpleNamespace

    from specviz.teach.anatomy import drafter_text

    said = drafter_text(SimpleNamespace(drafter_cache=None), "suffix")
    assert "suffix decoding searches token ids" in said and "Medusa" not in said

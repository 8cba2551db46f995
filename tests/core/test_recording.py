"""Recorded runs as files (core/recording.py): a round trip, and each kind of bad file refused with one
RecordingError (nothing returned). The runs are hand-made step records: a chain, a tree and a plain step."""
import json

import pytest
import torch

from specviz.core import recording as R
from specviz.core.records import StepRecord, TopTokens, summarize


def chain_step(index, context_len):
    # drafted 5 6 7: 5 and 6 kept, 7 rejected; the correction 9
    return StepRecord(index=index, k=3, context_len=context_len, drafted=[5, 6, 7], decisions=[True, True, False],
                      draws=[0.1, 0.2, 0.9], ratios=[1.0, 1.0, 0.5], n_accepted=2, next_token=9,
                      next_origin="correction", emitted=[5, 6, 9], draft_s=0.001, verify_s=0.02,
                      logit_top1=[3.0, 2.0, 1.0], logit_gap=[1.0, 0.5, 0.2], greedy=False, parents=[-1, 0, 1],
                      tested=[0, 1, 2], path=[0, 1], seen_in=["prompt", "prompt", "output"],
                      p_top=[TopTokens([5, 4], [0.6, 0.4])] * 4, q_top=[TopTokens([5], [1.0])] * 3,
                      last_token=4, target_cache=(10, 14, 13))


def tree_step(index, context_len):
    # root -> 11 (node 0) -> 12 (node 1); root -> 13 (node 2). Node 0 kept, node 1 rejected; bonus? no: correction 14
    return StepRecord(index=index, k=2, context_len=context_len, drafted=[11, 12, 13], decisions=[True, False],
                      draws=[None, None], ratios=[1.0, 0.0], n_accepted=1, next_token=14, next_origin="correction",
                      emitted=[11, 14], draft_s=0.002, verify_s=0.03, logit_top1=[1.0, 1.0], logit_gap=[0.1, 0.1],
                      parents=[-1, 0, -1], tested=[0, 1], path=[0], drafter_cache=(3, 5, 4))


def plain_step(index, context_len):
    return StepRecord(index=index, k=1, context_len=context_len, drafted=[], decisions=[], draws=[], ratios=[],
                      n_accepted=0, next_token=8, next_origin="bonus", emitted=[8], draft_s=0.0, verify_s=0.01,
                      logit_top1=[2.0], logit_gap=[0.3])


PROMPT = [1, 2, 3, 4]


def run(steps_of=(chain_step, tree_step, plain_step)):
    steps, ctx = [], len(PROMPT)
    for i, make in enumerate(steps_of):
        steps.append(make(i, ctx))
        ctx += len(steps[-1].emitted)
    ids = [t for s in steps for t in s.emitted]
    return R.RecordedRun({"method": "lookup"}, summarize("lookup", "text", ids, len(PROMPT), steps, 0.5, 0.1), steps)


def recording():
    r = run()
    return R.Recording(kind="step", settings={"method": "lookup", "k": 3, "max_new": 6}, model={"name": "m",
                       "fingerprint": "ab"}, environment={"torch": "x", "device": "cpu", "dtype": "bfloat16",
                       "threads": 2, "code": "c"}, recorded_at=1.7e9, runs=[r], prompt_ids=PROMPT,
                       tokens={t: f"t{t}" for t in R.token_ids_shown([r], PROMPT)})


def doc():
    return json.loads(R.dumps(recording()))


def refused(data, expect: str):
    with pytest.raises(R.RecordingError) as e:
        R.loads(data if isinstance(data, (str, bytes)) else json.dumps(data))
    assert expect in str(e.value), str(e.value)


def test_round_trip_keeps_every_step_and_the_summary():
    rec = recording()
    back = R.loads(R.dumps(rec))
    assert back.runs[0].steps == rec.runs[0].steps
    assert back.runs[0].summary == rec.runs[0].summary
    assert (back.settings, back.model, back.environment, back.prompt_ids, back.tokens) == \
        (rec.settings, rec.model, rec.environment, rec.prompt_ids, rec.tokens)


def test_replay_hands_out_the_recorded_steps_one_at_a_time():
    rec = R.loads(R.dumps(recording()))
    rp = R.Replay(rec)
    assert rp.steps == [] and not rp.finished
    first = rp.step()
    assert first == rec.runs[0].steps[0] and rp.new_tokens == [5, 6, 9]
    assert rp.summary().target_passes == 1
    assert list(rp.run()) == rec.runs[0].steps[1:] and rp.finished
    assert rp.summary() == rec.runs[0].summary and rp.step() is None
    assert rp.target.tokenizer.decode([5, 6]) == "t5t6"


def test_not_json_and_truncated():
    refused(b"\x80\x81 not text", "not a JSON file")
    refused("PK\x03\x04 a zip", "not a JSON file")
    text = R.dumps(recording())
    refused(text[: len(text) // 2], "truncated")


def test_oversized_refused_before_parsing():
    assert R.loads(R.dumps(recording())).runs  # fits the default cap
    with pytest.raises(R.RecordingError, match="at most"):
        R.loads(R.dumps(recording()), max_bytes=100)


def test_wrong_format_and_version():
    d = doc()
    d["format"] = "something-else"
    refused(d, "not a specviz recording")
    d = doc()
    d["version"] = R.VERSION + 1
    refused(d, "version")
    refused([1, 2, 3], "not a specviz recording")


@pytest.mark.parametrize("path,value,expect", [
    (("runs", 0, "steps", 0, "drafted"), "5 6 7", "'drafted'"),
    (("runs", 0, "steps", 0, "n_accepted"), True, "'n_accepted'"),
    (("runs", 0, "steps", 0, "next_origin"), "magic", "'next_origin'"),
    (("runs", 0, "steps", 0, "verify_s"), -1.0, "'verify_s'"),
    (("runs", 0, "summary", "token_ids"), [-3], "'token_ids'"),
    (("runs",), [], "'runs'"),
    (("kind",), "pickle", "'kind'"),
])
def test_schema(path, value, expect):
    d = doc()
    at = d
    for p in path[:-1]:
        at = at[p]
    at[path[-1]] = value
    refused(d, expect)


def test_missing_and_unknown_fields():
    d = doc()
    del d["runs"][0]["steps"][1]["decisions"]
    refused(d, "lacks the field 'decisions'")
    d = doc()
    d["runs"][0]["steps"][0]["__reduce__"] = "os.system"
    refused(d, "unknown field '__reduce__'")


def tamper(change):
    d = doc()
    change(d["runs"][0]["steps"], d["runs"][0]["summary"])
    return d


def test_tampered_kept_tokens_do_not_match_decisions():
    """A step whose kept tokens do not match its decisions: emitted claims 7 was kept, the decisions rejected it."""
    def change(steps, summary):
        steps[0]["emitted"] = [5, 6, 7]
        summary["token_ids"][2] = 7
    refused(tamper(change), "emitted tokens are not its accepted drafts")


@pytest.mark.parametrize("change,expect", [
    (lambda st, su: st[0].update(decisions=[True, True, True]), "do not accept exactly"),
    (lambda st, su: st[0].update(n_accepted=3), "path holds 2"),
    (lambda st, su: st[1].update(path=[1]), "not a path down"),
    (lambda st, su: st[1].update(parents=[-1, 5, -1]), "tree is malformed"),
    (lambda st, su: st[0].update(draws=[0.1]), "differ in number"),
    (lambda st, su: st[2].update(context_len=3), "does not start where"),
    (lambda st, su: st[1].update(index=7), "numbered"),
    (lambda st, su: su.update(token_ids=su["token_ids"][:-1]), "summary's tokens"),
    (lambda st, su: su.update(accepted=su["accepted"] + 1), "summary's accepted"),
])
def test_tampered_consistency(change, expect):
    refused(tamper(change), expect)


def test_untouched_document_loads():
    """The negative control for the refusals above: the same document, unchanged, loads."""
    assert R.loads(json.dumps(doc())).runs[0].summary.token_ids == [5, 6, 9, 11, 14, 8]


def test_a_block_verified_step_round_trips():
    from specviz.core.block import verify_block
    from specviz.core.recording import _step, step_dict

    p = torch.softmax(torch.randn(3, 6, generator=torch.Generator().manual_seed(0)), -1)    # (3, V)
    q = torch.full((2, 6), 1 / 6)
    b = verify_block(torch.tensor([1, 2]), q, p, False, torch.Generator().manual_seed(1))
    rec = StepRecord(index=0, k=2, context_len=5, drafted=[1, 2], decisions=[True] * b.n_accepted, draws=[0.1] *
                     b.n_accepted, ratios=[1.0] * b.n_accepted, n_accepted=b.n_accepted, next_token=b.next_token,
                     next_origin=b.origin, emitted=[1, 2][: b.n_accepted] + [b.next_token], draft_s=0.0, verify_s=0.0,
                     logit_top1=[], logit_gap=[], parents=[-1, 0], tested=list(range(b.n_accepted)),
                     path=list(range(b.n_accepted)), verify="block", block=b)
    back = _step(json.loads(json.dumps(step_dict(rec))), "step 1")
    assert back.block == b and back.verify == "block"
    old = step_dict(rec)
    del old["verify"], old["block"]                                  # a recording made before block verification
    assert _step(old, "step 1").block is None

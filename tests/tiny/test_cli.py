"""The CLI: bad input is one clear line and a non-zero exit, never a traceback."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from specviz.engine.models import tiny_llama

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, timeout=300):
    r = subprocess.run([sys.executable, "-m", "specviz", *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=timeout, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin",
                                                        "SPECVIZ_CACHE_DIR": os.environ["SPECVIZ_CACHE_DIR"]})
    return r.returncode, r.stdout, r.stderr


def save_tiny(folder: Path, words: list[str], seed: int, max_positions: int = 512) -> str:
    """A tiny random Llama with a word-level tokenizer, saved as a local model folder."""
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="</s>", bos_token="<s>")
    m = tiny_llama(vocab_size=len(words), layers=1, hidden=32, seed=seed, max_positions=max_positions)
    m.model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return str(folder)


WORDS = ["<s>", "</s>", "<unk>"] + [f"w{i}" for i in range(61)]


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("models")
    a = save_tiny(base / "target", WORDS, seed=0, max_positions=64)
    b = save_tiny(base / "drafter-other-vocab", WORDS[:3] + [f"x{i}" for i in range(61)], seed=1)
    return a, b


def one_clear_line(rc, err):
    assert rc != 0
    assert "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("specviz: error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("args,expect", [
    (["--prompt", "   "], "empty"),
    (["--prompt", "hi", "--method", "telepathy"], "unknown method"),
    (["--prompt", "hi", "--k", "0"], "k must be"),
    (["--prompt", "hi", "--method", "lookup", "--n", "0"], "n must be"),
    (["--prompt", "hi", "--method", "lookup", "--n-min", "4", "--n-max", "2"], "n-min"),
    (["--workload", "nope"], "unknown workload"),
    (["--prompt", "hi", "--method", "lookup", "--lookup-rule", "latest"], "unknown lookup rule"),
    (["--prompt", "hi", "--method", "lookup", "--k-rule", "longest"], "unknown lookup k rule"),
    (["--prompt", "hi", "--method", "lookup", "--spec-factor", "0"], "spec factor"),
    (["--prompt", "hi", "--method", "suffix", "--min-token-prob", "1.5"], "minimum token probability"),
    (["--prompt", "hi", "--method", "suffix", "--max-depth", "1"], "depth"),
    (["--prompt", "hi", "--target", "/nonexistent/model"], "could not load"),
    (["--session", "nope"], "unknown session"),
    (["--session", "reformat-table-session", "--session-cache", "maybe"], "--session-cache"),
    (["--prompt", "hi", "--method", "lookup", "--gate", "sometimes"], "--gate takes"),
    (["--prompt", "hi", "--method", "plain", "--gate", "pays"], "plain decoding drafts nothing"),
])
def test_bad_input_one_line(args, expect):
    rc, _, err = cli("generate", *args)
    assert expect in one_clear_line(rc, err)


def test_tiny_local_models(tiny_dirs):
    target, other = tiny_dirs
    prompt = " ".join(f"w{i % 7}" for i in range(20))
    rc, out, err = cli("generate", "--target", target, "--prompt", prompt, "--method", "lookup",
                       "--k", "3", "--n", "2", "--max-new-tokens", "12", "--json", "--dtype", "float32")
    assert rc == 0, err
    res = json.loads(out)
    s = res["summary"]
    assert len(res["token_ids"]) == 12 and s["target_passes"] == len(res["steps"])
    assert sum(len(st["emitted"]) for st in res["steps"]) == 12
    assert s["tokens_per_pass"] == pytest.approx(12 / s["target_passes"])
    assert s["machine"]["dtype"] == "float32" and s["machine"]["capability"] and s["machine"]["threads"] >= 1
    assert s["dtype_reason"] == "float32: asked for by name"
    # every drafted token says where it was copied from (the prompt repeats, so lookup drafts from it)
    drafted = [st for st in res["steps"] if st["drafted"]]
    assert drafted and all(len(st["sources"]) == len(st["drafted"]) for st in drafted)
    assert {x for st in drafted for x in st["sources"]} <= {"this prompt", "this output"}
    assert "this prompt" in drafted[0]["sources"]
    # suffix: its trees carry their parents and the text each node came from
    rc, out, err = cli("generate", "--target", target, "--prompt", prompt, "--method", "suffix", "--k", "6",
                       "--max-new-tokens", "12", "--json", "--dtype", "float32")
    assert rc == 0, err
    steps = [st for st in json.loads(out)["steps"] if st["drafted"]]
    assert steps and all(len(st["sources"]) == len(st["drafted"]) for st in steps)
    assert all(len(st["parents"]) == len(st["drafted"]) and st["parents"][0] == -1 for st in steps if "parents" in st)
    # same seed, same output
    rc2, out2, _ = cli("generate", "--target", target, "--prompt", prompt, "--method", "lookup",
                       "--k", "3", "--n", "2", "--max-new-tokens", "12", "--json", "--dtype", "float32")
    assert json.loads(out2)["token_ids"] == res["token_ids"]
    # against plain decoding, through the one measuring path: median of per-repeat ratios, equality
    rc3, out3, err3 = cli("generate", "--target", target, "--prompt", prompt, "--method", "lookup", "--k", "3",
                          "--n", "2", "--max-new-tokens", "12", "--json", "--dtype", "float32", "--against-plain", "3")
    assert rc3 == 0, err3
    chk = json.loads(out3)["against_plain"]
    # three repeats were run and reported with their spread (the rule itself: tests/tiny/test_measure.py)
    assert len(chk["ratios"]) == 3 and all(x > 0 for x in chk["ratios"])
    assert min(chk["ratios"]) <= chk["speedup"] <= max(chk["ratios"]) and chk["spread"] is not None
    assert isinstance(chk["too_noisy"], bool) and chk["divergence"] is None
    assert chk["identical"] is True and json.loads(out3)["token_ids"] == res["token_ids"]
    # a drafter with another vocabulary is refused, with the reason
    rc, _, err = cli("generate", "--target", target, "--drafter", other, "--method", "draft",
                     "--prompt", prompt, "--dtype", "float32")
    assert "different token ids" in one_clear_line(rc, err)
    # a prompt longer than the context window (64 positions)
    rc, _, err = cli("generate", "--target", target, "--prompt", " ".join(["w1"] * 80), "--dtype", "float32")
    assert "context window" in one_clear_line(rc, err)


def test_help_says_what_each_option_does_its_default_and_choices():
    from specviz.cli import build_parser
    from specviz.engine.methods import REGISTRY
    gen = next(a for a in build_parser()._actions if a.dest == "command").choices["generate"]
    text = gen.format_help()
    for m in REGISTRY:
        assert m in text
    for opt in gen._actions:
        if opt.dest == "help":
            continue
        assert opt.help, opt.dest
        assert "default" in opt.help or opt.dest in ("prompt", "prompt_file", "workload", "session"), opt.dest


def test_prompt_file_drops_one_final_newline(tmp_path):
    from argparse import Namespace

    from specviz.cli import read_prompt
    f = tmp_path / "p.txt"
    for written, read in (("quote it\n", "quote it"), ("quote it\n\n", "quote it\n"), ("quote it", "quote it"),
                          ("quote it\r\n", "quote it")):
        f.write_text(written, newline="")
        assert read_prompt(Namespace(workload=None, prompt_file=str(f), chat=True)) == (read, True)


def test_a_session_runs_every_request_in_order(tmp_path):
    """--session: each request once, per request and in total; with --against-plain, plain's session too."""
    folder = save_tiny(tmp_path / "t", WORDS, seed=0, max_positions=1024)
    cfg = json.loads((Path(folder) / "tokenizer_config.json").read_text())
    cfg["chat_template"] = "{% for m in messages %}{{ m['content'] }} {% endfor %}"   # the sessions' requests are chats
    (Path(folder) / "tokenizer_config.json").write_text(json.dumps(cfg))
    args = ["generate", "--target", folder, "--session", "reformat-table-session", "--method", "suffix",
            "--max-new-tokens", "6", "--dtype", "float32"]
    rc, out, err = cli(*args, "--json", "--against-plain", "1")
    assert rc == 0, err
    res = json.loads(out)
    assert [r["request"] for r in res["requests"]] == [f"reformat-table-{i}" for i in range(1, 5)]
    assert res["cache"] is True and res["total"]["tokens"] == sum(len(r["token_ids"]) for r in res["requests"]) == 24
    chk = res["against_plain"]
    assert len(chk["request_speedups"]) == 4 and chk["same_as_plain"] == [True] * 4 and chk["speedup"] > 0
    rc, out, err = cli(*args, "--session-cache", "off")
    assert rc == 0, err
    assert "cross-request cache off" in out and "4. reformat-table-4" in out and "total: 24 tokens" in out
    rc, _, err = cli("generate", "--session", "reformat-table-session", "--prompt", "hi")
    assert rc == 2 and "not allowed with" in err                      # one source of prompts at a time


def test_replay_prints_what_generate_json_printed(tiny_dirs, tmp_path):
    """generate --record writes the run; replay prints it as generate --json did, timings included, with no model."""
    target, _ = tiny_dirs
    rec = tmp_path / "run.json"
    prompt = " ".join(f"w{i % 5}" for i in range(16))
    rc, out, err = cli("generate", "--target", target, "--prompt", prompt, "--method", "lookup", "--k", "3",
                       "--max-new-tokens", "10", "--json", "--dtype", "float32", "--record", str(rec))
    assert rc == 0, err
    rc, again, err = cli("replay", str(rec))
    assert rc == 0, err
    printed = json.loads(out)
    for k in ("machine", "dtype_reason"):      # where it ran: said by generate, not kept in a recording
        printed["summary"].pop(k)
    assert json.loads(again) == printed
    assert printed["summary"]["sole_rule"].startswith("a 2-token match seen only once before")   # kept, said again
    doc = json.loads(rec.read_text())
    assert doc["model"]["fingerprint"] and doc["environment"]["dtype"] == "float32"


@pytest.mark.parametrize("content,expect", [
    ("{\"format\": \"specviz-recording\", \"version\": 1", "truncated"),
    ("[]", "not a specviz recording"),
    ("{\"format\": \"specviz-recording\", \"version\": 99}", "version"),
])
def test_replay_bad_file_one_line(tmp_path, content, expect):
    f = tmp_path / "bad.json"
    f.write_text(content)
    rc, _, err = cli("replay", str(f))
    assert expect in one_clear_line(rc, err)


def test_replay_missing_file_one_line(tmp_path):
    rc, _, err = cli("replay", str(tmp_path / "none.json"))
    assert "cannot read the recording" in one_clear_line(rc, err)


def test_auto_dtype_is_timed_once_and_named_in_the_summary(tmp_path):
    """--dtype auto on a tiny local model: the first run times it (into the test's own cache folder), a later run
    reads the choice back; every summary says which dtype ran and why. A timing taken while other work kept the
    machine busy is provisional (core/dtypechoice.settled) and timed again by the next quiet run, at most MAX_TRIES
    times in all: the choice is read back once a timing is settled, and never timed again after that."""
    from specviz.core.dtypechoice import MAX_TRIES
    target = save_tiny(tmp_path / "target", WORDS, seed=0, max_positions=512)
    env = {**os.environ, "SPECVIZ_CACHE_DIR": str(tmp_path)}
    args = ("generate", "--target", target, "--prompt", "w1 w2 w3 w1 w2", "--max-new-tokens", "4", "--json",
            "--method", "lookup")

    def run():
        r = subprocess.run([sys.executable, "-m", "specviz", *args], cwd=ROOT, capture_output=True, text=True,
                           timeout=300, env=env)
        assert r.returncode == 0, r.stderr
        summary = json.loads(r.stdout)["summary"]     # lookup's sole rule is read from the same timing
        assert re.search(r"a verify pass of 25 rows costs \d+\.\d\d one-token steps here", summary["sole_rule"])
        return summary["dtype_reason"], summary["machine"]["dtype"]

    runs = [run()]
    assert runs[0][0].startswith("auto: ") and "timed now" in runs[0][0]
    while "remembered in" not in (got := run())[0]:
        assert "timed now" in got[0] and "provisional" in runs[-1][0], (got, runs)  # again only after a busy timing
        runs.append(got)
        assert len(runs) <= MAX_TRIES, runs                                         # ... at most MAX_TRIES times
    assert got[1] == runs[-1][1] in ("float32", "bfloat16")                          # the dtype the kept timing chose
    assert (tmp_path / "dtype.json").exists()


def test_a_gated_recording_keeps_its_gate_and_the_held_steps_say_why(tiny_dirs, tmp_path):
    """A random tiny target rejects lookup's drafts, so the hit-rate gate shuts: the steps it held back say why
    (step records, --json, replay) and the recording keeps the gate's rule, which replay prints back."""
    from specviz.core.recording import loads
    from specviz.teach.steps import no_draft

    target, _ = tiny_dirs
    rec = tmp_path / "gated.json"
    prompt = " ".join(f"w{i % 7}" for i in range(20))
    rc, out, err = cli("generate", "--target", target, "--prompt", prompt, "--method", "lookup", "--k", "3",
                       "--n", "1", "--max-new-tokens", "16", "--json", "--dtype", "float32", "--gate", "hit-rate",
                       "--record", str(rec))
    assert rc == 0, err
    printed = json.loads(out)
    held = [s for s in printed["steps"] if "held" in s]
    assert held and all(s["drafted"] == [] and s["held"].startswith("the gate was shut") for s in held)
    assert any(s["drafted"] for s in printed["steps"])                                 # the gate probes again
    rc, again, err = cli("replay", str(rec))
    assert rc == 0, err
    assert json.loads(again)["summary"]["gate"] == printed["summary"]["gate"] and json.loads(again)["steps"] == \
        printed["steps"]
    steps = loads(rec.read_bytes()).runs[0].steps
    shut = next(s for s in steps if s.held)
    assert "the gate was shut" in no_draft(shut, "lookup", str)                          # Step through's words
    assert "no earlier occurrence" not in no_draft(shut, "lookup", str)


def test_a_gated_run_names_its_gate_and_prices_passes_with_this_kinds_bench(tiny_dirs):
    """--gate pays reads v from the committed bench of this machine's kind; with none, one clear line."""
    from specviz.bench.results import kind_bench
    from specviz.engine.device import machine

    target, _ = tiny_dirs
    prompt = " ".join(f"w{i % 7}" for i in range(20))
    args = ["generate", "--target", target, "--prompt", prompt, "--method", "lookup", "--k", "3", "--n", "2",
            "--max-new-tokens", "12", "--json", "--dtype", "float32"]
    rc, out, err = cli(*args, "--gate", "hit-rate")
    assert rc == 0, err
    assert json.loads(out)["summary"]["gate"].startswith("off while α̂ of its last 8 drafts < 0.3")
    rc, out, err = cli(*args, "--gate", "pays")
    if kind_bench(machine("cpu")) is None:
        assert "committed bench of this machine's kind" in one_clear_line(rc, err)
    else:
        assert rc == 0, err
        assert "did not pay" in json.loads(out)["summary"]["gate"] and "by the bench of cpu-" in out

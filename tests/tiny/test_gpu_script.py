"""scripts/gpu.sh, checked without a GPU: its plan (DRY=1) parses with the CLI, fits the window, and the corpus
card it writes names the run's own artefacts (issue 25, §4)."""
import os
import random
import re
import shlex
import subprocess
from pathlib import Path

import torch

from specviz.cli import build_parser, main
from specviz.engine import artifacts
from specviz.engine.models import tiny_llama
from specviz.train import corpus

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu.sh"


def dry(tmp_path, *steps, **env):
    out = subprocess.run(["bash", str(SCRIPT), *steps], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env={**os.environ, "DRY": "1", "OUT": str(tmp_path / "gpu"), **env})
    assert out.returncode == 0, out.stderr
    return out.stdout + out.stderr


def test_the_script_is_valid_bash_and_says_it_needs_a_cuda_torch():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    head = "\n".join(SCRIPT.read_text().splitlines()[:10]).lower()
    assert "cuda build of torch" in head and "--index-url https://download.pytorch.org/whl/cu" in head


def test_every_command_of_the_plan_parses_and_runs_on_the_device(tmp_path):
    text = dry(tmp_path, DEVICE="cuda:1")
    cmds = [shlex.split(line[2:]) for line in text.splitlines() if line.startswith("+ ")]
    assert len(cmds) == 7 + 1 + 1 + 6 + 1
    jobs = []
    for c in cmds:
        args = c[c.index("specviz") + 1:]
        a = build_parser().parse_args(args)           # a typo in a flag fails here, not on a rented GPU
        jobs.append(" ".join(args[:2]))
        if getattr(a, "device", None) is not None:
            assert a.device == "cuda:1", args
        for flag in ("out", "run", "models"):         # everything it writes stays under $OUT
            v = getattr(a, flag, None)
            assert v is None or str(v).startswith(str(tmp_path / "gpu")), (flag, args)
    for job in ("train drafter", "train eagle", "train eagle3", "train lora", "train evaluate", "train card",
                "train corpus", "bench --quick"):
        assert job in jobs
    assert "--models" in next(c for c in cmds if c[3:5] == ["train", "card"])


def test_each_step_fits_well_inside_ten_minutes_and_all_about_twelve(tmp_path):
    steps = re.findall(r"== \d\. .*\(about (\d+) min, stopped at (\d+)\)", dry(tmp_path))
    assert len(steps) == 5
    assert all(int(e) < int(cap) <= 7 for e, cap in steps)
    assert 10 <= sum(int(e) for e, _ in steps) <= 13


def test_steps_can_be_run_alone_and_a_wrong_one_is_refused(tmp_path):
    text = dry(tmp_path, "3")
    assert "train corpus" in text and "train eagle" not in text
    out = subprocess.run(["bash", str(SCRIPT), "9"], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "DRY": "1", "OUT": str(tmp_path / "gpu")})
    assert out.returncode == 2 and "unknown step" in out.stderr


def test_the_corpus_card_names_the_runs_own_artefacts(tmp_path):
    target = tiny_llama(vocab_size=96, layers=1, hidden=32, seed=0)
    r = random.Random(0)
    prompts = [[r.randrange(2, 96) for _ in range(8)] for _ in range(8)]
    folder = tmp_path / "gpu-corpus"
    corpus.build_from_ids(target, prompts, [False] * 8, folder, batch=8, max_new=4, pad_id=1, progress=False)
    models = tmp_path / "models"
    artifacts.save("eagle", {"w": torch.zeros(2)}, {"corpus": {"folders": [str(folder)]}}, models)
    out = tmp_path / "corpus.md"
    assert main(["train", "card", "--corpus", str(folder), "--models", str(models), "--out", str(out)]) == 0
    row = next(x for x in out.read_text().splitlines() if x.startswith(f"| {folder.name} |"))
    assert row.endswith("| eagle |")

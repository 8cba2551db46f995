"""The sidebar's target line says what runs: the loaded dtype and device, and before that the settings, with "auto"
said as a choice still to come (it read "auto on auto" while loading)."""
from types import SimpleNamespace

import torch

from specviz.ui.loading import running_on


def test_before_loading_auto_is_said_as_a_choice_to_come():
    line = running_on(None, {"dtype": "auto", "device": "auto"})
    assert "auto on auto" not in line
    assert line == "dtype chosen at load (auto) on the device found (auto)"
    assert running_on(None, {"dtype": "float32", "device": "cpu"}) == "float32 on cpu"


def test_once_loaded_it_names_what_the_model_runs_in():
    tgt = SimpleNamespace(dtype=torch.bfloat16, device=torch.device("cpu"))
    assert running_on(tgt, {"dtype": "auto", "device": "auto"}) == "bfloat16 on cpu"

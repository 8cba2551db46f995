"""The GPU path checked on a CPU (issue 25): a tiny target on the `meta` device stands in for CUDA.

(a) every builder puts what it builds on the target's device; (b) under a guard that refuses an
operation mixing devices (tests/device_guard.py), training, resuming, the LoRA merge and the layer-skip
demo run on the meta target; (c) the decoder's contract: proposers hand back CPU tokens and q, and keep
their modules on the target's device.
"""
import copy

import pytest
import torch
from device_guard import META, DeviceMixing, MixingGuard, misplaced, on_meta

from specviz.core.sampling import SamplingConfig
from specviz.engine import artifacts
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import tiny_llama
from specviz.proposers.base import Proposer
from specviz.proposers.draft_model import DraftModel, build_drafter
from specviz.proposers.eagle import Eagle, EagleHead
from specviz.proposers.eagle_tree import EagleTree
from specviz.proposers.hybrid import Hybrid
from specviz.proposers.lookup import PromptLookup
from specviz.proposers.medusa import Medusa, MedusaHeads, MedusaTree
from specviz.proposers.vocab import SubsetHead
from specviz.teach import reality as R
from specviz.train import common, jobs, lora as tl

# loading CPU weights into meta parameters is a no-op, and torch says so for every tensor
pytestmark = pytest.mark.filterwarnings("ignore:.*copying from a non-meta parameter:UserWarning")

V = 96
IDS = torch.arange(2, 80)
LAYERS = (0, 2, 3)          # the EAGLE-3 head's target layers


@pytest.fixture(scope="module")
def cpu_target():
    return tiny_llama(vocab_size=V, layers=4, hidden=32, seed=0)


@pytest.fixture()
def target(cpu_target):
    return on_meta(cpu_target)


@pytest.fixture(scope="module")
def shipped(cpu_target, tmp_path_factory):
    """Artefacts for the tiny target written the way training writes them (bfloat16 safetensors + card)."""
    d = tmp_path_factory.mktemp("models")
    H = cpu_target.model.config.hidden_size
    heads = MedusaHeads(H, 3)
    artifacts.save("medusa", {**{f"heads.{k}": v for k, v in heads.state_dict().items()}, "vocab_ids": IDS},
                   dict(hidden_size=H, n_heads=3), d)
    head = EagleHead.for_target(cpu_target.model.config)
    artifacts.save("eagle", {**{f"head.{k}": v for k, v in head.state_dict().items()}, "vocab_ids": IDS},
                   dict(hidden_size=H), d)
    head3 = EagleHead.for_target(cpu_target.model.config, LAYERS)
    artifacts.save("eagle3", {**{f"head.{k}": v for k, v in head3.state_dict().items()}, "vocab_ids": IDS},
                   dict(hidden_size=H, feature_layers=list(LAYERS)), d)
    m = build_drafter(cpu_target.model, 1, IDS, init_layers=(0,))
    from specviz.train.drafter import own_state
    artifacts.save("drafter", {**{f"model.{k}": v for k, v in own_state(m).items()}, "vocab_ids": IDS},
                   dict(hidden_size=H, n_layers=1), d)
    model = copy.deepcopy(cpu_target.model)
    wrapped = tl.attach(model, 4, 8.0)
    with torch.no_grad():
        for w in wrapped.values():
            w.lora_B.normal_()
    artifacts.save("lora", tl.delta_tensors(wrapped), dict(hidden_size=H, rank=4, alpha=8.0,
                                                           modules=["q_proj", "v_proj"]), d)
    return d


def subset_misplaced(head: SubsetHead, device) -> list[str]:
    """A subset head's rows and ids follow the target; to_sub maps CPU labels, so it stays on the CPU."""
    bad = [f"{n} ({t.device})" for n, t in (("rows", head.rows), ("ids", head.ids)) if t.device != device]
    return bad + ([f"to_sub ({head.to_sub.device})"] if head.to_sub.device.type != "cpu" else [])


# -- (a) builders: everything on the target's device --------------------------------------------------------
def test_the_meta_target_stands_in_for_a_gpu(target):
    assert target.device == META and misplaced(target.model, META) == []


def test_build_drafter_puts_the_drafter_on_the_targets_device(target):
    with MixingGuard():                                     # copying meta weights into the CPU reads zeros
        m = build_drafter(target.model, 2, IDS, init_layers=(0, 3))
    assert misplaced(m, META) == []
    assert subset_misplaced(m.lm_head, META) == []


def test_the_drafter_training_set_up_is_on_the_targets_device(target):
    with MixingGuard():
        m = jobs.drafter_for_training(target, IDS, 2)
    assert misplaced(m, META) == []
    assert all(p.dtype == torch.float32 for p in m.model.layers.parameters())   # trained in float32


def test_lora_attach_puts_the_adapters_on_the_base_weights_device(target):
    model = copy.deepcopy(target.model)
    with MixingGuard():
        wrapped = tl.attach(model, 4, 8.0)
    assert wrapped and misplaced(model, META) == []


def test_the_medusa_and_eagle_training_heads_are_on_the_targets_device(target):
    assert misplaced(jobs.medusa_heads(target, 4), META) == []
    for init in ("identity", "last-layer", "random"):
        for layers in ((), LAYERS):
            with MixingGuard():
                head = jobs.eagle_head(target, init, layers)
            assert misplaced(head, META) == []


def test_artefacts_load_onto_the_targets_device(target, shipped):
    with MixingGuard():
        _artefacts_load_onto_the_targets_device(target, shipped)


def _artefacts_load_onto_the_targets_device(target, shipped):
    for tree in (False, True):
        p = artifacts.load_medusa(target, shipped, tree=tree)
        assert misplaced(p.heads, META) == [] and subset_misplaced(p.out, META) == []
        for kind in ("eagle", "eagle3"):
            p = artifacts.load_eagle(target, shipped, tree=tree, kind=kind)
            assert misplaced(p.head, META) == [] and subset_misplaced(p.out, META) == []
    d = artifacts.load_drafter(target, shipped)
    assert d.device == META and misplaced(d.model, META) == [] and subset_misplaced(d.model.lm_head, META) == []


def test_the_finetuned_target_is_on_the_targets_device(target, shipped):
    ft = artifacts.load_finetuned_target(target, shipped)
    assert ft.device == META and misplaced(ft.model, META) == []


# -- (b) the guard, and what runs under it --------------------------------------------------------------------
def test_the_guard_refuses_mixed_devices_and_allows_what_cuda_allows():
    a, b = torch.ones(3, 4, device=META), torch.ones(3, 4)
    with MixingGuard():
        with pytest.raises(DeviceMixing):
            a + b                                            # the meta kernel alone would not always refuse
        with pytest.raises(DeviceMixing):
            torch.nn.functional.embedding(torch.tensor([[1, 2]]), a)
        a + torch.tensor(2.0)                                # a CPU scalar mixes, as on CUDA
        a[torch.tensor([0, 2])]                              # CPU index tensors, as on CUDA
        a.copy_(b), b.to(META), a.cpu()                      # moves
        assert float(a.sum()) == 0.0 and a.tolist() == [[0.0] * 4] * 3   # meta reads back as zeros


def _lora_chunks(n=12, length=16):
    g = torch.Generator().manual_seed(0)
    return [torch.randint(2, V, (length,), generator=g) for _ in range(n)]


def test_training_a_step_resuming_and_another_step_mix_no_devices(target, cpu_target, tmp_path):
    """One LoRA step on the meta target, its checkpoint reloaded, a second step: all under the guard."""
    chunks = _lora_chunks()
    model = copy.deepcopy(target.model)
    tl.attach(model, 4, 8.0)
    with MixingGuard() as g:
        log = common.train(model, tl.make_loss(model, chunks, 2), tmp_path, 1, device=META, progress=False)
        assert log["steps_done"] == 1 and (tmp_path / "ckpt.safetensors").exists()
        model = copy.deepcopy(target.model)
        tl.attach(model, 4, 8.0)
        log = common.train(model, tl.make_loss(model, chunks, 2), tmp_path, 2, device=META, progress=False)
    assert log["steps_done"] == 2 and g.ops > 0


def test_resuming_a_checkpoint_moves_the_optimiser_state_to_the_parameters(target, cpu_target, tmp_path):
    """A checkpoint written on the CPU (or read from disk, which is always the CPU) resumes on the target's device."""
    chunks = _lora_chunks()
    model = copy.deepcopy(cpu_target.model)
    tl.attach(model, 4, 8.0)
    common.train(model, tl.make_loss(model, chunks, 2), tmp_path, 1, progress=False)
    model = copy.deepcopy(target.model)
    tl.attach(model, 4, 8.0)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad])
    common.load_ckpt(tmp_path, model, opt)
    states = [v for st in opt.state.values() for v in st.values() if torch.is_tensor(v) and v.dim() > 0]
    assert states and all(v.device == META for v in states)


def test_the_lora_merge_mixes_no_devices(target, shipped):
    with MixingGuard():
        ft = artifacts.load_finetuned_target(target, shipped)
    assert misplaced(ft.model, META) == []


def test_the_layer_skip_demo_mixes_no_devices(target):
    # built on the CPU, as the page does
    ids = torch.randint(2, V, (1, 20), generator=torch.Generator().manual_seed(0))
    with MixingGuard():
        got = R.layer_agreement(target.model, ids, ns=(1, 2))
    assert set(got) == {1, 2}


# -- (c) the decoder's contract, every method ----------------------------------------------------------------------
class Checked(Proposer):
    """Wraps a proposer; records the devices of every draft it hands the decoder."""

    def __init__(self, inner: Proposer):
        self.inner, self.name = inner, inner.name
        self.needs_hidden, self.deterministic = inner.needs_hidden, inner.deterministic
        self.feature_layers = inner.feature_layers
        self.max_nodes = inner.max_nodes
        self.devices: set = set()
        self.drafts = 0

    def reset(self, prompt_ids):
        self.inner.reset(prompt_ids)

    def propose(self, ctx, k):
        d = self.inner.propose(ctx, k)
        self.drafts += len(d.tokens) > 0
        self.devices |= {d.tokens.device} | ({d.q.device} if d.q is not None else set())
        return d

    def update(self, ctx, n):
        self.inner.update(ctx, n)


def _modules(p) -> list[torch.nn.Module]:
    p = getattr(p, "learned", p)
    return [m for m in (getattr(p, a, None) for a in ("model", "heads", "head", "embed", "out"))
            if isinstance(m, torch.nn.Module)]


def _proposers(target, folder):
    out = SubsetHead(target.model.get_output_embeddings().weight, IDS)
    return {
        "lookup": lambda: PromptLookup(n_min=1, n_max=3),
        "draft": lambda: DraftModel(artifacts.load_drafter(target, folder).model),
        "medusa": lambda: artifacts.load_medusa(target, folder),
        "medusa-tree": lambda: artifacts.load_medusa(target, folder, tree=True),
        "eagle": lambda: artifacts.load_eagle(target, folder),
        "eagle-tree": lambda: artifacts.load_eagle(target, folder, tree=True),
        "hybrid": lambda: Hybrid(artifacts.load_eagle(target, folder)),
        "eagle3": lambda: artifacts.load_eagle(target, folder, kind="eagle3"),
        "eagle3-tree": lambda: artifacts.load_eagle(target, folder, tree=True, kind="eagle3"),
        "medusa (built)": lambda: Medusa(MedusaHeads(32, 3).to(target.device), out),
        "medusa-tree (built)": lambda: MedusaTree(MedusaHeads(32, 3).to(target.device), out),
        "eagle-tree (built)": lambda: EagleTree(EagleHead.for_target(target.model.config).to(target.device),
                                                target.model.get_input_embeddings(), out),
        "eagle (built)": lambda: Eagle(EagleHead.for_target(target.model.config).to(target.device),
                                       target.model.get_input_embeddings(), out),
    }


@pytest.mark.parametrize("method", ["lookup", "draft", "medusa", "medusa-tree", "eagle", "eagle-tree", "hybrid",
                                    "eagle3", "eagle3-tree"])
@pytest.mark.parametrize("sampling", [SamplingConfig(), SamplingConfig(temperature=0.8)], ids=["greedy", "t0.8"])
def test_every_proposer_drafts_cpu_tokens_and_q_from_modules_on_the_targets_device(cpu_target, shipped, method,
                                                                                   sampling):
    p = Checked(_proposers(cpu_target, shipped)[method]())
    prompt = [5, 6, 7, 8, 5, 6, 7, 8, 5, 6]                  # repeats, so lookup drafts too
    d = Decoder(cpu_target, p, prompt, DecodeConfig(k=3, max_new_tokens=12, stop_at_eos=False, sampling=sampling))
    for _ in d.run():
        pass
    assert p.drafts > 0 and p.devices == {torch.device("cpu")}
    assert all(misplaced(m, cpu_target.device) == [] for m in _modules(p.inner))


@pytest.mark.parametrize("method", ["lookup", "draft", "medusa", "medusa-tree", "eagle", "eagle-tree", "hybrid",
                                    "eagle3", "eagle3-tree"])
def test_decoding_on_the_meta_target_mixes_no_devices(target, shipped, method):
    """The whole decode loop on the stand-in GPU: drafts come back on the CPU, nothing mixes."""
    p = Checked(_proposers(target, shipped)[method]())
    with MixingGuard():
        d = Decoder(target, p, [5, 6, 7, 8, 5, 6, 7, 8, 5, 6], DecodeConfig(k=3, max_new_tokens=8, stop_at_eos=False))
        for _ in d.run():
            pass
    assert len(d.new_tokens) == 8
    assert p.devices <= {torch.device("cpu")}
    assert all(misplaced(m, META) == [] for m in _modules(p.inner))


# -- timing and defaults on a GPU (findings 6-9), checked without one --------------------------------------------------
@pytest.fixture()
def synced(monkeypatch):
    """torch.cuda.synchronize replaced by a recorder of the device it was asked to wait on."""
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append(device))
    return calls


def test_every_sync_waits_on_the_targets_device(synced):
    from types import SimpleNamespace

    from specviz.engine import measure

    gpu1 = torch.device("cuda:1")
    Decoder._sync(SimpleNamespace(target=SimpleNamespace(device=gpu1)))
    measure.timed(gpu1, lambda: None)             # the one clock (measure.run, the bench's runs, v by batch)
    assert synced == [gpu1, gpu1, gpu1]           # not synchronize(): that waits on cuda:0 and starts a context there
    Decoder._sync(SimpleNamespace(target=SimpleNamespace(device=torch.device("cpu"))))
    assert synced == [gpu1, gpu1, gpu1]           # the CPU has nothing to wait for


def test_v_by_batch_waits_for_the_device_around_every_timed_pass(cpu_target, monkeypatch):
    from specviz.engine import measure

    seen = []
    monkeypatch.setattr(measure, "sync", lambda d: seen.append(torch.device(d)))
    R.v_by_batch(cpu_target.model, V, batches=(1, 2), ks=(1,), context=8, repeats=2)
    timed = 2 * (2 + 1) * 2                       # batches x (repeats + warm-up round) x (k = 0 and k = 1)
    assert seen == [cpu_target.device] * (2 * timed)   # before and after each timed forward


def test_a_measured_speedup_is_preceded_by_an_untimed_warm_up(cpu_target, monkeypatch):
    from specviz.engine import measure

    calls, real = [], measure.run
    monkeypatch.setattr(measure, "run", lambda t, p, ids, cfg, eos=None: calls.append(
        ("plain" if p is None else p.name, cfg.max_new_tokens)) or real(t, p, ids, cfg, eos))
    cfg = DecodeConfig(k=2, max_new_tokens=12, stop_at_eos=False)
    m = measure.against_plain(cpu_target, lambda: PromptLookup(n_min=1, n_max=3), [5, 6, 7, 5, 6], cfg, repeats=2)
    timed = [c for c in calls if c[1] == 12]
    assert len(timed) == 4 and len(m.repeats) == 2
    first = calls.index(timed[0])
    assert {c[0] for c in calls[:first]} == {"plain", "lookup"}            # both ran before the first timed run
    assert all(n < 12 for _, n in calls[:first])                           # short: the warm-up is untimed and cheap


@pytest.mark.parametrize("native,expected", [(True, torch.bfloat16), (False, torch.float16)])
def test_trainings_auto_dtype_is_float16_on_a_gpu_without_native_bfloat16(monkeypatch, native, expected):
    from specviz.engine.models import resolve_dtype

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: native or including_emulation)
    assert resolve_dtype("auto", torch.device("cuda")) == expected
    assert resolve_dtype("auto", torch.device("cpu")) == torch.bfloat16
    assert resolve_dtype("float32", torch.device("cuda")) == torch.float32     # asked for by name: kept


@pytest.mark.parametrize("native,expected", [(True, torch.bfloat16), (False, torch.float16)])
def test_training_autocasts_to_the_gpus_native_half_type(cpu_target, tmp_path, monkeypatch, native, expected):
    """The loop asked to autocast for a CUDA device (recorded, not entered: the model stays on the CPU)."""
    import contextlib

    seen, scaled, Scaler = [], [], torch.amp.GradScaler
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: native or including_emulation)
    monkeypatch.setattr(torch, "autocast", lambda device_type, dtype=None, **kw: seen.append((device_type, dtype))
                        or contextlib.nullcontext())
    monkeypatch.setattr(torch.amp, "GradScaler",
                        lambda dev, enabled=True: scaled.append(enabled) or Scaler(dev, enabled=False))
    model = copy.deepcopy(cpu_target.model)
    tl.attach(model, 4, 8.0)
    common.train(model, tl.make_loss(model, _lora_chunks(), 2), tmp_path, 1, device="cuda", progress=False)
    assert seen == [("cuda", expected)]
    assert scaled == [expected == torch.float16]         # float16 gradients need loss scaling; bfloat16's do not


def test_the_help_says_what_auto_picks(monkeypatch):
    import argparse

    from specviz.cli import add_model_args
    from specviz.engine.device import default_device

    p = argparse.ArgumentParser()
    add_model_args(p)
    helps = {a.dest: " ".join(a.help.split()) for a in p._actions}
    assert "else the CPU" in helps["device"] and "mps only when named" in helps["device"]
    assert "float16 on a CUDA GPU without native bfloat16" in helps["dtype"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert default_device() == torch.device("cpu")           # as the help says: Apple's GPU only when named
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_device() == torch.device("cuda")


def test_auto_chooses_between_float32_and_the_devices_half_type(monkeypatch):
    from specviz.engine.autodtype import candidates

    assert candidates(torch.device("cpu")) == ["float32", "bfloat16"]
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: including_emulation)
    assert candidates(torch.device("cuda")) == ["float32", "float16"]       # a T4 or V100
    assert candidates(torch.device("mps")) == ["float32", "float16"]

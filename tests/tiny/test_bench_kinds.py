"""The bench keeps one results set per kind of machine, and pages show the one of this machine's kind."""
import json
import os

from specviz.bench import results as BR

AVX2 = {"cpu": "AMD EPYC", "capability": "AVX2", "threads": 2, "torch": "2.13.0", "dtype": "float32"}
AMX = {"cpu": "Intel Xeon", "capability": "AVX512", "bf16": "AMX", "threads": 2, "torch": "2.13.0",
       "dtype": "bfloat16"}
ZEN4 = {"cpu": "AMD EPYC", "capability": "AVX512", "bf16": "AVX512_BF16", "threads": 2, "torch": "2.13.0",
        "dtype": "bfloat16"}


def write(folder, machine, when):
    folder.mkdir(parents=True)
    f = folder / "results.json"
    f.write_text(json.dumps({"meta": {"machine": machine, "dtype": machine["dtype"]}}))
    os.utime(f, (when, when))
    return f


def test_pages_show_the_results_of_this_machines_kind(tmp_path):
    avx2 = write(tmp_path / "bench" / "results" / BR.kind_folder(AVX2), AVX2, 1_000)
    amx = write(tmp_path / "bench" / "results" / BR.kind_folder(AMX), AMX, 2_000)     # the newer file
    assert BR.latest_bench(str(tmp_path), here=AVX2)[0] == str(avx2)
    assert BR.latest_bench(str(tmp_path), here=AMX)[0] == str(amx)
    assert BR.latest_bench(str(tmp_path))[0] == str(amx)                                 # no machine given: newest
    gpu = {**AVX2, "gpu": "NVIDIA H100"}
    path, data = BR.latest_bench(str(tmp_path), here=gpu)                                # none of its kind
    assert path == str(amx) and "this machine is another kind" in BR.bench_where(data, gpu)
    assert "same kind" in BR.bench_where(json.loads(avx2.read_text()), AVX2)


def test_kind_folders_and_a_file_that_names_no_machine():
    assert BR.kind_folder(AVX2) == "cpu-avx2" and BR.kind_folder(AMX) == "cpu-avx512-amx"
    assert BR.kind_folder(ZEN4) == "cpu-avx512-bf16" and BR.kind(ZEN4) != BR.kind(AMX)
    assert BR.kind_folder({**AVX2, "gpu": "NVIDIA H100 80GB HBM3"}) == "cuda-nvidia-h100-80gb-hbm3"
    old = {"meta": {"dtype": "bfloat16", "threads": 2, "torch": "2.13.0"}}
    assert "does not name" in BR.bench_where(old, AVX2)


def test_one_capability_two_kinds_of_bfloat16(tmp_path):
    """AMX and AVX512_BF16 are both AVX512 to torch: each kind reads its own bench, and neither reads the other's
    as its own."""
    from specviz.engine.device import bf16_units, describe_machine
    assert bf16_units("fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile") == "AMX"
    assert bf16_units("fpu avx2 avx512f avx512_bf16") == "AVX512_BF16" and bf16_units("fpu avx2") == ""
    assert "(AVX512, AMX)" in describe_machine(AMX)
    zen4 = write(tmp_path / "bench" / "results" / BR.kind_folder(ZEN4), ZEN4, 1_000)
    write(tmp_path / "bench" / "results" / BR.kind_folder(AMX), AMX, 2_000)             # the newer file
    assert BR.latest_bench(str(tmp_path), here=ZEN4)[0] == str(zen4)
    assert BR.kind_bench(ZEN4, str(tmp_path))[0] == str(zen4)
    assert "this machine is another kind" in BR.bench_where({"meta": {"machine": AMX}}, ZEN4)


def test_bench_out_bench_writes_under_this_machines_kind(tmp_path, monkeypatch):
    from specviz.cli import main
    from specviz.engine.device import machine

    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--quick", "--target", "tiny", "--dtype", "float32", "--out", "bench", "--methods", "",
                 "--no-sessions", "--skip-equality"]) == 0
    folder = tmp_path / "bench" / "results" / BR.kind_folder(machine())
    res = json.loads((folder / "results.json").read_text())
    assert res["meta"]["machine"]["capability"] == machine()["capability"]
    assert not (tmp_path / "bench" / "results.json").exists()


def test_a_restricted_cpu_says_it_stands_in(monkeypatch):
    from specviz.engine.device import describe_machine, machine
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
    assert "restricted" not in machine("cpu") and "standing in" not in describe_machine(machine("cpu"))
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    m = machine("cpu")
    assert m["restricted"] == "ONEDNN_MAX_CPU_ISA=AVX2"
    assert "by ONEDNN_MAX_CPU_ISA=AVX2: standing in for a CPU of that kind" in describe_machine(m)
    assert "standing in" in BR.bench_where({"meta": {"machine": {**AVX2, "restricted": m["restricted"]}}}, AVX2)


def test_a_stand_in_keeps_its_own_set_and_a_real_cpu_prefers_its_own(tmp_path):
    """A CPU restricted to AVX2 kernels writes cpu-avx2-standin, so a real AVX2 CPU's set is never overwritten by
    one; a real AVX2 CPU reads its own set, and the stand-in's only while there is none."""
    standin = {**AMX, "capability": "AVX2", "restricted": "ONEDNN_MAX_CPU_ISA=AVX2", "dtype": "float32"}
    del standin["bf16"]
    assert BR.kind_folder(standin) == "cpu-avx2-standin" and BR.kind_folder(AVX2) == "cpu-avx2"
    stood = write(tmp_path / "bench" / "results" / BR.kind_folder(standin), standin, 1_000)
    assert BR.kind_bench(AVX2, str(tmp_path))[0] == str(stood)
    real = write(tmp_path / "bench" / "results" / BR.kind_folder(AVX2), AVX2, 500)      # older, and still first
    assert BR.kind_bench(AVX2, str(tmp_path))[0] == str(real)
    assert BR.kind_bench(standin, str(tmp_path))[0] == str(stood)
    assert BR.kind_bench(ZEN4, str(tmp_path)) is None


def test_the_results_say_how_the_linear_layers_ran():
    """results.md's machine line names the linears' path (engine/packed.label) where the run recorded it."""
    from specviz.bench.report import where
    assert where({"machine": AVX2, "linears": "onednn-packed-float32"}).endswith("linear layers: onednn-packed-float32")
    said = where({"machine": AVX2, "linears": "onednn-packed-float32", "sole_rule": "a 2-token match … drafts 8"})
    assert said.endswith("linear layers: onednn-packed-float32; lookup here: a 2-token match … drafts 8")
    assert "linear layers" not in where({"machine": AVX2})                 # a run before 2026-12-06 did not record it

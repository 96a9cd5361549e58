"""docs/benchmarks.md is rendered from a results file by benchmarks/run_all.py."""
import importlib.util
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "benchmarks" / "results_small.jsonl"


def _run_all():
    if str(ROOT / "benchmarks") not in sys.path:  # as when run as a script: its siblings
        sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "benchmarks" / "run_all.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_render_only_from_a_results_file(tmp_path):
    run_all = _run_all()
    results = tmp_path / "results.jsonl"
    shutil.copy(FIXTURE, results)
    page = tmp_path / "benchmarks.md"
    run_all.main(["--render-only", "--results", str(results), "--page", str(page)])
    text = page.read_text()
    assert text.startswith("# Benchmarks\n")
    # the machine, each section's command, figures
    assert "- cpu: Test CPU @ 2.0GHz" in text and "- mxnet: 1.9.1" in text
    assert "python benchmarks/first_run.py --repeat 2" in text
    assert "cold_over_mxnet" in text and "1.71" in text
    # ops_vs_mxnet: the summary's geometric means and the slowest ops, not every op line
    assert "| 1.31 | 1.5 | 1.1 |" in text and "slow_op" in text
    assert "Operators below 0.33x: 1 (slow_op fwd)." in text
    assert "| exp |" not in text and "2026-01-01" not in text  # no per-op rows, no dates
    # a script unknown to SPECS still gets a section, with its failure
    assert "## newcomer" in text and "RuntimeError: boom" in text


def test_only_keeps_the_other_scripts_results(tmp_path, monkeypatch):
    run_all = _run_all()
    results = tmp_path / "results.jsonl"
    shutil.copy(FIXTURE, results)
    monkeypatch.setattr(run_all, "scripts", lambda: ["first_run", "ops_vs_mxnet", "newcomer"])
    monkeypatch.setattr(run_all, "machine", lambda mx: {"cpu": "Other CPU", "cores": 4})
    monkeypatch.setattr(run_all, "run_one", lambda name, quick, mx, timeout: [
        {"script": name, "run": {"command": f"python benchmarks/{name}.py", "returncode": 0,
                                 "seconds": 1.0}},
        {"script": name, "record": {"bench": "x", "value": 42.0}}])
    page = tmp_path / "benchmarks.md"
    run_all.main(["--only", "newcomer", "--results", str(results), "--page", str(page)])
    entries = [json.loads(ln) for ln in results.read_text().splitlines()]
    assert entries[0] == {"machine": {"cpu": "Other CPU", "cores": 4}}
    scripts = [e["script"] for e in entries[1:]]
    assert scripts.count("first_run") == 4 and scripts.count("newcomer") == 2
    text = page.read_text()
    assert "RuntimeError: boom" not in text
    assert "| 42 |" in text


def test_commands_skip_mxnet_when_the_oracle_is_missing():
    run_all = _run_all()
    cmd = run_all.command("ops_vs_mxnet", True, "/nonexistent/python")
    assert cmd[1:] == ["benchmarks/ops_vs_mxnet.py", "--quick", "--no-mxnet"]
    assert "run_all" not in run_all.scripts() and "first_run" in run_all.scripts()


def test_sections_run_busier_than_the_cores_are_marked_under_load(tmp_path):
    run_all = _run_all()
    entries = [{"machine": {"cpu": "Test CPU", "cores": 2}}]
    for name, load in (("first_run", 1.2), ("libsvm_parse", 7.5)):
        entries += [{"script": name, "run": {"command": f"python benchmarks/{name}.py",
                                             "returncode": 0, "seconds": 1.0,
                                             "load_avg": load}},
                    {"script": name, "record": {"value": 1.0}}]
    text = run_all.render(entries)
    quiet, busy = text.split("## LibSVM parsing")
    assert "Under load" not in quiet
    assert "**Under load**" in busy and "load average 7.5" in busy


def test_the_share_of_other_processes_decides_under_load(tmp_path):
    run_all = _run_all()
    entries = [{"machine": {"cpu": "Test CPU", "cores": 2}}]
    # a run keeping both cores busy on an idle machine reads load ~2 and stays quiet;
    # one that shared the machine with other work is marked whatever its load average
    for name, load, other, rec in (("first_run", 1.9, 0.05, {"value": 1.0}),
                                   ("libsvm_parse", 0.8, 0.9, {"value": 1.0}),
                                   ("seed_tutorial", 1.0, 0.1, {"under_load": True})):
        entries += [{"script": name, "run": {"command": f"python benchmarks/{name}.py",
                                             "returncode": 0, "seconds": 1.0,
                                             "load_avg": load, "other_cores": other}},
                    {"script": name, "record": rec}]
    text = run_all.render(entries)
    first, rest = text.split("## LibSVM parsing")
    libsvm, seed = rest.split("## Seed tutorial")
    assert "Under load" not in first and "other processes used 0.05 cores" in first
    assert "**Under load**" in libsvm and "**Under load**" in seed


def test_watch_counts_only_the_cpu_time_of_other_processes(monkeypatch):
    _run_all()
    import _quiet
    clock = {"busy": 100.0, "own": 10.0, "wall": 50.0}
    monkeypatch.setattr(_quiet, "_busy_seconds", lambda: clock["busy"])
    monkeypatch.setattr(_quiet, "_own_seconds", lambda: clock["own"])
    monkeypatch.setattr(_quiet.time, "perf_counter", lambda: clock["wall"])
    watch = _quiet.Watch()
    # 4 s of wall time: the benchmark's children used 7.6 CPU s, the machine 8.0 in all
    clock.update(busy=108.0, own=17.6, wall=54.0)
    seen = watch.done()
    assert seen["other_cores"] == 0.1 and len(seen["load"]) == 2
    assert not _quiet.under_load([seen])
    clock.update(busy=112.0)
    assert _quiet.under_load([watch.done()])
    assert _quiet.summary([{"load": [1.9, 2.0], "other_cores": 0.1},
                           {"load": [3.0, 1.0], "other_cores": 0.5}]) == {
        "load_max": 3.0, "other_cores_max": 0.5, "under_load": True}

"""benchmarks/ops_vs_mxnet.py's machinery on a few ops, without MXNet (so it cannot rot)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

import sparsym as mx

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ops_vs_mxnet.py"


def _load():
    spec = importlib.util.spec_from_file_location("ops_vs_mxnet", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench = _load()
FAST = ["--rounds", "1", "--min-reps", "2", "--max-reps", "2"]


def _run(argv):
    lines = []
    summary = bench.run(bench.parse_args(argv), lines.append)
    return lines, summary


def test_sweep_cases_are_scaled_to_a_representative_size():
    by_name = dict((n, op) for n, op in bench.select_ops(["elemwise_add", "FullyConnected",
                                                           "Reshape", "take"]))
    case, k = bench.candidates(by_name["elemwise_add"], 1_000_000)[0]
    assert k == 128 and case.shapes == ((512, 768), (512, 768))
    # num_hidden grows with the weight's rows; the bias follows by inference
    case, k = bench.candidates(by_name["FullyConnected"], 1_000_000)[0]
    assert case.params["num_hidden"] == 3 * k and case.shapes[1] == (3 * k, 6 * k)
    assert case.shapes[2] == (3 * k,)
    # Reshape(shape=(6, 4)) cannot grow: it stays among the candidates at the sweep's size
    cands = bench.candidates(by_name["Reshape"], 1_000_000)
    assert cands[0][1] == 128
    assert any(c.params["shape"] == (6, 4) and kk == 1 for c, kk in cands)
    # take's index values are tiled to the scaled length and stay valid
    case, k = bench.candidates(by_name["take"], 100_000)[0]
    xs = bench.build_inputs(by_name["take"], case)
    assert xs[1].shape[0] > 3 and xs[1].max() < xs[0].shape[0]


def test_only_forward_ops_that_mxnet_has_once_per_record():
    names = [n for n, _ in bench.select_ops([".*"])]
    assert len(names) == len(set(names))
    assert not [n for n in names if n.startswith("_backward")]
    theirs = bench.mxnet_operators()
    assert set(names) <= theirs and "dot" in names
    assert [n for n, _ in bench.select_ops(["broadcast_ad."])] == ["broadcast_add"]


def test_sparsym_alone_gives_records_and_a_summary():
    lines, summary = _run(["--no-mxnet", "--ops", "elemwise_add", "sgd_update"] + FAST)
    got = {(r["op"], r["mode"]): r for r in lines}
    assert set(got) == {("elemwise_add", "fwd"), ("elemwise_add", "fwd_bwd"),
                        ("sgd_update", "fwd")}   # an update: forward only
    r = got[("elemwise_add", "fwd_bwd")]
    assert r["shapes"] == [[512, 768], [512, 768]] and r["scale"] == 128
    assert r["sparsym_ms"] > 0 and r["sparsym_first_ms"] > 0 and r["reps"] == 2
    assert "ratio" not in r
    assert summary["ops"] == 2 and summary["timed"] == 0 and summary["geomean"] is None
    json.dumps(summary)


def test_reference_worker_protocol_and_ratios():
    # the reference side runs in a child process; sparsym stands in for MXNet here
    lines, summary = _run(["--ref-package", "sparsym", "--ops", "_plus_scalar"] + FAST)
    assert [r["mode"] for r in lines] == ["fwd", "fwd_bwd"]
    for r in lines:
        assert r["ratio"] > 0 and r["mxnet_ms"] > 0 and r["mxnet_first_ms"] > 0
    assert summary["timed"] == 2 and summary["geomean"] > 0
    assert [s["op"] for s in summary["slowest"]] == ["_plus_scalar"] * 2


def test_a_failing_call_is_reported_not_raised(tmp_path):
    side = bench.Side(mx)
    path = tmp_path / "x.npz"
    np.savez(path, in0=np.ones((2, 3), np.float32))
    req = {"cmd": "setup", "key": 1, "name": "Reshape", "params": {"shape": [7]},
           "path": str(path), "n_in": 1, "mode": "fwd"}
    assert "Error" in side.handle(req)["error"]
    assert "no front end" in side.handle(dict(req, name="_no_such_op"))["error"]
    ok = side.handle(dict(req, params={"shape": [6]}))
    assert ok["first_ms"] > 0
    assert len(side.handle(dict(req, cmd="time", reps=3))["times"]) == 3


def test_summary_picks_the_slowest_and_the_geometric_mean():
    recs = [{"op": f"op{i}", "mode": "fwd", "ratio": r, "sparsym_ms": 1.0, "mxnet_ms": r,
             "shapes": [[2]]} for i, r in enumerate((4.0, 0.25, 1.0))]
    recs[1]["why"] = "a reason"
    recs.append({"op": "opx", "mode": "fwd", "skipped": "why"})
    s = bench.summary(recs, "cmd")
    assert s["geomean"] == 1.0 and s["skipped"] == 1 and s["below_0.33"] == ["op1 fwd"]
    assert [x["op"] for x in s["slowest"]] == ["op1", "op2", "op0"]
    assert s["slowest"][0]["why"] == "a reason" and "why" not in s["slowest"][1]

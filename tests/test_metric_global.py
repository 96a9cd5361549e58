"""Local and global statistics of mx.metric (num_inst, global_num_inst, sum_metric,
reset_local, get_global...) against MXNet 1.9.1, recorded by
tests/fixtures/make_compat_fixtures.py --only metric."""
import copy
import json
import os

import numpy as np
import pytest

import sparsym as mx

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "mxnet")
ARR = np.load(os.path.join(FIX, "compat_metric.npz"))
with open(os.path.join(FIX, "compat_metric.json")) as f:
    META = json.load(f)


def _values(pairs):
    return [v for kv in pairs for v in (kv if isinstance(kv, tuple) else [kv])
            if not isinstance(v, str)]


@pytest.mark.parametrize("run", META["runs"],
                         ids=[r["name"] + "-" + "-".join(map(str, r["kwargs"].values()))
                              for r in META["runs"]])
def test_local_and_global_statistics_match_mxnet(run):
    m = mx.metric.create(run["name"], **run["kwargs"])
    nxt = iter(range(16))
    for step, want in zip(META["steps"], run["snaps"]):
        if step.startswith("u"):
            idx = [next(nxt) for _ in range(int(step[1]))]
            m.update([mx.nd.array(ARR[f"{run['kind']}_{i}_0"]) for i in idx],
                     [mx.nd.array(ARR[f"{run['kind']}_{i}_1"]) for i in idx])
        elif step == "rl":
            m.reset_local()
        else:
            m.reset()
        got = {a: float(getattr(m, a)) for a in
               ("num_inst", "global_num_inst", "sum_metric", "global_sum_metric")}
        got["get"], got["get_global"] = _values([m.get()]), _values([m.get_global()])
        got["get_name_value"] = _values(m.get_name_value())
        got["get_global_name_value"] = _values(m.get_global_name_value())
        for key, value in want.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-6, atol=1e-7,
                                       err_msg=f"{run['name']} after {step}: {key}")


@pytest.mark.parametrize("name,kw", [("f1", {}), ("f1", {"average": "micro"}), ("mcc", {}),
                                     ("mcc", {"average": "micro"}), ("acc", {}), ("pcc", {}),
                                     ("perplexity", {"ignore_label": None})])
def test_reset_local_keeps_the_global_result(name, kw):
    """A metric reset locally after every batch reports globally what one never reset
    reports locally, and after a reset both agree again."""
    kind = "bin" if name in ("f1", "mcc") else "multi"
    m1 = mx.metric.create(name, **kw)
    m2 = copy.deepcopy(m1)
    for i in range(10):
        lab, pred = mx.nd.array(ARR[f"{kind}_{i}_0"]), mx.nd.array(ARR[f"{kind}_{i}_1"])
        m1.update([lab], [pred])
        m1.reset_local()
        m2.update([lab], [pred])
    assert m1.get_global() == pytest.approx(m2.get())
    assert m1.global_num_inst == m2.num_inst
    m1.reset_local()
    m2.reset()
    lab, pred = mx.nd.array(ARR[f"{kind}_10_0"]), mx.nd.array(ARR[f"{kind}_10_1"])
    m1.update([lab], [pred])
    m2.update([lab], [pred])
    assert m1.get() == pytest.approx(m2.get())


def test_f1_counts_one_instance_per_macro_update_and_samples_per_micro_update():
    labels = [mx.nd.array([0, 1, 1]), mx.nd.array([1, 0])]
    preds = [mx.nd.array([[0.3, 0.7], [0.0, 1.0], [0.4, 0.6]]),
             mx.nd.array([[0.9, 0.1], [0.2, 0.8]])]
    macro, micro = mx.metric.F1(), mx.metric.F1(average="micro")
    macro.update(labels, preds)
    micro.update(labels, preds)
    assert macro.num_inst == 1 and micro.num_inst == 5
    # the pooled counts: tp 2, fp 2, fn 1
    assert macro.get()[1] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert micro.metrics.true_positives == 2 and micro.metrics.global_false_positives == 2
    mcc = mx.metric.MCC(average="micro")
    mcc.update(labels, preds)
    assert isinstance(mcc.num_inst, int) and mcc._metrics.total_examples == 5

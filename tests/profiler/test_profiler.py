"""mx.profiler: operator timings from executors and nd.* calls, annotations, the Chrome
trace written by dump() and MXNet's aggregate tables from dumps()."""
import json

import numpy as np
import pytest

import sparsym as mx
from sparsym import profiler


@pytest.fixture
def prof(tmp_path):
    path = tmp_path / "trace.json"
    profiler.set_config(profile_all=False, profile_symbolic=True, profile_imperative=True,
                        profile_memory=True, aggregate_stats=True, filename=str(path))
    profiler.dumps(reset=True)
    profiler.dump(True)
    yield path
    profiler.set_state("stop")
    profiler.resume()
    profiler.dumps(reset=True)
    profiler.dump(True)


def _trace(path):
    return json.loads(path.read_text())["traceEvents"]


def test_off_records_nothing(prof):
    assert profiler.state() == "stop"
    assert not (profiler.RUN.symbolic or profiler.RUN.imperative)
    mx.nd.sqrt(mx.nd.ones((2,)))
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}
    with pytest.raises(mx.MXNetError, match="'run' or 'stop'"):
        profiler.set_state("go")
    with pytest.raises(mx.MXNetError, match="unknown parameter"):
        profiler.set_config(profile_everything=True)


def test_imperative_and_symbolic_operators_are_timed(prof):
    profiler.set_state("run")
    inp = mx.nd.zeros((10, 10))
    mx.nd.sqrt(inp)
    inp = inp + 1
    inp = inp + 1
    x = mx.sym.var("x")
    exe = mx.sym.FullyConnected(x, num_hidden=3, name="fc").simple_bind(mx.cpu(1), x=(2, 4))
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((2, 3)))
    profiler.set_state("stop")
    stats = json.loads(profiler.dumps(format="json"))
    ops = stats["Time"]["operator"]
    assert ops["sqrt"]["Count"] == 1 and ops["_plus_scalar"]["Count"] == 2
    assert ops["FullyConnected"]["Count"] == 1 and "_backward_FullyConnected" in ops
    assert set(ops["sqrt"]) == {"Count", "Total", "Min", "Max", "Avg"}
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}
    assert stats["Memory"]["Device Storage"]["Memory: cpu/0"]["Count"] >= 3
    profiler.dump()
    events = _trace(prof)
    fc = [e for e in events if e.get("name") == "FullyConnected"]
    assert [e["ph"] for e in fc] == ["B", "E"] and fc[0]["pid"] == 1
    assert fc[1]["ts"] >= fc[0]["ts"] and fc[0]["cat"] == "operator"
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert {"cpu/0", "cpu/1"} <= names
    table = profiler.dumps(reset=True)
    assert "operator\n=================" in table and "_plus_scalar" in table
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}


def test_flags_pause_and_resume(prof):
    profiler.set_config(profile_imperative=False)
    profiler.set_state("run")
    mx.nd.sqrt(mx.nd.ones((2,)))
    x = mx.sym.var("x")
    mx.sym.exp(x).simple_bind(mx.cpu(), x=(2,)).forward()
    profiler.set_config(profile_imperative=True)
    profiler.pause()
    mx.nd.exp(mx.nd.ones((2,)))
    profiler.resume()
    mx.nd.log(mx.nd.ones((2,)))
    ops = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert set(ops) == {"exp", "log"} and ops["exp"]["Count"] == 1


def test_sorting_of_the_aggregate_tables(prof):
    profiler.set_state("run")
    for _ in range(3):
        mx.nd.sqrt(mx.nd.ones((50, 50)))
    mx.nd.exp(mx.nd.ones((2,)))
    for key, field in (("count", "Count"), ("total", "Total"), ("avg", "Avg"), ("min", "Min"),
                       ("max", "Max")):
        for asc in (False, True):
            ops = json.loads(profiler.dumps(format="json", sort_by=key, ascending=asc))
            vals = [v[field] for v in ops["Time"]["operator"].values()]
            assert vals == sorted(vals, reverse=not asc)
    with pytest.raises(AssertionError, match="sort_by"):
        profiler.dumps(sort_by="median")


def test_annotations_in_the_trace(prof):
    profiler.set_state("run")
    dom = profiler.Domain("PyDom")
    task = dom.new_task("task")
    task.start()
    task.stop()
    frame = profiler.Frame(dom, "frame")
    frame.start()
    frame.stop()
    ev = profiler.Event("ev")
    ev.start()
    ev.stop()
    counter = dom.new_counter("cnt", 5)
    counter += 2
    counter -= 1
    profiler.Marker(dom, "mark").mark("process")
    profiler.dump(False)
    size = prof.stat().st_size
    mx.nd.sqrt(mx.nd.ones((2,)))
    profiler.dump(False)
    assert prof.stat().st_size > size   # continuous dumps keep everything so far
    events = _trace(prof)
    kinds = {(e.get("cat"), e["name"], e["ph"]) for e in events}
    assert {("PyDom", "task", "b"), ("PyDom", "task", "e"), ("PyDom,frame", "frame", "("),
            ("event", "ev", "B"), ("PyDom,instant_marker", "mark", "i")} <= kinds
    assert [e["args"]["cnt"] for e in events if e["name"] == "cnt"] == [5, 7, 6]
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert stats["PyDom"]["task"]["Count"] == 1 and stats["event"]["ev"]["Count"] == 1
    with pytest.raises(mx.MXNetError, match="stop\\(\\) before start\\(\\)"):
        profiler.Event("never").stop()


class _AddOne(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] + 1)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register("prof_add_one")
class _AddOneProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _AddOne()


def test_custom_operators_report_their_python_and_inner_operators(prof):
    profiler.set_state("run")
    mx.nd.Custom(mx.nd.zeros((3, 3)), op_type="prof_add_one")
    exe = mx.sym.Custom(mx.sym.var("a"), op_type="prof_add_one").simple_bind(mx.cpu(), a=(2,))
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((2,)))
    custom = json.loads(profiler.dumps(format="json"))["Time"]["Custom Operator"]
    assert custom["prof_add_one::pure_python"]["Count"] == 2
    assert custom["prof_add_one::_plus_scalar"]["Count"] == 2
    assert custom["_backward_prof_add_one::pure_python"]["Count"] == 1


def test_scope_tags_operator_events(prof):
    profiler.set_state("run")
    with profiler.scope("outer:"):
        with profiler.scope("inner:"):
            mx.nd.exp(mx.nd.ones((2,)))
        mx.nd.log(mx.nd.ones((2,)))
    mx.nd.sqrt(mx.nd.ones((2,)))
    profiler.dump()
    scopes = {e["name"]: e.get("args", {}).get("scope") for e in _trace(prof)
              if e.get("cat") == "operator"}
    assert scopes == {"exp": "outer:inner:", "log": "outer:", "sqrt": None}
    assert np.isfinite(profiler.now_us())

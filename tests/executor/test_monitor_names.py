"""Executor monitor callbacks named as MXNet 1.9.1 names them (monitor_all: each variable an
op reads, then ``<node>_<input>``; ops without MXNet input names use input0...), kept across
a Module reshape, and usable through MXNet's ctypes handle idiom."""
import ctypes

import numpy as np

import sparsym as mx
from sparsym.operator import NDArray, NDArrayHandle


def _names(sym, monitor_all=True):
    seen = []
    exe = sym.simple_bind(mx.cpu(), grad_req="null")
    exe.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=monitor_all)
    exe.forward()
    return seen


def test_monitor_all_names():
    data = mx.sym.Variable("data", shape=(2, 3, 4, 4))
    conv = mx.sym.Convolution(data, kernel=(2, 2), num_filter=1, name="conv")
    assert _names(conv) == ["data", "conv_data", "conv_weight", "conv_weight", "conv_bias",
                            "conv_bias", "conv_output"]
    assert _names(conv, False) == ["conv_output"]
    act = mx.sym.Activation(data, act_type="relu", name="act")
    assert _names(act) == ["data", "act_input0", "act_output"]
    cc = mx.sym.concat(data, data, dim=0, name="concat")
    assert _names(cc) == ["data", "concat_arg0", "data", "concat_arg1", "concat_output"]


def test_monitor_survives_a_module_reshape_and_reads_handles():
    data = mx.sym.Variable("data")
    sym = mx.sym.Convolution(data, kernel=(1, 1), num_filter=1, name="conv")
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(for_training=False, data_shapes=[("data", (1, 3, 4, 4))])
    mod.init_params()
    mins = {}

    def callback(name, arr):
        arr = NDArray(ctypes.cast(arr, NDArrayHandle), writable=False)
        mins[name] = float(mx.nd.min(arr).asscalar())

    mod._exec_group.execs[0].set_monitor_callback(callback, monitor_all=True)
    batch = mx.io.DataBatch([mx.nd.ones((1, 3, 4, 6))])
    mod.forward(batch, is_train=False)
    assert set(mins) == {"data", "conv_data", "conv_weight", "conv_bias", "conv_output"}
    assert mins["data"] == 1.0 and np.isfinite(mins["conv_output"])

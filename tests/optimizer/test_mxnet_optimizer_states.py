"""Optimizer states written by MXNet 1.9.1 (tests/fixtures/mxnet/optstates, made by
make_mxnet_states_fixtures.py from mxnet_states_cases.py on the oracle) load here, and the
resumed run follows the run MXNet resumed from the same files; hostile pickles are refused
without running anything."""
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from mxnet_states_cases import OPTIMIZERS, resume_module, resume_trainer

import sparsym as mx
from sparsym.base import FormatError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "mxnet" / "optstates"
REC = np.load(FIX / "resumed.npz")


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_trainer_resumes_from_mxnet_states(opt):
    got = resume_trainer(mx, opt, str(FIX))
    np.testing.assert_allclose(got, REC[f"trainer_{opt}"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_module_resumes_from_mxnet_states(opt):
    got = resume_module(mx, opt, str(FIX))
    np.testing.assert_allclose(got, REC[f"module_{opt}"], rtol=1e-5, atol=1e-6)


def test_trainer_states_restore_mxnets_update_counts():
    net = mx.gluon.nn.Dense(2, in_units=3, prefix="dense0_")
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.5})
    trainer.load_states(str(FIX / "trainer_adam.states"))
    # the pickled optimizer comes back: its learning rate and its two updates per weight
    assert trainer.learning_rate == pytest.approx(0.1)
    assert trainer._optimizer.num_update == 2
    assert trainer._optimizer._index_update_count == {0: 2, 1: 2}


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo hacked > /dev/null",))


@pytest.mark.parametrize("payload", [
    pickle.dumps({0: _Boom()}),
    pickle.dumps(({0: None}, _Boom())),
    pickle.dumps({0: (eval, ("1",))}),
    pickle.dumps({0: np.zeros(2)}),  # numpy arrays are not in MXNet's layout
    b"\x80\x04not a pickle",
])
def test_hostile_or_foreign_pickles_are_refused(tmp_path, payload, monkeypatch):
    ran = []
    monkeypatch.setattr(os, "system", lambda *a: ran.append(a))
    f = tmp_path / "bad.states"
    f.write_bytes(payload)
    mod = mx.mod.Module(mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"), name="lro"),
        label_names=["lro_label"])
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("lro_label", (2, 2))])
    mod.init_params()
    mod.init_optimizer(optimizer="adam")
    with pytest.raises(FormatError, match="MXNet optimizer states"):
        mod.load_optimizer_states(str(f))
    assert not ran

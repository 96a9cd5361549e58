"""The issue's done-when on dist_sync: the sparse linear classifier of
tests/gluon/test_gluon_sparse_classifier.py (row_sparse weight, csr input) trained by two
Gluon workers, each on half of every batch, through a Trainer on a dist_sync store on Ray,
gives the Module path's full-batch losses."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import sparsym as mx
from sparsym import autograd, gluon

_spec = importlib.util.spec_from_file_location(
    "_sparse_classifier_case",
    os.path.join(os.path.dirname(__file__), os.pardir, "gluon",
                 "test_gluon_sparse_classifier.py"))
case = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(case)


@pytest.mark.parametrize("hybridize", [False, True])
def test_two_dist_sync_workers_match_module(jobs, run, hybridize):
    _, kvs = jobs.make(2, 1)
    x, y = case._data()
    half = case.BATCH // 2

    def work(kv):
        net = case.HybridLinear() if hybridize else case.BlockLinear()
        net.initialize(mx.init.Constant(0.1))
        if hybridize:
            net.hybridize()
        # the first row_sparse_data pull initialises the store, before any step: the batch
        # scale goes in rescale_grad (step(1)), or step(BATCH) would raise MXNet's "Possible
        # change in the `batch_size`" UserWarning, as MXNet 1.9.1's Trainer does
        trainer = gluon.Trainer(net.collect_params(), "sgd",
                                {"learning_rate": case.LR, "rescale_grad": 1.0 / case.BATCH},
                                kvstore=kv)
        loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
        losses = []
        for _ in range(case.STEPS):
            for i in range(0, case.N, case.BATCH):
                lo = i + kv.rank * half
                xb, yb = x[lo:lo + half], mx.nd.array(y[lo:lo + half])
                if hybridize:
                    net.weight.row_sparse_data(mx.nd.arange(case.NF))
                with autograd.record():
                    loss = loss_fn(net(xb), yb)
                loss.backward()
                trainer.step(1)  # the two halves' gradients sum on the server
                losses.append(float(loss.mean().asscalar()))
        return losses

    per_worker = run(work, kvs)
    got = np.mean(per_worker, axis=0)
    np.testing.assert_allclose(got, case._train_module(), rtol=1e-5, atol=1e-6)

"""Dense convolutional networks: sparsym, MXNet 1.9.1 and PyTorch (eager) side by side; JSON.

    python benchmarks/cnn_vs_mxnet.py [--mxnet-python ~/mxref/bin/python]
                                      [--torch-python PATH] [--seconds 4] [--repeats 3]
                                      [--cases resnet18_train resnet18_infer ...]

Cases (samples/s; every step after warm-up steps that also build primitives and compile
kernels, timed for at least ``--seconds``):

- ``resnet18_train`` / ``resnet18_infer``: Gluon model_zoo ``resnet18_v1(classes=10)``
  on 32x32 inputs, batch 32, hybridized; training is ``autograd.record`` / ``backward`` /
  ``Trainer.step`` with SGD and momentum 0.9, softmax cross-entropy.
- ``lenet_train`` / ``lenet_infer``: LeNet (conv 20@5x5 + relu, max pool 2, conv 50@5x5 +
  relu, max pool 2, dense 500 + relu, dense 10), 28x28 single-channel inputs, batch 64,
  hybridized, same training loop.

The same Gluon code runs under both MXNet-API packages; PyTorch (``--torch-python``, an
environment with ``torch``; skipped without it) runs the same architectures in eager mode
with ``torch.optim.SGD``, the peer users would pick instead. Engines run as ``--repeats``
interleaved rounds of fresh processes (sparsym, MXNet, PyTorch), so a change in machine
load hits all alike. One line per case: each engine's median samples/s, the ratios of the
medians (``vs_mxnet``, ``vs_torch``: > 1 means sparsym is faster), the highest 1-minute load
average and the highest share of cores other processes used around its runs, and
``under_load`` when other work shared the machine (benchmarks/_quiet.py; such ratios are
not quiet-machine figures). ``onednn`` says which path
sparsym's dense primitives took in its runs. Neither MXNet nor PyTorch is a dependency.
"""
import argparse
import json
import os
import sys

from _quiet import Watch, summary
from gluon_vs_mxnet import _median, _run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = ("resnet18_train", "resnet18_infer", "lenet_train", "lenet_infer")

# The timing loop shared by both bodies: warm-up, then whole steps for >= ``seconds``.
TIMER = r'''
import json, os, sys, time
import numpy as np
pkg, seconds = sys.argv[1], float(sys.argv[2])
cases = os.environ["CNN_BENCH_CASES"].split(",")
rng = np.random.RandomState(0)


def timed(step, sync, batch, warm=3):
    for i in range(warm):
        step(i)
    sync()
    n, t = 0, time.perf_counter()
    while True:
        step(warm + n)
        n += 1
        if n % 4 == 0:  # an asynchronous engine may queue a few steps, not hundreds
            sync()
            dt = time.perf_counter() - t
            if dt >= seconds:
                return batch * n / dt


def report(case, sps, **extra):
    print(json.dumps(dict(case=case, package=pkg, samples_per_s=round(sps, 1), **extra)),
          flush=True)


def data(batch, shape, k=4):
    return ([rng.rand(batch, *shape).astype(np.float32) for _ in range(k)],
            [rng.randint(0, 10, batch) for _ in range(k)])
'''

MX_BODY = TIMER + r'''
import importlib
mx = importlib.import_module(pkg)
gluon, autograd, nd = mx.gluon, mx.autograd, mx.nd
try:
    extra = {"onednn": bool(mx.runtime.Features().is_enabled("ONEDNN"))} \
        if pkg == "sparsym" else {}
except Exception:
    extra = {"onednn": False}


def lenet():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(20, kernel_size=5, activation="relu"),
            gluon.nn.MaxPool2D(pool_size=2, strides=2),
            gluon.nn.Conv2D(50, kernel_size=5, activation="relu"),
            gluon.nn.MaxPool2D(pool_size=2, strides=2),
            gluon.nn.Flatten(), gluon.nn.Dense(500, activation="relu"), gluon.nn.Dense(10))
    return net


def build(model):
    if model == "resnet18":
        net, batch, shape = gluon.model_zoo.vision.resnet18_v1(classes=10), 32, (3, 32, 32)
    else:
        net, batch, shape = lenet(), 64, (1, 28, 28)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    xs, ys = data(batch, shape)
    return net, batch, [nd.array(x) for x in xs], [nd.array(y) for y in ys]


for case in cases:
    model, mode = case.split("_")
    net, batch, xs, ys = build(model)
    if mode == "train":
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        tr = gluon.Trainer(net.collect_params(), "sgd",
                           {"learning_rate": 0.01, "momentum": 0.9})

        def step(i):
            with autograd.record():
                out = loss(net(xs[i % 4]), ys[i % 4])
            out.backward()
            tr.step(batch)
    else:
        def step(i):
            net(xs[i % 4])
    report(case, timed(step, nd.waitall, batch), **extra)
'''

TORCH_BODY = TIMER + r'''
import torch
from torch import nn
extra = {"threads": torch.get_num_threads()}


class Basic(nn.Module):
    """ResNet v1 basic block (Gluon's BasicBlockV1)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.down = None if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        return torch.relu(self.body(x) + r)


def resnet18():
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, c in enumerate((64, 128, 256, 512)):
        layers += [Basic(cin, c, 1 if i == 0 else 2), Basic(c, c, 1)]
        cin = c
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10))


def lenet():
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
                         nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                         nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))


for case in cases:
    model, mode = case.split("_")
    net, batch, shape = ((resnet18(), 32, (3, 32, 32)) if model == "resnet18"
                         else (lenet(), 64, (1, 28, 28)))
    xs, ys = data(batch, shape)
    xs, ys = [torch.from_numpy(x) for x in xs], [torch.from_numpy(y) for y in ys]
    if mode == "train":
        net.train()
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        loss = nn.CrossEntropyLoss()

        def step(i):
            opt.zero_grad()
            loss(net(xs[i % 4]), ys[i % 4]).backward()
            opt.step()
    else:
        net.eval()

        def step(i):
            with torch.inference_mode():
                net(xs[i % 4])
    report(case, timed(step, lambda: None, batch), **extra)
'''


def _engine_run(python, pkg, body, seconds, cases, env):
    """One fresh process of one engine: {case: record}, and the load seen around it."""
    watch = Watch()
    recs = _run(python, pkg, seconds, env=dict(env, CNN_BENCH_CASES=",".join(cases)),
                body=body)
    seen = watch.done()
    return {r["case"]: dict(r, **seen) for r in recs}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mxnet-python", default=os.path.expanduser("~/mxref/bin/python"))
    p.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON", ""),
                   help="a Python with torch installed (default: $TORCH_PYTHON; "
                        "PyTorch is skipped without it)")
    p.add_argument("--seconds", type=float, default=4.0,
                   help="minimum timed seconds per case and run")
    p.add_argument("--repeats", type=int, default=3,
                   help="interleaved rounds of fresh processes; medians are reported")
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    a = p.parse_args(argv)
    base = dict(os.environ, PYTHONPATH="")
    engines = [("sparsym", sys.executable, MX_BODY, dict(os.environ, PYTHONPATH=ROOT))]
    if os.path.exists(a.mxnet_python):
        engines.append(("mxnet", a.mxnet_python, MX_BODY, base))
    if a.torch_python and os.path.exists(a.torch_python):
        engines.append(("torch", a.torch_python, TORCH_BODY, base))
    runs = {name: [] for name, *_ in engines}
    for _ in range(a.repeats):
        for name, python, body, env in engines:
            runs[name].append(_engine_run(python, name, body, a.seconds, a.cases, env))
    for case in a.cases:
        line = {"bench": "cnn_vs_mxnet", "case": case, "repeats": a.repeats}
        for name, rs in runs.items():
            line[name] = round(_median([r[case]["samples_per_s"] for r in rs]), 1)
        if "onednn" in runs["sparsym"][0][case]:
            line["onednn"] = runs["sparsym"][0][case]["onednn"]
        for peer in ("mxnet", "torch"):
            if peer in runs:
                line["vs_" + peer] = round(line["sparsym"] / line[peer], 2)
        line.update(summary([r[case] for rs in runs.values() for r in rs]))
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()

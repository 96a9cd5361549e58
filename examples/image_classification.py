"""Image classification with a Gluon model_zoo network, hybridized, trained with momentum SGD.

    python examples/image_classification.py                          # resnet18_v1, ~20 s
    python examples/image_classification.py --model lenet --image-size 28 --batch-size 64
    python examples/image_classification.py --dataset cifar10 --epochs 10   # downloads CIFAR-10

The training loop is the one MXNet's Gluon image-classification scripts use: a model from
``gluon.model_zoo.vision`` (or a LeNet defined here), ``hybridize(static_alloc=True,
static_shape=True)``, ``DataLoader`` batches, ``autograd.record``/``backward`` and
``Trainer.step``, with accuracy tracked by ``mx.metric.Accuracy``. The default data is
synthetic, so that the example runs anywhere without a download: each class is a fixed random
image, and a sample is its class image under Gaussian noise, so accuracy shows whether the
network learns.

Prints one JSON line with the training time, samples per second and the accuracies.
"""
import argparse
import json
import time

import numpy as np

import sparsym as mx
from sparsym import autograd, gluon

nn = gluon.nn


class LeNet(gluon.HybridBlock):
    """LeNet: two conv + max-pool stages and two dense layers."""

    def __init__(self, classes=10, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential()
            self.features.add(nn.Conv2D(20, kernel_size=5, activation="relu"),
                              nn.MaxPool2D(pool_size=2, strides=2),
                              nn.Conv2D(50, kernel_size=5, activation="relu"),
                              nn.MaxPool2D(pool_size=2, strides=2),
                              nn.Flatten(),
                              nn.Dense(500, activation="relu"))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def synthetic_data(n, classes, image_size, noise, seed):
    """(images NCHW float32, labels float32): class templates under Gaussian noise."""
    rng = np.random.default_rng(seed)
    templates = np.random.default_rng(1234).normal(size=(classes, 3, image_size, image_size))
    labels = rng.integers(0, classes, size=n)
    images = templates[labels] + rng.normal(scale=noise, size=(n, 3, image_size, image_size))
    return images.astype(np.float32), labels.astype(np.float32)


def load_data(args):
    """(train dataset, validation dataset) as Gluon datasets."""
    if args.dataset == "cifar10":
        def to_nchw(img, label):
            return mx.nd.transpose(img.astype("float32"), (2, 0, 1)) / 255.0, label
        return (gluon.data.vision.CIFAR10(train=True).transform(to_nchw),
                gluon.data.vision.CIFAR10(train=False).transform(to_nchw))
    x, y = synthetic_data(args.num_train, args.classes, args.image_size, args.noise, args.seed)
    xv, yv = synthetic_data(args.num_val, args.classes, args.image_size, args.noise,
                            args.seed + 1)
    return gluon.data.ArrayDataset(x, y), gluon.data.ArrayDataset(xv, yv)


def get_net(name, classes):
    """The network ``name``: a model_zoo vision model or ``lenet``."""
    if name == "lenet":
        return LeNet(classes=classes)
    return gluon.model_zoo.vision.get_model(name, classes=classes)


def evaluate(net, loader, ctx):
    """Top-1 accuracy of ``net`` over ``loader``."""
    metric = mx.metric.Accuracy()
    for data, label in loader:
        metric.update([label.as_in_context(ctx)], [net(data.as_in_context(ctx))])
    return metric.get()[1]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", default="resnet18_v1",
                   help="a gluon.model_zoo.vision model name, or lenet")
    p.add_argument("--dataset", choices=["synthetic", "cifar10"], default="synthetic")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--image-size", type=int, default=32, help="synthetic images' side")
    p.add_argument("--num-train", type=int, default=2048, help="synthetic training samples")
    p.add_argument("--num-val", type=int, default=512, help="synthetic validation samples")
    p.add_argument("--noise", type=float, default=2.0, help="synthetic images' noise scale")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--wd", type=float, default=1e-4)
    p.add_argument("--mode", choices=["hybrid", "imperative"], default="hybrid")
    p.add_argument("--log-interval", type=int, default=0,
                   help="print a progress line every this many batches (0: never)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    mx.random.seed(args.seed)
    np.random.seed(args.seed)
    ctx = mx.cpu()
    train_set, val_set = load_data(args)
    train_loader = gluon.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                         last_batch="discard")
    val_loader = gluon.data.DataLoader(val_set, batch_size=args.batch_size)

    net = get_net(args.model, args.classes)
    net.initialize(mx.init.Xavier(magnitude=2), ctx=ctx)
    if args.mode == "hybrid":
        net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": args.lr, "momentum": args.momentum,
                             "wd": args.wd})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    metric = mx.metric.Accuracy()

    samples = 0
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        metric.reset()
        for i, (data, label) in enumerate(train_loader):
            data, label = data.as_in_context(ctx), label.as_in_context(ctx)
            with autograd.record():
                out = net(data)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(data.shape[0])
            metric.update([label], [out])
            samples += data.shape[0]
            if args.log_interval and (i + 1) % args.log_interval == 0:
                print(f"epoch {epoch} batch {i + 1}: {metric.get()[0]}={metric.get()[1]:.3f}")
    mx.nd.waitall()
    train_s = time.perf_counter() - t0
    train_acc = metric.get()[1]
    val_acc = evaluate(net, val_loader, ctx)
    print(json.dumps({"example": "image_classification", "model": args.model,
                      "mode": args.mode, "epochs": args.epochs, "samples": samples,
                      "train_s": round(train_s, 2),
                      "samples_per_s": round(samples / train_s, 1),
                      "train_acc": round(float(train_acc), 4),
                      "val_acc": round(float(val_acc), 4)}))
    return val_acc


if __name__ == "__main__":
    main()

"""Block-sparse CNN: handwriting-like digits on a mostly empty canvas, trained with Module.

    python examples/block_sparse_cnn.py            # tiny run (CI smoke test), a few seconds
    python examples/block_sparse_cnn.py --full     # block-sparse vs dense, at full size

1797 8x8 digit images (10 classes, the size of scikit-learn's ``load_digits``) are drawn
from a 5x7 bitmap font with a random rotation, scale, shear, shift and stroke strength per
image, upscaled to 16x16 and pasted at a random position of a larger empty canvas (80x80
with --full: the digit box is 4% of the canvas, about 2% of the pixels are non-zero), so
most of each image carries no information. All the randomness (digits, positions,
weights) comes from ``mx.random``: ``--seed`` reproduces a run.  Two copies of one network
are trained on the same batches from the same initial weights:

    conv 3x3xF1 -> relu -> max-pool 2 -> conv 3x3xF2 -> relu -> global max-pool -> FC 10

(F1, F2 = 16, 32 by default, 32, 64 with --full).

- dense: the convolutions are ``mx.sym.Convolution``;
- block-sparse: they are ``mx.sym.contrib.SparseBlockConvolution`` with the canvas's
  non-zero mask (and, for the second layer, the mask of the first layer's non-zero
  outputs after pooling, computed in the graph), so only the blocks around the digit
  are convolved, in training and at test time.

The convolutions have no bias (``--conv-bias`` adds them), so the canvas is zero off the
digit at every layer and the block-sparse network computes the dense network's function
exactly: the mask of layer 2 covers everything layer 1 can make non-zero.  Both train
from the same weights on the same batches; they differ only by floating-point rounding
(the sparse op sums in another order), which is what the accuracy comparison measures.

The test digits (20%, never trained on) are each placed at ``--test-placements`` random
positions, which lowers the variance of the accuracy estimate.

The two models train epoch by epoch in lockstep, so that load from other processes on a
shared machine hits both alike.  Prints per-epoch times (the median after the first
epoch, which includes the sparse op's one-off block-size and dispatch measurements) and
test accuracies of both models, and one JSON line.  The claim
checked by ``--full``: the sparse model reaches the dense model's accuracy within 1 point
and each epoch is faster.  ``--full`` (and ``--verbose``) print each model's epochs as they
finish.
"""
import argparse
import json
import time

import numpy as np
from scipy import ndimage

import sparsym as mx

# a 5x7 bitmap font, one row of 5 bits per line
GLYPHS = ["01110 10001 10011 10101 11001 10001 01110", "00100 01100 00100 00100 00100 00100 01110",
          "01110 10001 00001 00010 00100 01000 11111", "11110 00001 00001 01110 00001 00001 11110",
          "00010 00110 01010 10010 11111 00010 00010", "11111 10000 11110 00001 00001 10001 01110",
          "00110 01000 10000 11110 10001 10001 01110", "11111 00001 00010 00100 01000 01000 01000",
          "01110 10001 10001 01110 10001 10001 01110", "01110 10001 10001 01111 00001 00010 01100"]


def _uniform(lo, hi, n):
    """``n`` draws from sparsym's generator (so ``mx.random.seed`` fixes them)."""
    return mx.nd.random.uniform(lo, hi, shape=(n,), dtype="float64").asnumpy()


def load_digits(scale, n=1797):
    """(digits (N, 8*scale, 8*scale) float32 in [0, 1], labels): each a font glyph in an
    8x8 box under a random rotation, scale, shear, shift and stroke strength."""
    labels = (np.arange(n) % 10).astype(np.float32)
    glyphs = np.zeros((10, 8, 8))
    for d, g in enumerate(GLYPHS):
        glyphs[d, :7, 1:6] = [[int(b) for b in row] for row in g.split()]
    angle, zoom, shear = _uniform(-0.3, 0.3, n), _uniform(0.8, 1.1, n), _uniform(-0.2, 0.2, n)
    dy, dx, ink = _uniform(-0.8, 0.8, n), _uniform(-0.8, 0.8, n), _uniform(0.5, 1.0, n)
    imgs = np.empty((n, 8, 8), np.float32)
    centre = np.array([3.5, 3.5])
    for i in range(n):
        c, s = np.cos(angle[i]), np.sin(angle[i])
        # output pixel -> input pixel: the inverse of rotate * shear * zoom about the centre
        inv = np.linalg.inv(np.array([[c, -s], [s, c]]) @ np.array([[1, shear[i]], [0, 1]])
                            * zoom[i])
        offset = centre - inv @ (centre + [dy[i], dx[i]])
        img = ndimage.affine_transform(glyphs[int(labels[i])], inv, offset, order=1)
        imgs[i] = np.clip(img * ink[i], 0, 1)
    return imgs.repeat(scale, axis=1).repeat(scale, axis=2), labels


def place(imgs, canvas):
    """(N,1,canvas,canvas) float32 images with each digit pasted at a random position."""
    side = imgs.shape[1]
    if side > canvas:
        raise SystemExit(f"--canvas {canvas} is smaller than a digit ({side} pixels)")
    out = np.zeros((len(imgs), 1, canvas, canvas), np.float32)
    ys = np.floor(_uniform(0, canvas - side + 1, len(imgs))).astype(int)
    xs = np.floor(_uniform(0, canvas - side + 1, len(imgs))).astype(int)
    for i, (img, y, x) in enumerate(zip(imgs, ys, xs)):
        out[i, 0, y:y + side, x:x + side] = img
    return out


def build(sparse, filters=(16, 32), conv_bias=False):
    """The classifier; with ``sparse`` the convolutions are block-sparse."""
    data = mx.sym.var("data")
    mask = mx.sym.var("mask")

    def conv(x, m, f, name):
        kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=f, name=name, no_bias=not conv_bias)
        if sparse:
            return mx.sym.contrib.SparseBlockConvolution(x, m, **kw)
        return mx.sym.Convolution(x, **kw)

    h = mx.sym.Activation(conv(data, mask, filters[0], "conv1"), act_type="relu")
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max")
    # the second layer's non-zero inputs: conv1's active outputs (the 3x3 dilation of the
    # mask) max-pooled by 2, i.e. a 4x4 / stride 2 / pad 1 max-pool of the mask
    mask2 = mx.sym.Pooling(mask, kernel=(4, 4), stride=(2, 2), pad=(1, 1), pool_type="max")
    h = mx.sym.Activation(conv(h, mask2, filters[1], "conv2"), act_type="relu")
    h = mx.sym.Pooling(h, kernel=(1, 1), global_pool=True, pool_type="max")
    h = mx.sym.FullyConnected(mx.sym.Flatten(h), num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def _iter(x, y, batch, with_mask):
    data = {"data": x}
    if with_mask:
        data["mask"] = (x > 0).astype(np.float32)
    return mx.io.NDArrayIter(data, {"softmax_label": y}, batch, last_batch_handle="discard")


def make_module(sparse, it, args, init_params=None):
    """A bound Module with initialised parameters and an Adam optimizer."""
    names = ("data", "mask") if sparse else ("data",)
    mod = mx.mod.Module(build(sparse, args.filters, args.conv_bias), data_names=names,
                        label_names=("softmax_label",), context=mx.cpu())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    if init_params is None:
        mod.init_params(mx.init.Xavier(magnitude=2.0))
    else:
        mod.init_params(arg_params=init_params[0], aux_params=init_params[1])
    mod.init_optimizer(optimizer="adam", optimizer_params={"learning_rate": args.lr})
    return mod


def train_both(train_digits, test_xy, args):
    """Train the dense and the sparse model epoch by epoch in lockstep (so that load from
    other processes hits both alike) on the same batches; every epoch places the training
    digits at new random positions (augmentation).  Returns
    {name: (test accuracy, per-epoch seconds)}."""
    imgs, y = train_digits
    x = place(imgs, args.canvas)
    dense = make_module(False, _iter(x, y, args.batch_size, False), args)
    sparse = make_module(True, _iter(x, y, args.batch_size, True), args, dense.get_params())
    times = {"dense": [], "sparse": []}
    for epoch in range(args.epochs):
        x = place(imgs, args.canvas)
        for name, mod in (("dense", dense), ("sparse", sparse)):
            it = _iter(x, y, args.batch_size, name == "sparse")
            metric = mx.metric.Accuracy()
            t = time.perf_counter()
            for batch in it:
                mod.forward_backward(batch)
                mod.update()
                if args.verbose:
                    mod.update_metric(metric, batch.label)
            times[name].append(time.perf_counter() - t)
            if args.verbose:
                print(f"epoch {epoch + 1}/{args.epochs} {name}: train accuracy "
                      f"{metric.get()[1]:.4f}, {times[name][-1]:.2f} s", flush=True)
            elif args.full:
                print(f"epoch {epoch + 1}/{args.epochs} {name}: {times[name][-1]:.2f} s",
                      flush=True)
    out = {}
    for name, mod in (("dense", dense), ("sparse", sparse)):
        test = _iter(*test_xy, args.batch_size, name == "sparse")
        out[name] = (dict(mod.score(test, mx.metric.Accuracy()))["accuracy"], times[name])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Block-sparse vs dense CNN on digits placed on an "
                                 "empty canvas.")
    ap.add_argument("--full", action="store_true",
                    help="the documented run: 80x80 canvas, all digits, 32/64 filters, "
                    "16 epochs, 4 placements per test digit")
    ap.add_argument("--canvas", type=int, default=32, help="canvas side in pixels")
    ap.add_argument("--scale", type=int, default=1, help="digit upscaling (8 -> 8*scale)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=400, help="use only this many images")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--test-placements", type=int, default=1,
                    help="random positions per test digit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verbose", action="store_true", help="per-epoch training accuracy")
    ap.add_argument("--filters", type=lambda v: tuple(int(f) for f in v.split(",")),
                    default=(16, 32), help="filters of the two convolutions, e.g. 16,32")
    ap.add_argument("--conv-bias", action="store_true",
                    help="give the convolutions biases (then the two models differ off the "
                    "digit: the sparse op outputs 0 there, the dense conv its bias)")
    args = ap.parse_args(argv)
    if args.full:
        args.canvas, args.scale, args.epochs, args.limit = 80, 2, 16, 0
        args.test_placements, args.filters = 4, (32, 64)
    mx.random.seed(args.seed)  # every draw below (data, positions, weights) follows it
    imgs, labels = load_digits(args.scale, args.limit or 1797)
    n_train = int(0.8 * len(imgs))
    reps = args.test_placements
    test_xy = (place(np.tile(imgs[n_train:], (reps, 1, 1)), args.canvas),
               np.tile(labels[n_train:], reps))
    if args.full:
        print(f"{len(imgs)} digits on a {args.canvas}x{args.canvas} canvas, {args.epochs} "
              f"epochs of the dense and the block-sparse model", flush=True)
    density = float((test_xy[0] > 0).mean())
    res = train_both((imgs[:n_train], labels[:n_train]), test_xy, args)
    (acc_d, ep_d), (acc_s, ep_s) = res["dense"], res["sparse"]
    # the first epoch includes the sparse op's one-off dispatch / block-size measurements
    later = slice(1, None) if args.epochs > 1 else slice(None)
    res = {"example": "block_sparse_cnn", "canvas": args.canvas, "pixel_density": density,
           "epochs": args.epochs, "dense_acc": acc_d, "sparse_acc": acc_s,
           "dense_epoch_s": float(np.median(ep_d[later])),
           "sparse_epoch_s": float(np.median(ep_s[later])),
           "sparse_first_epoch_s": ep_s[0]}
    res["epoch_speedup"] = res["dense_epoch_s"] / res["sparse_epoch_s"]
    print(f"dense : test accuracy {acc_d:.4f}, {res['dense_epoch_s']:.2f} s/epoch")
    print(f"sparse: test accuracy {acc_s:.4f}, {res['sparse_epoch_s']:.2f} s/epoch "
          f"({res['epoch_speedup']:.2f}x faster, pixel density {density:.3f})")
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()

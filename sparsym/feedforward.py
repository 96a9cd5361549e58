"""FeedForward: MXNet's deprecated model API (``mx.model.FeedForward``), run by a Module.

``fit`` trains a :class:`~sparsym.module.Module` built from the symbol and the data's
names; ``predict`` and ``score`` bind one for inference. Arrays given as numpy/NDArray are
wrapped in NDArrayIter as MXNet does (``numpy_batch_size``; training shuffles and rolls
over the last batch).
"""
from __future__ import annotations

import logging
import warnings

import numpy as np

from . import metric
from .base import MXNetError
from .context import Context, cpu
from .initializer import Uniform
from .io.io import DataIter, NDArrayIter
from .io.wrappers import ResizeIter
from .ndarray.ndarray import NDArray

__all__ = ["FeedForward", "DataParallelExecutorManager"]


def _as_numpy(x):
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


class DataParallelExecutorManager:
    """MXNet's legacy executor manager (used by FeedForward before Module existed).

    Not provided: FeedForward runs on :class:`sparsym.module.Module`, whose
    ``DataParallelExecutorGroup`` splits batches over devices.
    """

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("mx.model.DataParallelExecutorManager is not provided; use "
                                  "mx.mod.Module (its DataParallelExecutorGroup splits batches "
                                  "over contexts)")


class FeedForward:
    """A feed-forward model trained by ``fit`` (deprecated in MXNet: use ``mx.mod.Module``).

    Parameters
    ----------
    symbol : Symbol
        The network (or a callable ``sym_gen(bucket_key)``, called with the training
        data's ``default_bucket_key``).
    ctx : Context or list of Context, default cpu()
    num_epoch : int
        Epochs ``fit`` trains for.
    epoch_size : int, optional
        Batches per epoch (the iterator carries on across epochs).
    optimizer : str or Optimizer, default 'sgd'
        A name is created with ``rescale_grad=1/batch_size`` and the extra ``**kwargs``.
    initializer : Initializer, default Uniform(0.01)
    numpy_batch_size : int, default 128
        Batch size of the iterators made from arrays.
    arg_params, aux_params : dict of str to NDArray, optional
        Initial (or trained) parameters.
    allow_extra_params : bool, default False
        Drop ``arg_params``/``aux_params`` the symbol does not use instead of raising.
    begin_epoch : int, default 0
    **kwargs
        Optimizer parameters (``learning_rate``, ``momentum``, ``wd``...).

    Examples
    --------
    >>> import warnings, numpy as np, sparsym as mx
    >>> x = np.random.RandomState(0).randn(60, 3).astype('float32')
    >>> y = (x[:, 0] > 0).astype('float32')
    >>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2),
    ...                            name='softmax')
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     model = mx.model.FeedForward(net, num_epoch=10, numpy_batch_size=20,
    ...                                  learning_rate=0.5)
    >>> model.fit(x, y)
    >>> model.predict(x).shape
    (60, 2)
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=Uniform(0.01), numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn("mxnet.model.FeedForward has been deprecated. Please use "
                      "mxnet.mod.Module instead.", DeprecationWarning, stacklevel=2)
        from .symbol import Symbol
        if isinstance(symbol, Symbol):
            self.symbol, self.sym_gen = symbol, None
        elif callable(symbol):
            self.symbol, self.sym_gen = None, symbol
        else:
            raise TypeError(f"FeedForward: symbol must be a Symbol or a callable, got "
                            f"{type(symbol).__name__}")
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = list(ctx)
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = dict(kwargs)
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self._pred_mod = None
        if self.symbol is not None:
            self._check_arguments()

    def _check_arguments(self):
        """Symbol arguments must be unique; params the symbol does not use are dropped
        (``allow_extra_params``) or refused."""
        args = self.symbol.list_arguments()
        if len(set(args)) != len(args):
            dup = sorted({a for a in args if args.count(a) > 1})
            raise MXNetError(f"FeedForward: the symbol has duplicated argument names {dup}")
        for attr, names in (("arg_params", set(args)),
                            ("aux_params", set(self.symbol.list_auxiliary_states()))):
            params = getattr(self, attr)
            if not params:
                continue
            extra = sorted(set(params) - names)
            if extra and not self.allow_extra_params:
                raise ValueError(f"FeedForward: {attr} has names the symbol does not use: "
                                 f"{extra} (pass allow_extra_params=True to drop them)")
            setattr(self, attr, {k: v for k, v in params.items() if k in names})

    # ------------------------------------------------------------------ iterators
    def _init_iter(self, X, y, is_train):
        """A DataIter for ``X`` (arrays are wrapped in NDArrayIter as MXNet does)."""
        if isinstance(X, (np.ndarray, NDArray)):
            if y is None:
                if is_train:
                    raise ValueError("y must be specified when X is numpy.ndarray")
                y = np.zeros(X.shape[0])
            y = _as_numpy(y)
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.ravel()
            if y.ndim != 1:
                raise ValueError(f"Label must be 1D or 2D (with 2nd dimension being 1), got "
                                 f"shape {y.shape}")
            if X.shape[0] != y.shape[0]:
                raise ValueError(f"The numbers of data points ({X.shape[0]}) and labels "
                                 f"({y.shape[0]}) not equal")
            batch_size = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return NDArrayIter(X, y, batch_size, shuffle=True,
                                   last_batch_handle="roll_over")
            return NDArrayIter(X, y, batch_size, shuffle=False)
        if not isinstance(X, DataIter):
            raise TypeError("X must be DataIter, NDArray or numpy.ndarray")
        return X

    def _init_eval_iter(self, eval_data):
        if eval_data is None:
            return None
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            if eval_data[0] is None:
                return None
            if eval_data[1] is None and isinstance(eval_data[0], DataIter):
                return eval_data[0]
            data = eval_data[0]
            label = eval_data[1]
            if isinstance(data, (list, tuple)):
                data = np.asarray(data)
            if isinstance(label, (list, tuple)):
                label = np.asarray(label)
            return self._init_iter(data, label, is_train=True)
        if isinstance(eval_data, DataIter):
            return eval_data
        raise TypeError("Eval data must be DataIter, or NDArray/numpy.ndarray/list pair "
                        "(i.e. tuple/list of length 2)")

    # ------------------------------------------------------------------ modules
    def _module(self, data, for_training):
        from .module import Module
        data_names = [d[0] for d in data.provide_data]
        label_names = [d[0] for d in (data.provide_label or [])]
        label_names = [n for n in label_names if n in self.symbol.list_arguments()]
        return Module(self.symbol, data_names=data_names, label_names=label_names or None,
                      context=self.ctx if for_training else self.ctx[:1])

    def _predictor(self, data):
        mod = self._module(data, for_training=False)
        mod.bind(data_shapes=data.provide_data, label_shapes=None, for_training=False)
        mod.set_params(self.arg_params or {}, self.aux_params or {}, allow_missing=False)
        return mod

    # ------------------------------------------------------------------ API
    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """Outputs (numpy) over ``X``, without the padding rows; with ``return_data``
        also the data and labels: ``(outputs, data, label)``."""
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        mod = self._predictor(X)
        outs, datas, labels = None, None, None
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            mod.forward(batch, is_train=False)
            real = X.batch_size - (batch.pad or 0)
            got = [o.asnumpy()[:real] for o in mod.get_outputs()]
            outs = [[] for _ in got] if outs is None else outs
            for acc, o in zip(outs, got):
                acc.append(o)
            if return_data:
                datas = [[] for _ in batch.data] if datas is None else datas
                labels = [[] for _ in batch.label or []] if labels is None else labels
                for acc, x in zip(datas, batch.data):
                    acc.append(x.asnumpy()[:real])
                for acc, x in zip(labels, batch.label or []):
                    acc.append(x.asnumpy()[:real])
        if outs is None:
            raise MXNetError("FeedForward.predict: the iterator gave no batch")

        def merged(parts):
            arrays = [np.concatenate(p) for p in parts]
            return arrays[0] if len(arrays) == 1 else arrays

        if return_data:
            return merged(outs), merged(datas), merged(labels)
        return merged(outs)

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None, reset=True):
        """The value of ``eval_metric`` over ``X``."""
        from .callback import BatchEndParam
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        mod = self._predictor(X)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            mod.forward(batch, is_train=False)
            eval_metric.update(batch.label, mod.get_outputs())
            if batch_end_callback is not None:
                param = BatchEndParam(epoch=0, nbatch=i, eval_metric=eval_metric,
                                      locals=locals())
                for cb in (batch_end_callback if isinstance(batch_end_callback, list)
                           else [batch_end_callback]):
                    cb(param)
        return eval_metric.get()[1]

    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        """Train for ``num_epoch`` epochs from ``begin_epoch`` (see the class docstring)."""
        from . import optimizer as opt
        from .callback import LogValidationMetricsCallback
        if self.num_epoch is None:
            raise MXNetError("FeedForward.fit: num_epoch must be given")
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.sym_gen is not None:
            self.symbol = self.sym_gen(data.default_bucket_key)
            self._check_arguments()
        if self.epoch_size is not None:
            data = ResizeIter(data, self.epoch_size, reset_internal=False)
        mod = self._module(data, for_training=True)
        if logger is not None:
            mod.logger = logger
        optimizer = self.optimizer
        optimizer_params = ()
        if isinstance(optimizer, str):
            batch_size = data.batch_size
            if isinstance(kvstore, str) and "dist" in kvstore and "_async" not in kvstore:
                from .kvstore import create
                kvstore = create(kvstore)
            if not isinstance(kvstore, str) and kvstore is not None and \
                    "dist" in kvstore.type and "_async" not in kvstore.type:
                batch_size *= kvstore.num_workers
            optimizer_params = dict(self.kwargs, rescale_grad=1.0 / batch_size)
        elif not isinstance(optimizer, opt.Optimizer):
            raise TypeError(f"FeedForward: optimizer must be a str or an Optimizer, got "
                            f"{type(optimizer).__name__}")
        mod.fit(data, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params,
                eval_end_callback=eval_end_callback or LogValidationMetricsCallback(),
                eval_batch_end_callback=eval_batch_end_callback,
                initializer=self.initializer, arg_params=self.arg_params,
                aux_params=self.aux_params, allow_missing=True,
                begin_epoch=self.begin_epoch, num_epoch=self.num_epoch, monitor=monitor)
        self.arg_params, self.aux_params = mod.get_params()

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` (``epoch`` defaults to
        ``num_epoch``)."""
        from .checkpoint import save_checkpoint
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise MXNetError("FeedForward.save: give epoch (num_epoch is not set)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params or {},
                        self.aux_params or {}, remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward from a checkpoint, ready to predict or to continue training from
        ``epoch``."""
        from .checkpoint import load_checkpoint
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
               initializer=Uniform(0.01), eval_data=None, eval_metric="acc",
               epoch_end_callback=None, batch_end_callback=None, kvstore="local", logger=None,
               work_load_list=None, eval_end_callback=None, eval_batch_end_callback=None,
               **kwargs):
        """Construct a FeedForward and ``fit`` it in one call."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger or logging, work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model

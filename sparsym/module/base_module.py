"""BaseModule: the training loop (fit), score, predict, shared by every module."""
from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from .. import metric as metric_mod
from .. import storage as st
from ..base import MXNetError
from ..callback import BatchEndParam, progress_bar_callback
from ..initializer import Uniform
from ..ndarray.ndarray import wrap
from ..ops.core.registry import run_raw

__all__ = ["BaseModule"]


def _as_list(obj):
    if obj is None:
        return []
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _check_input_names(symbol, names, typename, throw):
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        msg = (f"\033[91mYou created Module with Module(..., {typename}_names={names}) but input "
               f"with name '{name}' is not found in symbol.list_arguments(). Did you mean one "
               f"of:\n\t" + "\n\t".join(a for a in args if not a.endswith(("_weight", "_bias",
                                                                             "_gamma", "_beta")))
               + "\033[0m").replace("\033[91m", "").replace("\033[0m", "")
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def _drop_pad(raw, pad):
    """Rows of a batch output without the ``pad`` padding rows at the end."""
    if not pad:
        return raw
    n = raw.shape[0] - pad
    if isinstance(raw, st.CSR):
        return run_raw("slice", [raw], begin=(0,), end=(n,))[0]
    if isinstance(raw, st.RSP):
        return st.cast_raw(st.todense(raw)[:n], "row_sparse")
    return raw[:n]


def _num_batches(it):
    """Batches per epoch when an iterator knows it (NDArrayIter), else None."""
    n, bs = getattr(it, "num_data", None), getattr(it, "batch_size", None)
    mode = getattr(it, "last_batch_handle", None)
    if not n or not bs or mode not in ("pad", "discard"):
        return None
    return -(-n // bs) if mode == "pad" else n // bs


class _StoredIO:
    """Input/output names and shapes of a module that keeps them itself (not by delegation)."""

    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes


class BaseModule:
    """The high-level training and inference loops over an abstract module."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # ------------------------------------------------------------------ high level
    def forward_backward(self, data_batch):
        """forward(is_train=True) then backward()."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run ``eval_metric`` over ``eval_data``; returns its name/value pairs."""
        if not (self.binded and self.params_initialized):
            raise MXNetError("score requires a bound module with initialized parameters")
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric_mod.EvalMetric):
            eval_metric = metric_mod.create(eval_metric)
        eval_metric.reset()
        actual = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            self.update_metric(eval_metric, batch.label)
            if batch_end_callback is not None:
                p = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                  locals=locals())
                for cb in _as_list(batch_end_callback):
                    cb(p)
            actual = nbatch + 1
        if score_end_callback:
            p = BatchEndParam(epoch=epoch, nbatch=actual, eval_metric=eval_metric,
                              locals=locals())
            for cb in _as_list(score_end_callback):
                cb(p)
        return eval_metric.get_global_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield (outputs, nbatch, batch) with the padding removed."""
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            outputs = [wrap(_drop_pad(o._raw, pad), o.context) for o in self.get_outputs()]
            yield outputs, nbatch, batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Outputs over ``eval_data`` (an iterator, or an array wrapped in NDArrayIter)."""
        from ..io.io import NDArrayIter
        from ..ndarray.ndarray import NDArray
        if isinstance(eval_data, (NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = wrap(eval_data)
            eval_data = NDArrayIter(eval_data, batch_size=self.data_shapes[0].shape[0])
        outs = [[o.copy() for o in out] for out, _, _ in
                self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not outs:
            return outs
        if merge_batches:
            n = len(outs[0])
            for o in outs:
                if len(o) != n:
                    raise MXNetError("Cannot merge batches, as num of outputs is not the same in "
                                     "mini-batches. Maybe bucketing is used?")
            merged = [wrap(np.concatenate([o[i].asnumpy() for o in outs], axis=0))
                      for i in range(n)]
            if n == 1 and not always_output_list:
                return merged[0]
            return merged
        return outs

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None, progress_bar=None):
        """Train for ``num_epoch`` epochs (MXNet 1.9's loop and callbacks).

        ``progress_bar``: None shows a tqdm bar when stderr is a terminal; True/False forces.
        """
        if num_epoch is None:
            raise MXNetError("please specify number of epochs")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric_mod.EvalMetric):
            eval_metric = metric_mod.create(eval_metric)
        bar = progress_bar_callback(progress_bar)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            self._fit_epoch_begin(epoch, train_data)
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            next_batch = next(data_iter, None)
            end_of_batch = next_batch is None
            eval_name_vals = eval_metric.get_global_name_value()
            if not end_of_batch:
                # MXNet skips this for the first batch; pulling its rows is what it needs
                self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
            if bar is not None:
                bar.start(epoch, _num_batches(train_data))
            while not end_of_batch:
                batch = next_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                if isinstance(batch, list):
                    self.update_metric(eval_metric, [b.label for b in batch], pre_sliced=True)
                else:
                    self.update_metric(eval_metric, batch.label)
                next_batch = next(data_iter, None)
                if next_batch is not None:
                    self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
                else:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    # before batch-end callbacks (Speedometer) may reset the local stats
                    eval_name_vals = eval_metric.get_global_name_value()
                if bar is not None:
                    bar.step(eval_metric)
                if batch_end_callback is not None:
                    p = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                      locals=locals())
                    for cb in _as_list(batch_end_callback):
                        cb(p)
                nbatch += 1
            if bar is not None:
                bar.close()
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            # sync aux params across devices
            arg_p, aux_p = self.get_params()
            self.set_params(arg_p, aux_p)
            if epoch_end_callback is not None:
                for cb in _as_list(epoch_end_callback):
                    cb(epoch, self.symbol, arg_p, aux_p)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    def _fit_epoch_begin(self, epoch, train_data):
        """Hook of ``fit`` before each epoch's first batch (SVRGModule's full gradients)."""

    # ------------------------------------------------------------------ properties
    @property
    def symbol(self):
        return self._symbol

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Pull row_sparse rows a batch needs (with a kvstore); see Module.prepare."""
        if sparse_row_id_fn is not None and not getattr(self, "_kvstore", None):
            logging.getLogger("sparsym").warning(
                "sparse_row_id_fn is not invoked for BaseModule.")

    def save_params(self, fname):
        """Save parameters as ``arg:name`` / ``aux:name`` (MXNet's .params format)."""
        from ..ndarray.utils import save
        arg_params, aux_params = self.get_params()
        d = {("arg:%s" % k): v.as_in_context(v.context) for k, v in arg_params.items()}
        d.update({("aux:%s" % k): v for k, v in aux_params.items()})
        save(fname, d)

    def load_params(self, fname):
        """Load parameters saved by :meth:`save_params` (or by MXNet)."""
        from ..ndarray.utils import load
        arg_params, aux_params = {}, {}
        for k, v in load(fname).items():
            tp, name = k.split(":", 1)
            if tp == "arg":
                arg_params[name] = v
            elif tp == "aux":
                aux_params[name] = v
            else:
                raise ValueError(f"Invalid param file {fname}")
        self.set_params(arg_params, aux_params)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter and aux state values (MXNet's ``set_params``).

        Without ``allow_missing`` every parameter must be given (``init_params`` checks);
        with it, the given values are copied into the bound arrays and the rest kept.
        """
        if not allow_missing or not hasattr(self, "_assign_params"):
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params call "
                          "ignored.", stacklevel=2)
            return
        self._assign_params(arg_params, aux_params, allow_missing=allow_missing,
                            force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def install_monitor(self, mon):
        raise NotImplementedError()

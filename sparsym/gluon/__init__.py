"""Gluon: MXNet 1.x's imperative front end (Blocks, Parameters, Trainer, layers, data).

The sparse parts of Gluon, as worked examples: a gradient that touches only the rows a
batch uses, parameters stored row-sparse, and hybridized blocks that take csr inputs.

Embeddings with ``sparse_grad=True`` give a ``row_sparse`` weight gradient holding only the
looked-up rows; the Trainer's optimizers then update those rows only (lazily):

>>> import sparsym as mx
>>> from sparsym import autograd, gluon
>>> embed = gluon.nn.Embedding(1000, 4, sparse_grad=True)
>>> embed.initialize()
>>> trainer = gluon.Trainer(embed.collect_params(), "sgd", {"learning_rate": 0.1})
>>> with autograd.record():
...     loss = embed(mx.nd.array([[3, 7], [7, 42]])).sum()
>>> loss.backward()
>>> grad = embed.weight.grad()
>>> grad.stype, grad.indices.asnumpy().tolist()
('row_sparse', [3, 7, 42])
>>> trainer.step(batch_size=2)

A parameter stored ``row_sparse`` (``stype="row_sparse"``, as a huge weight kept in a
KVStore would be) is read with ``row_sparse_data(row_ids)``, the rows a batch needs, inside
a (non-hybrid) Block once a Trainer holds it (it pulls those rows from its KVStore); with
``grad_stype="row_sparse"`` its gradient stays sparse too:

>>> import numpy as np
>>> class SparseLinear(gluon.Block):
...     def __init__(self, **kwargs):
...         super().__init__(**kwargs)
...         with self.name_scope():
...             self.weight = self.params.get("weight", shape=(1000, 2),
...                                           stype="row_sparse", grad_stype="row_sparse")
...     def forward(self, x):
...         rows = mx.nd.array(np.unique(x.indices.asnumpy()))
...         return mx.nd.sparse.dot(x, self.weight.row_sparse_data(rows))
>>> x = mx.nd.sparse.csr_matrix((np.ones(3, "float32"), np.array([1, 5, 900]),
...                              np.array([0, 2, 3])), shape=(2, 1000))
>>> net = SparseLinear()
>>> net.initialize()
>>> trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
>>> with autograd.record():
...     out = net(x)
>>> out.backward()
>>> net.weight.grad().stype, net.weight.grad().indices.asnumpy().tolist()
('row_sparse', [1, 5, 900])
>>> trainer.step(batch_size=2)              # Adam updates rows 1, 5 and 900 only

A HybridBlock takes csr inputs before and after ``hybridize()``: the traced graph keeps the
storage types (``F.sparse.dot`` of a csr batch and a dense weight, whose gradient is
``row_sparse`` with ``grad_stype="row_sparse"``):

>>> class Linear(gluon.HybridBlock):
...     def __init__(self, **kwargs):
...         super().__init__(**kwargs)
...         with self.name_scope():
...             self.weight = self.params.get("weight", shape=(1000, 2),
...                                           grad_stype="row_sparse")
...     def hybrid_forward(self, F, x, weight):
...         return F.sparse.dot(x, weight)
>>> lin = Linear()
>>> lin.initialize()
>>> lin.hybridize()
>>> with autograd.record():
...     y = lin(x)
>>> y.backward()
>>> y.shape, lin.weight.grad().stype
((2, 2), 'row_sparse')
"""
from . import parameter  # noqa: F401
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict  # noqa
from . import block  # noqa: F401
from .block import Block, HybridBlock  # noqa: F401
from .symbol_block import SymbolBlock  # noqa: F401
from . import nn  # noqa: F401
from . import utils  # noqa: F401
from . import loss  # noqa: F401
from . import data  # noqa: F401
from . import rnn  # noqa: F401
from . import contrib  # noqa: F401
from .trainer import Trainer  # noqa: F401
from . import model_zoo  # noqa: F401
from . import summary as _summary

block.install(summary=_summary.summary, SymbolBlock=SymbolBlock)
from ..ndarray.ndarray import NDArray as _NDArray
from ..symbol import Symbol as _Symbol

# what a Block takes as its inputs (MXNet's gluon.tensor_types)
tensor_types = (_Symbol, _NDArray)

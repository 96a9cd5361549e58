"""``mx.onnx``: export a Symbol and its parameters (or an exported HybridBlock) to ONNX.

Needs the ``onnx`` package (``pip install sparsym[onnx]``). The graph is written at opset
17 for inference: loss heads become their prediction (SoftmaxOutput a softmax,
LogisticRegressionOutput a sigmoid, the regression outputs the identity) and their label
inputs are dropped, Dropout is the identity, parameter-only subgraphs (the fused RNN's
packed parameters) are folded into initializers. Sparse (csr, row_sparse) inputs and
parameters are exported dense: ONNX runtimes take dense tensors, so a csr input of the
exported model is fed as a dense array of the same shape.

Reading models back: :mod:`sparsym.contrib.onnx` (``import_model``, ``import_to_gluon``).
"""
from __future__ import annotations

import logging

import numpy as np

from ._graph import OPSET, build_graph, require_onnx, translations
from ._tables import ExportError

__all__ = ["export_model", "get_operator_support", "ExportError"]


def export_model(sym, params, in_shapes=None, in_types=np.float32,
                 onnx_file_path="model.onnx", verbose=False, dynamic=False,
                 dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None):
    """Export a model to an ONNX file (MXNet 1.9.1's ``mx.onnx.export_model``).

    Parameters
    ----------
    sym : str or Symbol
        The graph, or the path of its ``-symbol.json`` file.
    params : str, dict or [dict, dict]
        The parameters: a ``.params`` file path, a dict name -> NDArray (arguments and
        auxiliary states together), or ``[arg_params, aux_params]``.
    in_shapes : list of tuple
        One shape per graph input (the variables that are neither parameters nor labels of
        a loss head), in ``sym.list_inputs()`` order, e.g. ``[(1, 3, 224, 224)]``.
    in_types : dtype or list of dtype, default float32
        The inputs' dtypes.
    onnx_file_path : str, default 'model.onnx'
        Where to write the model.
    verbose : bool
        Log each node as it is converted.
    dynamic : bool
        Make every input dimension symbolic (a dynamic batch size, for one), or as
        ``dynamic_input_shapes`` says; output dimensions become symbolic too.
    dynamic_input_shapes : list of tuple, optional
        With ``dynamic=True``: one shape per input, ``None`` for a symbolic dimension,
        e.g. ``[(None, 3, 224, 224)]``.
    run_shape_inference : bool
        Run ONNX's shape inference on the result (the model is kept as it is when that
        fails).
    input_type, input_shape :
        The earlier names of ``in_types`` and ``in_shapes``.

    Returns
    -------
    str
        ``onnx_file_path``.

    Raises
    ------
    UnsupportedFeatureError
        For an operator without an ONNX translation (the message names it and its node).
    ExportError
        For an operator setting ONNX cannot express (a channels-last layout...).

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsym as mx
    >>> net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    >>> params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    >>> path = os.path.join(tempfile.mkdtemp(), "fc.onnx")
    >>> mx.onnx.export_model(net, params, [(1, 3)], onnx_file_path=path) == path
    True
    """
    onnx = require_onnx()
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if isinstance(sym, str) != isinstance(params, str) and isinstance(sym, str):
        raise ValueError("Input sym and params should either be files or objects")
    model = build_graph(sym, params, in_shapes, in_types, dynamic, dynamic_input_shapes,
                        verbose)
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - MXNet keeps the model when inference fails
            logging.info("Shape inference failed, original export is kept.")
    with open(onnx_file_path, "wb") as f:
        f.write(model.SerializeToString())
    logging.info("Input shape of the model %s ", in_shapes)
    logging.info("Exported ONNX file %s saved to disk", onnx_file_path)
    return onnx_file_path


def get_operator_support(opset_version=None):
    """The sorted names of the MXNet operators :func:`export_model` translates.

    Parameters
    ----------
    opset_version : int, optional
        Accepted for MXNet's signature; sparsym writes opset 17 and needs at least that.
    """
    if opset_version is not None and int(opset_version) < OPSET:
        return []
    return sorted(translations())

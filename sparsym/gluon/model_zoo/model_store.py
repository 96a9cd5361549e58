"""Pretrained parameter files of the model zoo (``mx.gluon.model_zoo.model_store``).

sparsym downloads nothing: a pretrained model loads MXNet's ``<name>-<hash>.params`` file
from ``root`` when it is there (copy it from a machine with MXNet's cache, ``~/.mxnet/models``),
and otherwise raises an error that says which file to put where.
"""
from __future__ import annotations

import glob
import os

from ...base import MXNetError, data_dir

__all__ = ["get_model_file", "purge", "load_pretrained"]


def _default_root():
    return os.path.join(data_dir(), "models")


def get_model_file(name, root=None):
    """The local parameter file of the pretrained model ``name``.

    Parameters
    ----------
    name : str
        MXNet's model-store name, e.g. ``'resnet18_v1'`` or ``'mobilenet0.25'``.
    root : str, default ``$MXNET_HOME/models``
        Folder holding MXNet's pretrained files.

    Returns
    -------
    str
        ``root/<name>-<hash>.params`` (or ``root/<name>.params``).

    Raises
    ------
    MXNetError
        When no such file is in ``root``: sparsym does not download.
    """
    root = os.path.expanduser(_default_root() if root is None else root)
    exact = os.path.join(root, name + ".params")
    found = sorted(glob.glob(os.path.join(glob.escape(root), glob.escape(name) + "-*.params")))
    if os.path.isfile(exact):
        return exact
    if found:
        return found[0]
    raise MXNetError(
        f"pretrained model '{name}': no parameter file {name}-<hash>.params in {root}. sparsym "
        "does not download; copy MXNet's file there (MXNet keeps it in ~/.mxnet/models) or "
        "build the model without pretrained=True and call load_parameters() on a local file")


def purge(root=None):
    """Delete every ``.params`` file in ``root`` (default ``$MXNET_HOME/models``)."""
    root = os.path.expanduser(_default_root() if root is None else root)
    for path in glob.glob(os.path.join(glob.escape(root), "*.params")):
        os.remove(path)


def load_pretrained(net, name, pretrained, ctx, root):
    """``net`` with MXNet's pretrained parameters ``name`` loaded when ``pretrained``."""
    if pretrained:
        net.load_parameters(get_model_file(name, root=root), ctx=ctx)
    return net

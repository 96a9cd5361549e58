"""Pretrained parameter files of the model zoo (``mx.gluon.model_zoo.model_store``).

sparsym downloads nothing: a pretrained model loads MXNet's ``<name>-<hash>.params`` file
from ``root`` when it is there (copy it from a machine with MXNet's cache, ``~/.mxnet/models``),
and otherwise raises an error that says which file to put where.
"""
from __future__ import annotations

import glob
import os

from ...base import MXNetError, data_dir
from ..utils import check_sha1

__all__ = ["get_model_file", "purge", "load_pretrained"]

# SHA-1 of MXNet 1.9.1's pretrained files, by model name. Client libraries (GluonNLP)
# register their own models here, as with MXNet.
_model_sha1 = {
    "alexnet": "44335d1f0046b328243b32a26a4fbd62d9057b45",
    "densenet121": "f27dbf2dbd5ce9a80b102d89c7483342cd33cb31",
    "densenet161": "b6c8a95717e3e761bd88d145f4d0a214aaa515dc",
    "densenet169": "2603f878403c6aa5a71a124c4a3307143d6820e9",
    "densenet201": "1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb",
    "inceptionv3": "ed47ec45a937b656fcc94dabde85495bbef5ba1f",
    "mobilenet0.25": "9f83e440996887baf91a6aff1cccc1c903a64274",
    "mobilenet0.5": "8e9d539cc66aa5efa71c4b6af983b936ab8701c3",
    "mobilenet0.75": "529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2",
    "mobilenet1.0": "6b8c5106c730e8750bcd82ceb75220a3351157cd",
    "mobilenetv2_1.0": "36da4ff1867abccd32b29592d79fc753bca5a215",
    "mobilenetv2_0.75": "e2be7b72a79fe4a750d1dd415afedf01c3ea818d",
    "mobilenetv2_0.5": "aabd26cd335379fcb72ae6c8fac45a70eab11785",
    "mobilenetv2_0.25": "ae8f9392789b04822cbb1d98c27283fc5f8aa0a7",
    "resnet18_v1": "a0666292f0a30ff61f857b0b66efc0228eb6a54b",
    "resnet34_v1": "48216ba99a8b1005d75c0f3a0c422301a0473233",
    "resnet50_v1": "0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce",
    "resnet101_v1": "d988c13d6159779e907140a638c56f229634cb02",
    "resnet152_v1": "671c637a14387ab9e2654eafd0d493d86b1c8579",
    "resnet18_v2": "a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657",
    "resnet34_v2": "9d6b80bbc35169de6b6edecffdd6047c56fdd322",
    "resnet50_v2": "ecdde35339c1aadbec4f547857078e734a76fb49",
    "resnet101_v2": "18e93e4f48947e002547f50eabbcc9c83e516aa6",
    "resnet152_v2": "f2695542de38cf7e71ed58f02893d82bb409415e",
    "squeezenet1.0": "264ba4970a0cc87a4f15c96e25246a1307caf523",
    "squeezenet1.1": "33ba0f93753c83d86e1eb397f38a667eaf2e9376",
    "vgg11": "dd221b160977f36a53f464cb54648d227c707a05",
    "vgg11_bn": "ee79a8098a91fbe05b7a973fed2017a6117723a8",
    "vgg13": "6bc5de58a05a5e2e7f493e2d75a580d83efde38c",
    "vgg13_bn": "7d97a06c3c7a1aecc88b6e7385c2b373a249e95e",
    "vgg16": "e660d4569ccb679ec68f1fd3cce07a387252a90a",
    "vgg16_bn": "7f01cf050d357127a73826045c245041b0df7363",
    "vgg19": "ad2f660d101905472b83590b59708b71ea22b2e5",
    "vgg19_bn": "f360b758e856f1074a85abd5fd873ed1d98297c3",
}

apache_repo_url = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"
_url_format = "{repo_url}gluon/models/{file_name}.zip"


def short_hash(name):
    """The first 8 hex digits of model ``name``'s SHA-1 (its file is
    ``<name>-<short_hash>.params``).

    Raises
    ------
    ValueError
        When ``name`` is not a registered pretrained model (MXNet's message).
    """
    if name not in _model_sha1:
        raise ValueError(f"Pretrained model for {name} is not available.")
    return _model_sha1[name][:8]


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
    if name in _model_sha1:
        hashed = os.path.join(root, f"{name}-{short_hash(name)}.params")
        if os.path.isfile(hashed):
            if not check_sha1(hashed, _model_sha1[name]):
                raise MXNetError(f"pretrained model '{name}': {hashed} does not have the "
                                 f"registered SHA-1 {_model_sha1[name]} (a damaged or other "
                                 "file); replace it with MXNet's file")
            return hashed
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

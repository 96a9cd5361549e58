"""Gluon utilities: batch splitting, gradient clipping and file downloads."""
from __future__ import annotations

import hashlib
import os
import uuid
import warnings

import numpy as np

from .. import ndarray
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from .block import HookHandle  # noqa: F401  (MXNet exposes it here too)
from .parameter import _brief_print_list, shape_is_known  # noqa: F401

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file", "DownloadError"]


class DownloadError(OSError, MXNetError):
    """A file could not be downloaded (no network, a bad URL or a checksum mismatch)."""


def _get_repo_url():
    """The base URL of the Gluon dataset and model repository: ``$MXNET_GLUON_REPO`` or
    Apache's, ending with ``/``."""
    url = os.environ.get("MXNET_GLUON_REPO",
                         "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return url if url.endswith("/") else url + "/"


def _get_repo_file_url(namespace, filename):
    """The URL of ``filename`` under ``namespace`` in the Gluon repository."""
    return f"{_get_repo_url()}{namespace}/{filename}"


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` into ``num_slice`` slices along ``batch_axis``.

    Parameters
    ----------
    data : NDArray
        Dense or csr (a csr batch splits into csr slices along axis 0).
    num_slice : int
    batch_axis : int
    even_split : bool
        Require the axis length to be a multiple of ``num_slice``.

    Returns
    -------
    list of NDArray

    Examples
    --------
    >>> import sparsym as mx
    >>> [s.shape for s in mx.gluon.utils.split_data(mx.nd.zeros((5, 2)), 2, even_split=False)]
    [(3, 2), (2, 2)]
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices "
            f"along axis {batch_axis}. Use a batch size that's multiple of {num_slice} or set "
            "even_split=False to allow uneven partitioning of data.")
    n_each, extras = divmod(size, num_slice)
    sizes = [0] + extras * [n_each + 1] + (num_slice - extras) * [n_each]
    div = np.cumsum(sizes)
    if batch_axis == 0:
        return [data[int(div[i]):int(div[i + 1])] for i in range(num_slice)]
    return [ndarray.slice_axis(data, axis=batch_axis, begin=int(div[i]), end=int(div[i + 1]))
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` along ``batch_axis`` and put one slice on each context.

    Parameters
    ----------
    data : NDArray or array-like
    ctx_list : list of Context
    batch_axis : int
    even_split : bool

    Returns
    -------
    list of NDArray
    """
    if not isinstance(data, NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(c) for s, c in zip(slices, ctx_list)]


def _square_norm(array):
    if array.stype == "default":
        x = array.reshape((-1,))
        return ndarray.dot(x, x)
    return ndarray.square(ndarray.norm(array)).reshape((1,))


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``.

    Parameters
    ----------
    arrays : list of NDArray
    max_norm : float
    check_isfinite : bool
        Warn on a non-finite norm and return a Python float (else an NDArray).

    Returns
    -------
    float or NDArray
        The norm before clipping.
    """
    assert len(arrays) > 0
    ctx = arrays[0].context
    total = ndarray.add_n(*[_square_norm(a).reshape((1,)).as_in_context(ctx)
                            for a in arrays])
    total = ndarray.sqrt(total)
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                  "undefined."), stacklevel=2)
    # a Python scale: multiplying by a scalar keeps row_sparse arrays sparse (no fallback)
    scale = min(float(max_norm / (total.asscalar() + 1e-8)), 1.0)
    for arr in arrays:
        arr *= scale
    if check_isfinite:
        return total.asscalar()
    return total


def check_sha1(filename, sha1_hash):
    """True when the SHA-1 of the file ``filename`` is ``sha1_hash`` (hex)."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        while True:
            data = f.read(1048576)
            if not data:
                break
            sha1.update(data)
    return sha1.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Atomically move ``src`` over ``dst``."""
    os.replace(src, dst)


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download ``url`` to ``path`` (a file or a directory) and return the file name.

    An existing file is kept unless ``overwrite`` or its SHA-1 differs from ``sha1_hash``.
    Several processes may download the same file at once: each writes a temporary file
    and moves it into place.

    Raises
    ------
    DownloadError
        When every attempt failed (e.g. no network access) or the checksum does not match.
    """
    if path is None:
        fname = url.split("/")[-1]
        assert fname, "Can't construct file-name from this URL. Please set the `path` " \
            "option manually."
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path
    assert retries >= 0, f"Number of retries should be at least 0, currently it's {retries}"
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding "
                      "certificate verification is strongly advised.", stacklevel=2)
    if not (overwrite or not os.path.exists(fname) or
            (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    dirname = os.path.dirname(os.path.abspath(os.path.expanduser(fname)))
    os.makedirs(dirname, exist_ok=True)
    try:
        import requests
    except ImportError as err:  # pragma: no cover - requests ships with the test extras
        raise DownloadError(f"download({url!r}) needs the 'requests' package") from err
    last = None
    for _ in range(retries + 1):
        try:
            r = requests.get(url, stream=True, verify=verify_ssl)
            if r.status_code != 200:
                raise RuntimeError(f"Failed downloading url {url}")
            tmp = f"{fname}.{uuid.uuid4()}"
            with open(tmp, "wb") as f:
                for chunk in r.iter_content(chunk_size=1024):
                    if chunk:
                        f.write(chunk)
            if not os.path.exists(fname) or (sha1_hash and not check_sha1(fname, sha1_hash)):
                replace_file(tmp, fname)
            else:
                os.remove(tmp)
            if sha1_hash and not check_sha1(fname, sha1_hash):
                raise DownloadError(f"File {fname} is downloaded but the content hash does not "
                                    "match. The repo may be outdated or download may be "
                                    "incomplete.")
            return fname
        except DownloadError:
            raise
        except Exception as e:  # noqa: BLE001  (any transport failure is retried)
            last = e
    raise DownloadError(f"download of {url} failed after {retries + 1} attempts (no network "
                        f"access?): {last!r}") from last

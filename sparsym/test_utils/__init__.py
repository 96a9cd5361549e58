"""Testing helpers with MXNet 1.9.1's names and behaviour (mx.test_utils).

Like MXNet's module this one has no ``__all__``: ``from mxnet.test_utils import *``
also brings the modules and names MXNet's test code relies on (np, mx, rnd, os, sys,
time, json, npt, ss, OrderedDict, Context, array, Symbol...).
"""
# The imports below are part of the star import's surface (MXNet test files use them
# unqualified), hence the noqa markers.
import bz2  # noqa: F401
import errno  # noqa: F401
import gzip  # noqa: F401
import json  # noqa: F401
import logging  # noqa: F401
import numbers  # noqa: F401
import os  # noqa: F401
import platform
import struct  # noqa: F401
import sys  # noqa: F401
import time  # noqa: F401
import traceback  # noqa: F401
import zipfile  # noqa: F401
from collections import OrderedDict  # noqa: F401
from contextlib import contextmanager  # noqa: F401

import numpy as np  # noqa: F401
import numpy.random as rnd  # noqa: F401
import numpy.testing as npt  # noqa: F401

try:
    import scipy.stats as ss
except ImportError:  # scipy is a dependency; MXNet tolerates its absence, so do we
    ss = None
try:
    import requests  # noqa: F401
except ImportError:
    pass

import sparsym as mx  # noqa: F401

from ..context import Context, current_context  # noqa: F401
from ..ndarray import array  # noqa: F401
from ..symbol import Symbol  # noqa: F401
from ..runtime import Features  # noqa: F401
from ..util import getenv, setenv, use_np  # noqa: F401
from ._arrays import (create_2d_tensor, create_sparse_array, create_sparse_array_zd,  # noqa: F401
                      create_vector, default_context, default_dtype, get_identity_mat,
                      get_identity_mat_batch, new_matrix_with_real_eigvals_2d,
                      new_matrix_with_real_eigvals_nd, new_orthonormal_matrix_2d,
                      new_sym_matrix_with_real_eigvals_2d, new_sym_matrix_with_real_eigvals_nd,
                      rand_coord_2d, rand_ndarray, rand_shape_2d, rand_shape_3d, rand_shape_nd,
                      rand_sparse_ndarray, random_arrays, random_sample, random_uniform_arrays,
                      shuffle_csr_column_indices)
from ._checks import (check_consistency, check_gluon_hybridize_consistency,  # noqa: F401
                      check_numeric_gradient, check_speed, check_symbolic_backward,
                      check_symbolic_forward, compare_optimizer, numeric_grad, retry,
                      simple_forward)
from ._compare import (almost_equal, assert_allclose, assert_almost_equal,  # noqa: F401
                       assert_almost_equal_ignore_nan, assert_almost_equal_with_err,
                       assert_exception, assign_each, assign_each2, checkShapes,
                       collapse_sum_like, compare_ndarray_tuple, default_atols, default_numeric_eps,
                       default_rtols, effective_dtype, get_atol, get_etol, get_rtol, get_tolerance,
                       get_tols, locationError, np_reduce, same, same_array, same_symbol_structure)
from ._data import (DummyIter, discard_stderr, download, download_model,  # noqa: F401
                    environment, get_bz2_data, get_cifar10, get_im2rec_path, get_mnist,
                    get_mnist_iterator, get_mnist_pkl, get_mnist_ubyte, get_zip_data)
from ._stats import (chi_square_check, gen_buckets_probs_with_ppf, mean_check,  # noqa: F401
                     var_check, verify_generator)


def set_default_context(ctx):
    """Make ``ctx`` the default context of this thread (what default_context returns)."""
    Context._default_ctx.value = ctx


def list_gpus():
    """GPU ids usable here: none (sparsym has no GPU backend)."""
    return range(0)


def is_cd_run():
    """True inside a continuous-delivery job (CD_JOB=1)."""
    return os.environ.get("CD_JOB", 0) == "1"


def is_aarch64_run():
    """True on an aarch64 machine."""
    return platform.machine() == "aarch64"


def has_tvm_ops():
    """False: no TVM-generated operators here."""
    return False


def is_op_runnable():
    """True: every operator runs on the CPU contexts sparsym has."""
    return True


def get_cuda_compute_capability(ctx):
    """The CUDA compute capability of a GPU context (MXNet's mx.npx helper).

    A CPU context raises ValueError as in MXNet; a GPU context raises MXNetError,
    since sparsym has no GPU backend.
    """
    if not isinstance(ctx, Context) or ctx.device_type != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, "
                         f"while received ctx {ctx}")
    raise mx.MXNetError("get_cuda_compute_capability: sparsym has no GPU backend")


class np_symbol(Symbol):
    """MXNet's NumPy-interface symbol class (mx.sym.np), which sparsym does not provide:
    no symbol is ever an instance of it, so ``isinstance(s, np_symbol)`` is False."""

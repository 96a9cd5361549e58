"""The examples in the SBNet docstrings run and print what they show."""
import doctest

import numpy as np
import pytest

import sparsym as mx
from sparsym.contrib import sbnet


def _run(text, name):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {"mx": mx, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert test.examples, f"{name} has no examples"
    assert runner.failures == 0, f"{name}: {runner.failures} failing example(s)"


@pytest.mark.parametrize("op", ["_contrib_reduce_mask", "_contrib_SparseBlockConvolution"])
def test_op_docstring_examples(op):
    _run(mx.ops.get_op(op).doc, op)


def test_module_docstring_example():
    _run(sbnet.__doc__, "sparsym.contrib.sbnet")

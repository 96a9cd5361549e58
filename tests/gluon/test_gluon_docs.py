"""The runnable examples in Gluon's docstrings."""
import doctest

import pytest

import sparsym as mx

_MODULES = (mx.gluon.parameter, mx.gluon.block, mx.gluon.symbol_block, mx.gluon.trainer,
            mx.gluon.utils, mx.gluon.nn.basic_layers, mx.gluon.data.dataloader)
_TESTS = [t for mod in _MODULES for t in doctest.DocTestFinder().find(mod) if t.examples]


@pytest.mark.parametrize("test", _TESTS, ids=[t.name for t in _TESTS])
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0

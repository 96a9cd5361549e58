"""The runnable examples in autograd's docstrings."""
import doctest

import pytest

import sparsym as mx
import sparsym.contrib.autograd as contrib_autograd

_TESTS = [t for mod in (mx.autograd, contrib_autograd)
          for t in doctest.DocTestFinder().find(mod) if t.examples]
_TESTS += [t for t in doctest.DocTestFinder().find(mx.nd.NDArray.attach_grad, "attach_grad")
           if t.examples]


@pytest.mark.parametrize("test", _TESTS, ids=[t.name for t in _TESTS])
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0

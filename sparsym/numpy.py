"""mx.numpy: MXNet's NumPy-compatible array interface, which sparsym does not implement.

Importing works (code that only imports it runs); using any name raises a clear error.
"""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"mx.numpy.{name}: MXNet's NumPy-compatible interface (mx.np) is "
                              "not implemented in sparsym; use mx.nd")

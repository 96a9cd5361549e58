"""Process-wide threading defaults, applied before Numba's OpenMP runtime starts.

Numba's parallel kernels run on GNU OpenMP here. By default its worker threads spin at every
barrier before sleeping. On a 2-core machine shared with other processes (or with OpenBLAS's
own spinning threads between a GEMM and the next sparse kernel), a spinning worker holds a
core that a descheduled worker of the same region needs, and a region of microseconds stalls
for milliseconds. Measured with examples/matrix_factorization.py at load average 4.5-6:
93.5, 30.9 and 49.3 s with the default policy against 8.2, 23.4 and 10.1 s with
``OMP_WAIT_POLICY=PASSIVE`` (runs interleaved). So sparsym asks for passive waiting unless
the user has chosen a policy; libgomp reads the variable when it loads, which is after this
module runs unless another library started OpenMP earlier in the process.
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

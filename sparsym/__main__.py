"""``python -m sparsym``: the installation report of :mod:`sparsym.diagnose`."""
import sys

from .diagnose import main

sys.exit(main())

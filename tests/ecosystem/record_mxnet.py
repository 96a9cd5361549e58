"""Run every case of ``cases.py`` and save the outputs (``fixtures/<case>.npz``).

With MXNet 1.9.1 and the three libraries importable this records the reference outputs
the ecosystem tests compare with::

    python tests/ecosystem/record_mxnet.py [case-name-substring ...]

``--check`` runs the cases without writing and prints which run (any engine).
"""
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def main(argv):
    check = "--check" in argv
    wanted = [a for a in argv if not a.startswith("--")]
    ok = 0
    names = [n for n in cases.CASES if not wanted or any(w in n for w in wanted)]
    for name in names:
        try:
            out = cases.CASES[name]()
        except Exception as e:  # noqa: BLE001  (report every failing case)
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[:300]}")
            if "-v" in argv:
                traceback.print_exc()
            continue
        ok += 1
        print(f"ok   {name}")
        if not check:
            os.makedirs(FIXTURES, exist_ok=True)
            np.savez_compressed(os.path.join(FIXTURES, name + ".npz"),
                                **{k: np.asarray(v) for k, v in out.items()})
    print(f"{ok} of {len(names)} ran")


if __name__ == "__main__":
    main(sys.argv[1:])

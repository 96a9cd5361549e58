"""DataLoader worker processes end when their parent is killed (no orphans)."""
import os
import signal
import subprocess
import sys
import time

_PARENT = """
import numpy as np, sparsym as mx
ds = mx.gluon.data.ArrayDataset(np.arange(64, dtype=np.float32))
dl = mx.gluon.data.DataLoader(ds, batch_size=4, num_workers=2)
next(iter(dl))
import multiprocessing
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
import time
time.sleep(60)
"""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie is gone for our purposes
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def test_workers_exit_when_the_parent_is_sigkilled():
    p = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    pids = [int(x) for x in p.stdout.readline().split()]
    assert pids
    p.send_signal(signal.SIGKILL)
    p.wait()
    p.stdout.close()
    deadline = time.monotonic() + 20
    while any(_alive(q) for q in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(q) for q in pids)

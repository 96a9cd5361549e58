"""Interrupted saves leave the old file intact, and their temp files go at the next save."""
import os
import signal
import subprocess
import sys
import time

import numpy as np

import sparsym as mx
from sparsym.utils import atomic_write, remove_stale_temps


def _temps(d):
    return sorted(p for p in os.listdir(d) if p.endswith(".tmp"))


def test_next_save_removes_temp_left_by_a_dead_process(tmp_path):
    target = tmp_path / "w.params"
    mx.nd.save(str(target), {"a": mx.nd.ones((2, 2))})
    # a save interrupted by SIGKILL leaves ".<name>.<pid>.<rand>.tmp"; pid 2**22+1 is unused
    stale = tmp_path / f".w.params.{2 ** 22 + 1}.abc123.tmp"
    stale.write_bytes(b"x" * 1000)
    other = tmp_path / f".other.params.{2 ** 22 + 1}.abc123.tmp"   # another target's: kept
    other.write_bytes(b"x")
    mx.nd.save(str(target), {"a": mx.nd.zeros((2, 2))})
    assert _temps(tmp_path) == [other.name]
    np.testing.assert_array_equal(mx.nd.load(str(target))["a"].asnumpy(), np.zeros((2, 2)))


def test_temp_of_a_live_writer_is_kept(tmp_path):
    target = tmp_path / "w.json"
    live = tmp_path / f".w.json.{os.getppid()}.abc.tmp"   # the parent process is alive
    live.write_bytes(b"x")
    assert remove_stale_temps(target) == 0
    atomic_write(target, b"{}")
    assert live.exists() and target.read_bytes() == b"{}"


_SAVER = """
import sys, numpy as np, sparsym as mx
big = {"w": mx.nd.array(np.ones((4096, 4096), dtype=np.float32))}
print("ready", flush=True)
while True:
    mx.nd.save(sys.argv[1], big)
"""


def test_sigkilled_saves_leave_no_temp_after_the_next_save(tmp_path):
    target = str(tmp_path / "big.params")
    for _ in range(3):
        p = subprocess.Popen([sys.executable, "-c", _SAVER, target], stdout=subprocess.PIPE,
                             text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stdout.close()
    mx.nd.save(target, {"w": mx.nd.ones((2,))})
    assert _temps(tmp_path) == []
    np.testing.assert_array_equal(mx.nd.load(target)["w"].asnumpy(), np.ones(2))


def test_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "f.bin", b"1")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "f.bin").st_mode & 0o777 == 0o640


def test_next_load_removes_temps_of_interrupted_saves(tmp_path):
    # a save_parameters / save_states killed mid-write leaves ".<name>.<pid>.<rand>.tmp"
    # (pid 2**22+1 is unused): loading that path removes it as the next save would
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "adam")
    params, states = tmp_path / "net.params", tmp_path / "net.states"
    net.save_parameters(str(params))
    trainer.save_states(str(states))
    for target in (params, states):
        (tmp_path / f".{target.name}.{2 ** 22 + 1}.k1ll3d.tmp").write_bytes(b"partial")
    net.load_parameters(str(params))
    assert _temps(tmp_path) == [f".net.states.{2 ** 22 + 1}.k1ll3d.tmp"]
    trainer.load_states(str(states))
    assert _temps(tmp_path) == []

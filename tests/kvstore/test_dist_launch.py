"""sparsym-launch: worker processes with rank environment, joined to the session's cluster."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "sparse_linear_classification.py")


def _launch(args, timeout=240):
    cmd = [sys.executable, "-m", "sparsym.kvstore.launch"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _json_lines(stdout):
    out = {}
    for line in stdout.splitlines():
        prefix, _, rest = line.partition(" ")
        if prefix.startswith("[") and rest.startswith("{"):
            out[int(prefix.strip("[]"))] = json.loads(rest)
    return out


def test_launch_two_workers_train_to_the_local_loss(ray_address):
    """`sparsym-launch -n 2 -s 2 python examples/... --kvstore dist_sync` ends at the local
    run's loss (each global batch is split between the workers)."""
    sys.path.insert(0, os.path.dirname(EXAMPLE))
    try:
        import sparse_linear_classification as example
    finally:
        sys.path.pop(0)
    small = ["--rows", "600", "--epochs", "2", "--batch-size", "100"]
    local = example.main(small + ["--kvstore", "local"])
    proc = _launch(["-n", "2", "-s", "2", "--address", ray_address, sys.executable, EXAMPLE,
                    "--kvstore", "dist_sync"] + small)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = _json_lines(proc.stdout)
    assert sorted(res) == [0, 1]
    for rank in (0, 1):
        assert res[rank]["rank"] == rank and res[rank]["num_workers"] == 2
        assert res[rank]["loss"] == pytest.approx(local["loss"], rel=1e-5)
    assert local["loss"] < local["train_nll"][0]


WORKER = textwrap.dedent("""
    import os, signal, sys
    import sparsym as mx
    kv = mx.kv.create("dist_sync")
    print("rank", kv.rank, "of", kv.num_workers, "task", os.environ["DMLC_TASK_ID"], flush=True)
    kv.init(0, mx.nd.zeros((3,)))
    out = mx.nd.zeros((3,))
    for step in range(1000):
        if kv.rank == 1 and step == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        kv.push(0, mx.nd.ones((3,)))
        kv.pull(0, out=out)
    print("finished", flush=True)
""")


def test_launch_killed_worker_fails_the_job(ray_address, tmp_path):
    """Worker 1 is SIGKILLed mid-training: worker 0 fails with an error naming it (no hang)
    and the launcher exits non-zero."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    proc = _launch(["-n", "2", "-s", "1", "--address", ray_address, "--env", "FOO:bar",
                    sys.executable, str(script)])
    out = proc.stdout
    assert proc.returncode != 0, out
    assert "[0] rank 0 of 2 task 0" in out and "[1] rank 1 of 2 task 1" in out
    assert "worker 1 (its process was killed by signal 9)" in out
    assert "finished" not in out
    assert "sparsym-launch: worker 1 failed (signal 9)" in out


HUNG = textwrap.dedent("""
    import os, signal
    import sparsym as mx
    kv = mx.kv.create("dist_sync")
    kv.init(0, mx.nd.zeros((3,)))
    out = mx.nd.zeros((3,))
    for step in range(1000):
        if kv.rank == 1 and step == 2:
            os.kill(os.getpid(), signal.SIGSTOP)    # hangs: no heartbeat, never exits
        kv.push(0, mx.nd.ones((3,)))
        kv.pull(0, out=out)
""")


def test_launch_hung_worker_ends_the_job_in_bounded_time(ray_address, tmp_path):
    """Worker 1 stops itself: worker 0 fails after worker_timeout, and the launcher then
    stops worker 1 and exits non-zero instead of waiting forever."""
    import time
    script = tmp_path / "worker.py"
    script.write_text(HUNG)
    t0 = time.monotonic()
    proc = _launch(["-n", "2", "-s", "1", "--address", ray_address, "--worker-timeout", "3",
                    sys.executable, str(script)], timeout=120)
    took = time.monotonic() - t0
    out = proc.stdout
    assert proc.returncode != 0, out
    assert "worker 1 (no heartbeat for" in out
    assert "sparsym-launch: worker 0 failed; stopping workers [1]" in out
    assert took < 90, took


SCHED_KILLED = textwrap.dedent("""
    import os, time
    import ray
    import sparsym as mx
    kv = mx.kv.create("dist_sync")
    kv.init(0, mx.nd.zeros((3,)))
    out = mx.nd.zeros((3,))
    for step in range(600):
        if kv.rank == 0 and step == 2:
            print("killed at", time.time(), flush=True)
            ray.kill(ray.get_actor("scheduler",
                                   namespace=os.environ["SPARSYM_KVSTORE_NAMESPACE"]))
        kv.push(0, mx.nd.ones((3,)))
        kv.pull(0, out=out)
        time.sleep(0.1)
""")


def test_launch_killed_scheduler_ends_the_job_at_once(ray_address, tmp_path):
    """The scheduler (barriers, liveness, snapshots) is killed: the workers' next pull raises
    naming it, and the launcher ends the job; never silent training without fault
    tolerance."""
    import re
    import time
    script = tmp_path / "worker.py"
    script.write_text(SCHED_KILLED)
    proc = _launch(["-n", "2", "-s", "1", "--address", ray_address, "--worker-timeout", "30",
                    "--snapshot-interval", "1", sys.executable, str(script)], timeout=240)
    ended = time.time()
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "scheduler of job" in out or "the job's scheduler died" in out, out
    killed = float(re.search(r"killed at ([0-9.]+)", out).group(1))
    # the workers' steps would go on for 60 s, and worker_timeout is 30 s
    assert ended - killed < 25, (ended - killed, out)


def test_launch_unreachable_address_is_a_clear_error():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _launch(["-n", "1", "--address", f"127.0.0.1:{port}", sys.executable, "-c", "pass"],
                   timeout=60)
    assert proc.returncode == 2
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in proc.stderr

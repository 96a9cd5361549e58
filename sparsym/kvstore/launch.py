"""Launch a distributed sparsym job on Ray (MXNet's ``tools/launch.py``, local launcher).

::

    sparsym-launch -n WORKERS [-s SERVERS] [--address RAY_ADDRESS] [--env K:V ...] cmd ...
    python -m sparsym.kvstore.launch -n 2 -s 2 python train.py --kvstore dist_sync

Starts a local Ray head on 127.0.0.1 (or joins ``--address``), creates the job's scheduler
and server actors, then runs ``cmd`` once per worker with ``DMLC_ROLE=worker``,
``DMLC_NUM_WORKER``, ``DMLC_NUM_SERVER``, ``DMLC_TASK_ID`` (the rank),
``SPARSYM_RAY_ADDRESS`` and ``SPARSYM_KVSTORE_NAMESPACE`` set. Worker output is streamed
with a ``[rank]`` prefix. A worker that exits with an error is reported to the scheduler at
once, so the other workers of a dist_sync job fail instead of waiting for it. Once a worker
has failed, the workers still running get ``worker_timeout`` plus a few seconds to end on
their own (a hung or stopped one never does); then they are terminated, so the job always
ends in bounded time. The exit code is 0 when every worker succeeded, else the first
failing worker's code (1 if it was killed by a signal).
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time

from ..base import MXNetError

__all__ = ["main", "launch"]


def _parse_env(items):
    env = {}
    for item in items or ():
        if ":" not in item:
            raise SystemExit(f"sparsym-launch: --env expects K:V, got {item!r}")
        k, v = item.split(":", 1)
        env[k] = v
    return env


def _pump(stream, prefix, out, lock):
    """Copy a worker's output lines to ``out`` with a rank prefix."""
    for line in iter(stream.readline, b""):
        text = line.decode(errors="replace")
        with lock:
            out.write(f"{prefix} {text}" if text.endswith("\n") else f"{prefix} {text}\n")
            out.flush()
    stream.close()


_GRACE_EXTRA = 5.0   # seconds beyond worker_timeout before the rest of a failed job is stopped


def _stop(p, wait=3.0):
    """End a worker process, also one that is stopped (SIGSTOP) or ignores SIGTERM."""
    if p.poll() is not None:
        return
    try:
        os.kill(p.pid, signal.SIGCONT)   # a stopped process only acts on signals when resumed
        p.terminate()
        p.wait(timeout=wait)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        p.kill()
        p.wait()


class _SchedulerWatch:
    """Pings the job's scheduler about once a second without blocking the launcher."""

    def __init__(self, ray, scheduler):
        self._ray, self._sched = ray, scheduler
        self._ref, self._next = None, 0.0

    def lost(self):
        """None while the scheduler answers; the reason once it is dead."""
        from ray.exceptions import RayActorError
        now = time.monotonic()
        if self._ref is not None and self._ray.wait([self._ref], timeout=0)[0]:
            try:
                self._ray.get(self._ref)
            except RayActorError as err:
                return type(err).__name__
            self._ref = None
        if self._ref is None and now >= self._next:
            self._ref, self._next = self._sched.get_config.remote(), now + 1.0
        return None


def launch(command, num_workers, num_servers=None, address=None, env=None,
           snapshot_interval=None, max_restarts=None, worker_timeout=None, sync_timeout=None,
           out=None):
    """Run ``command`` (a list) as ``num_workers`` workers of one job; return the exit code."""
    from .dist import DistConfig, connect_ray, start_servers
    if num_workers < 1:
        raise MXNetError(f"sparsym-launch: -n must be >= 1, got {num_workers}")
    if not command:
        raise MXNetError("sparsym-launch: no command to run")
    out = out or sys.stdout
    num_servers = num_servers or num_workers
    ray = connect_ray(address)
    cfg = DistConfig.from_env(num_workers=num_workers, num_servers=num_servers,
                              snapshot_interval=snapshot_interval, max_restarts=max_restarts,
                              worker_timeout=worker_timeout, sync_timeout=sync_timeout)
    group = start_servers(config=cfg, wait=False)   # workers start while actors boot
    gcs = ray.get_runtime_context().gcs_address
    base = dict(os.environ)
    base.update(env or {})
    base.update({"DMLC_ROLE": "worker", "DMLC_NUM_WORKER": str(num_workers),
                 "DMLC_NUM_SERVER": str(num_servers), "SPARSYM_RAY_ADDRESS": gcs,
                 "SPARSYM_KVSTORE_NAMESPACE": group.namespace,
                 "SPARSYM_KVSTORE_WORKER_TIMEOUT": str(cfg.worker_timeout),
                 "SPARSYM_KVSTORE_SYNC_TIMEOUT": str(cfg.sync_timeout)})
    lock = threading.Lock()
    procs, pumps = [], []
    try:
        for rank in range(num_workers):
            wenv = dict(base, DMLC_TASK_ID=str(rank))
            p = subprocess.Popen(command, env=wenv, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            procs.append(p)
            t = threading.Thread(target=_pump, args=(p.stdout, f"[{rank}]", out, lock),
                                 daemon=True)
            t.start()
            pumps.append(t)
        try:
            group.wait_ready()
        except BaseException:
            for p in procs:
                p.kill()
            raise
        codes = [None] * num_workers
        first_bad, sched_lost = None, None
        deadline, grace = None, 0.0
        watch = _SchedulerWatch(ray, group.scheduler)
        while any(c is None for c in codes):
            if deadline is not None and time.monotonic() > deadline:
                left = [r for r, c in enumerate(codes) if c is None]
                cause = (f"worker {first_bad} failed" if first_bad is not None
                         else "the kvstore scheduler died")
                with lock:
                    out.write(f"sparsym-launch: {cause}; stopping workers "
                              f"{left}, still running {grace:g}s later\n")
                    out.flush()
                for r in left:
                    _stop(procs[r])
                deadline = None
            if sched_lost is None and first_bad is None:
                sched_lost = watch.lost()
                if sched_lost is not None:
                    # workers hear of it from their next heartbeat; give them time to say so
                    grace = _GRACE_EXTRA + 2 * cfg.heartbeat_interval
                    deadline = time.monotonic() + grace
                    with lock:
                        out.write(f"sparsym-launch: the kvstore scheduler died ({sched_lost}); "
                                  "ending the job\n")
                        out.flush()
            for rank, p in enumerate(procs):
                if codes[rank] is None and p.poll() is not None:
                    codes[rank] = p.returncode
                    if p.returncode != 0:
                        why = (f"its process was killed by signal {-p.returncode}"
                               if p.returncode < 0 else f"its process exited with code "
                               f"{p.returncode}")
                        if first_bad is None:
                            first_bad = rank
                            grace = (cfg.worker_timeout if cfg.worker_timeout > 0 else 0.0) \
                                + _GRACE_EXTRA
                            deadline = time.monotonic() + grace
                        try:
                            group.mark_dead(rank, why)
                        except Exception:   # the job is going down anyway
                            pass
            time.sleep(0.05)
        for t in pumps:
            t.join(timeout=5)
        if first_bad is None:
            return 0 if sched_lost is None else 1
        code = codes[first_bad]
        with lock:
            out.write(f"sparsym-launch: worker {first_bad} failed "
                      f"({'signal ' + str(-code) if code < 0 else 'exit code ' + str(code)})\n")
            out.flush()
        return code if code > 0 else 1
    except KeyboardInterrupt:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        return 130
    finally:
        group.shutdown()


def main(argv=None):
    """Command-line entry point (``sparsym-launch``)."""
    p = argparse.ArgumentParser(
        prog="sparsym-launch",
        description="Run a distributed sparsym job on Ray: N workers running COMMAND and S "
                    "kvstore servers (Ray actors).")
    p.add_argument("-n", "--num-workers", type=int, required=True, help="number of workers")
    p.add_argument("-s", "--num-servers", type=int, default=None,
                   help="number of server actors (default: the number of workers)")
    p.add_argument("--address", default=None,
                   help="Ray cluster to join (HOST:PORT); default: start a local head on "
                        "127.0.0.1")
    p.add_argument("--launcher", default="local", choices=["local"],
                   help="accepted for MXNet compatibility; processes always start locally")
    p.add_argument("--env", action="append", default=[], metavar="K:V",
                   help="extra environment variable for the workers (repeatable)")
    p.add_argument("--snapshot-interval", type=int, default=None,
                   help="server snapshot every N updates (SPARSYM_KVSTORE_SNAPSHOT_INTERVAL)")
    p.add_argument("--max-restarts", type=int, default=None,
                   help="restarts of a killed server (SPARSYM_KVSTORE_MAX_RESTARTS)")
    p.add_argument("--worker-timeout", type=float, default=None,
                   help="seconds without a heartbeat after which a worker counts as dead")
    p.add_argument("--sync-timeout", type=float, default=None,
                   help="max seconds a sync step waits for live workers (0: no limit)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the worker command")
    args = p.parse_args(argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        p.error("missing the worker command")
    try:
        code = launch(command, args.num_workers, args.num_servers, args.address,
                      _parse_env(args.env), args.snapshot_interval, args.max_restarts,
                      args.worker_timeout, args.sync_timeout)
    except MXNetError as err:
        print(f"sparsym-launch: {err}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())

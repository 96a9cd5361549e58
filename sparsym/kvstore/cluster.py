"""Ray plumbing of the distributed KVStore: job configuration, connecting to a cluster, and
the scheduler/server actors of a job (:class:`ServerGroup`)."""
from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import asdict, dataclass

from ..base import MXNetError
from .base import store_builder

__all__ = ["DistConfig", "ServerGroup", "start_servers", "connect_ray", "import_ray",
           "RAY_MISSING"]

RAY_MISSING = ("the distributed KVStore runs on Ray, which is not installed; install it with "
               "`pip install sparsym[dist]` (or `pip install \"ray[default]>=2.9\"`)")


# ----------------------------------------------------------------------------- config
@dataclass(frozen=True)
class DistConfig:
    """Settings of one distributed job (shared by its scheduler, servers and workers)."""

    num_workers: int = 1
    num_servers: int = 1
    bigarray_bound: int = 1_000_000
    snapshot_interval: int = 100
    max_restarts: int = 3
    worker_timeout: float = 60.0
    sync_timeout: float = 0.0
    heartbeat_interval: float = 1.0

    @classmethod
    def from_env(cls, **overrides):
        """Read the DMLC_* / MXNET_* / SPARSYM_KVSTORE_* variables; ``overrides`` win."""
        vals = {
            "num_workers": _env_num("DMLC_NUM_WORKER", 1, int),
            "num_servers": _env_num("DMLC_NUM_SERVER", 1, int),
            "bigarray_bound": _env_num("MXNET_KVSTORE_BIGARRAY_BOUND", 1_000_000, int),
            "snapshot_interval": _env_num("SPARSYM_KVSTORE_SNAPSHOT_INTERVAL", 100, int),
            "max_restarts": _env_num("SPARSYM_KVSTORE_MAX_RESTARTS", 3, int),
            "worker_timeout": _env_num("SPARSYM_KVSTORE_WORKER_TIMEOUT", 60.0, float),
            "sync_timeout": _env_num("SPARSYM_KVSTORE_SYNC_TIMEOUT", 0.0, float),
        }
        vals.update({k: v for k, v in overrides.items() if v is not None})
        cfg = cls(**vals)
        if cfg.num_workers < 1 or cfg.num_servers < 1:
            raise MXNetError(f"kvstore: need at least one worker and one server, got "
                             f"DMLC_NUM_WORKER={cfg.num_workers}, "
                             f"DMLC_NUM_SERVER={cfg.num_servers}")
        hb = min(1.0, cfg.worker_timeout / 4) if cfg.worker_timeout > 0 else 1.0
        return cls(**dict(asdict(cfg), heartbeat_interval=hb))


def _env_num(name, default, kind):
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    try:
        return kind(raw)
    except ValueError:
        raise MXNetError(f"environment variable {name}={raw!r}: expected "
                         f"{'an integer' if kind is int else 'a number'}") from None


# ----------------------------------------------------------------------------- Ray
def _is_loopback(address):
    host = address.rsplit(":", 1)[0] if address and ":" in address else address
    return host in (None, "", "localhost", "::1", "[::1]") or str(host).startswith("127.")


def import_ray(address=None):
    """Import Ray (clear error if missing); keep a local cluster on the loopback address."""
    if address is None or _is_loopback(address):
        # Ray replaces 127.0.0.1 by the machine's routable address unless clusters are off
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise MXNetError(RAY_MISSING) from None
    if address is None or _is_loopback(address):
        from ray._private import ray_constants
        if os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "0":
            ray_constants.ENABLE_RAY_CLUSTER = False
    return ray


def _probe(address, timeout=5.0):
    """Fail fast with a clear error when nothing listens at ``host:port``."""
    if address in ("auto", "local") or address.startswith(("ray://", "http")):
        return
    host, _, port = address.rpartition(":")
    try:
        port = int(port)
    except ValueError:
        raise MXNetError(f"Ray cluster address {address!r}: expected HOST:PORT") from None
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", port), timeout=timeout):
            pass
    except OSError as err:
        raise MXNetError(f"cannot reach the Ray cluster at {address}: {err}. Start one with "
                         "`ray start --head` or sparsym-launch, or fix SPARSYM_RAY_ADDRESS / "
                         "--address") from None


def connect_ray(address=None, **init_kwargs):
    """Connect this process to Ray: join ``address``, or start a local head on 127.0.0.1.

    Returns the ``ray`` module. A process already connected is left as it is.
    """
    ray = import_ray(address)
    if ray.is_initialized():
        return ray
    kw = {"logging_level": logging.WARNING, "configure_logging": True}
    kw.update(init_kwargs)
    if address:
        _probe(address)
        try:
            ray.init(address=address, **kw)
        except (ConnectionError, RuntimeError, TimeoutError) as err:
            raise MXNetError(f"cannot connect to the Ray cluster at {address}: {err}") from None
    else:
        kw.setdefault("include_dashboard", False)
        ray.init(address="local", **kw)    # a new head even if RAY_ADDRESS is set
    return ray


def _call(ray, refs, what):
    """ray.get with sparsym errors: a server's MXNetError is re-raised as it is."""
    from ray.exceptions import RayActorError, RayTaskError

    from .server import unwrap_error
    try:
        return ray.get(refs)
    except RayTaskError as err:
        cause = unwrap_error(err)
        if isinstance(cause, MXNetError):
            raise cause from None
        raise MXNetError(f"{what} failed: {cause!r}") from None
    except RayActorError as err:
        raise MXNetError(f"{what}: a kvstore actor died and was not restarted ({err}); "
                         "the job cannot continue") from None


# ----------------------------------------------------------------------------- servers
class ServerGroup:
    """The scheduler and server actors of one job (``namespace``).

    Created by the launcher (or by :func:`start_servers` in tests); workers attach to it by
    name. :meth:`worker` builds an in-process worker with a given rank.
    """

    def __init__(self, namespace, config: DistConfig, scheduler, servers, owned=True):
        self.namespace = namespace
        self.config = config
        self.scheduler = scheduler
        self.servers = list(servers)
        self.owned = owned

    def worker(self, kv_type="dist_sync", rank=None):
        """A :class:`~sparsym.kvstore.dist.DistKVStore` worker of this job in this process."""
        return store_builder("dist_worker")(kv_type, rank=rank, namespace=self.namespace)

    def wait_ready(self):
        """Block until the scheduler and every server answer."""
        import ray
        _call(ray, [self.scheduler.get_config.remote()]
              + [s.info.remote() for s in self.servers], "starting the kvstore servers")

    def mark_dead(self, rank, reason):
        import ray
        ray.get(self.scheduler.mark_dead.remote(rank, reason))

    def shutdown(self):
        """Kill the actors (only those this group created)."""
        if not self.owned:
            return
        import ray
        for h in self.servers + [self.scheduler]:
            try:
                ray.kill(h, no_restart=True)
            except Exception:  # already gone
                pass
        self.owned = False


def start_servers(namespace=None, config: DistConfig | None = None, detached=False,
                  address=None, wait=True):
    """Create (or attach to) the scheduler and server actors of a job.

    Parameters
    ----------
    namespace : str, optional
        The job's Ray namespace (a fresh one by default).
    config : DistConfig, optional
        Defaults to :meth:`DistConfig.from_env`.
    detached : bool
        Detached actors outlive the creating process (workers that organise themselves).
    address : str, optional
        Ray cluster to join if this process is not connected yet.
    wait : bool
        Wait until the actors are up (else workers may attach while they start).
    """
    connect_ray(address)
    from .server import actor_classes
    config = config or DistConfig.from_env()
    namespace = namespace or f"sparsym-{uuid.uuid4().hex[:12]}"
    cls = actor_classes()
    life = {"lifetime": "detached"} if detached else {}
    cfg = asdict(config)
    sched = cls["scheduler"].options(name="scheduler", namespace=namespace,
                                     get_if_exists=True, max_restarts=0, **life).remote(cfg)
    servers = [cls["server"].options(name=f"server-{i}", namespace=namespace,
                                     get_if_exists=True, max_restarts=config.max_restarts,
                                     max_task_retries=-1, **life).remote(i, namespace, cfg)
               for i in range(config.num_servers)]
    group = ServerGroup(namespace, config, sched, servers)
    if wait:
        group.wait_ready()
    return group

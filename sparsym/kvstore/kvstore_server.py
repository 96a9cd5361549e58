"""KVStoreServer: MXNet's server process loop for ps-lite 'dist_*' stores.

sparsym's distributed servers are Ray actors that ``mx.kv.create('dist_*')`` (or
``sparsym-launch -s SERVERS``) starts and drives; there is no server loop for a user script
to enter, so ``run()`` says so.
"""
from __future__ import annotations

__all__ = ["KVStoreServer"]


class KVStoreServer:
    """The server side of a distributed KVStore (MXNet API).

    Parameters
    ----------
    kvstore : KVStore
        The store whose server this would be.
    """

    def __init__(self, kvstore):
        self.kvstore = kvstore
        self.init_logginig = False  # MXNet's attribute name, typo included

    def run(self):
        """Not available: servers are Ray actors, started by the workers' ``kv.create``."""
        raise NotImplementedError(
            "KVStoreServer.run: sparsym's dist_* servers are Ray actors started by "
            "mx.kv.create('dist_sync'/'dist_async') or sparsym-launch -s SERVERS; a script "
            "does not run a server loop itself")

"""Memory planning: when each entry can be dropped, and which pool slot holds it.

The executor runs forward steps then backward steps. Entries that are neither bound
arrays nor outputs are released right after their last use (two schedules: training,
which keeps what backward reads, and inference, forward only). Dense outputs of
``out``-capable kernels are assigned storage *slots*: a slot is reused as soon as its
entry is dead (best fit by size), and an output may take over an input's slot in place
when the op declares the pair in ``OpDef.inplace`` and the input dies at that step
(MXNet's GraphStorageAllocator and FInplaceOption). Slots are sized in bytes; the
executor maps them onto a :class:`~sparsym.executor.pool.MemoryPool` that executors
bound with ``shared_exec`` share.
"""
from __future__ import annotations

from dataclasses import dataclass

# below this size numpy's own allocator is as fast as a pooled buffer (measured)
POOL_MIN_BYTES = 4096
# a free slot smaller than need/MATCH_RANGE is not grown to fit (MXNet's match_range)
MATCH_RANGE = 16


@dataclass(frozen=True)
class MemoryPlan:
    """The result of :func:`plan_memory` (all per-entry maps are keyed by entry id)."""

    release_train: tuple      # per step: eids to drop after it (forward + backward run)
    release_infer: tuple      # per forward step: eids to drop after it (forward only)
    slot_of: dict             # eid -> slot index
    inplace_src: dict         # eid -> input position whose buffer it overwrites
    slot_bytes: tuple         # size of every slot
    naive_bytes: int          # all intermediate entries, no reuse at all
    pooled_bytes: int         # sum of the slots
    peak_bytes: int           # largest simultaneously live intermediate bytes (training run)

    @property
    def num_slots(self) -> int:
        return len(self.slot_bytes)

    def summary(self) -> dict:
        return {"slots": self.num_slots, "pooled_bytes": self.pooled_bytes,
                "naive_bytes": self.naive_bytes, "peak_bytes": self.peak_bytes,
                "inplace": len(self.inplace_src), "pooled_entries": len(self.slot_of)}


def plan_memory(steps, n_fwd, keep, final, nbytes, poolable, inplace) -> MemoryPlan:
    """Plan releases and slots.

    steps: (in_eids, out_eids) per step in execution order, forward steps first (n_fwd);
    keep: eids the executor holds for the whole run (arguments, aux states, outputs,
    head gradients); final: eids read after the last step (gradients to write back);
    nbytes: dense bytes per eid; poolable: eids that may live in a slot;
    inplace: per step, the op's (input position, output position) pairs.
    """
    n = len(steps)
    last, first_def = {}, {}
    last_fwd = {}
    for s, (ins, outs) in enumerate(steps):
        for e in outs:
            first_def.setdefault(e, s)
            last.setdefault(e, s)
            if s < n_fwd:
                last_fwd.setdefault(e, s)
        for e in ins:
            last[e] = s
            if s < n_fwd:
                last_fwd[e] = s
    for e in final:
        last[e] = n  # read by the gradient write-back after the last step
    drop = [[] for _ in range(n)]
    for e, s in last.items():
        if s < n and e not in keep and e in first_def:
            drop[s].append(e)
    drop_infer = [[] for _ in range(n_fwd)]
    for e, s in last_fwd.items():
        if e not in keep and e in first_def and first_def[e] < n_fwd:
            drop_infer[s].append(e)

    slot_of, inplace_src, slot_bytes, free = {}, {}, [], []
    poolable = set(poolable)
    live = peak = naive = 0
    for s, (ins, outs) in enumerate(steps):
        taken = set()
        for ip, op_ in inplace[s] if s < len(inplace) else ():
            if ip >= len(ins) or op_ >= len(outs):
                continue
            ie, oe = ins[ip], outs[op_]
            if ie in slot_of and ie not in taken and oe in poolable and oe not in slot_of \
                    and last.get(ie) == s and ie not in keep \
                    and nbytes[oe] <= slot_bytes[slot_of[ie]]:
                slot_of[oe] = slot_of[ie]
                inplace_src[oe] = ip
                taken.add(ie)
        for oe in outs:
            if oe in poolable and oe not in slot_of:
                slot_of[oe] = _pick(free, slot_bytes, nbytes[oe])
        for oe in outs:
            if oe not in keep:
                live += nbytes[oe]
                naive += nbytes[oe]
        peak = max(peak, live)
        for e in drop[s]:
            live -= nbytes[e]
            if e in slot_of and e not in taken:
                free.append(slot_of[e])
    return MemoryPlan(tuple(tuple(d) for d in drop), tuple(tuple(d) for d in drop_infer),
                      slot_of, inplace_src, tuple(slot_bytes), naive, sum(slot_bytes), peak)


def _pick(free, slot_bytes, need):
    """Best fit among free slots (growing a smaller one within MATCH_RANGE), else a new one."""
    best = None
    for i, k in enumerate(free):
        size = slot_bytes[k]
        if size >= need and (best is None or size < slot_bytes[free[best]]):
            best = i
    if best is None:
        for i, k in enumerate(free):
            size = slot_bytes[k]
            if size * MATCH_RANGE >= need and (best is None or size > slot_bytes[free[best]]):
                best = i
    if best is not None:
        k = free.pop(best)
        slot_bytes[k] = max(slot_bytes[k], need)
        return k
    slot_bytes.append(need)
    return len(slot_bytes) - 1


def schedule(steps, start, nbytes, keep):
    """A memory-aware order of ``steps[start:]`` (e.g. the backward steps).

    Greedy list scheduling over the DFS order: among the steps whose inputs are ready, run
    first one that frees at least as many bytes as it allocates (a gradient accumulation
    whose terms die with it), else the earliest in DFS order. On unrolled RNNs this adds
    each weight-gradient contribution into its sum as soon as it exists instead of keeping
    all of them alive. Returns the new order as indices into ``steps``.
    """
    import heapq
    n = len(steps)
    producer = {}
    for s in range(start, n):
        for e in steps[s][1]:
            producer[e] = s
    remaining = {}     # eid -> consumers (among these steps) not run yet
    users = {}         # eid -> consuming steps
    waiting = [0] * n  # step -> producers not run yet
    dependents = [[] for _ in range(n)]
    uses = [None] * n  # step -> {eid: times it reads it} (eids it may free)
    out_bytes = [0] * n
    for s in range(start, n):
        ins, outs = steps[s]
        deps = set()
        u = {}
        for e in ins:
            remaining[e] = remaining.get(e, 0) + 1
            users.setdefault(e, []).append(s)
            p = producer.get(e)
            if p is not None:
                deps.add(p)
            if e not in keep:
                u[e] = u.get(e, 0) + 1
        waiting[s] = len(deps)
        for d in deps:
            dependents[d].append(s)
        uses[s] = u
        out_bytes[s] = sum([nbytes[e] for e in outs])

    def freeing(s):
        gain = 0
        for e, k in uses[s].items():
            if remaining[e] == k:
                gain += nbytes[e]
        return gain >= out_bytes[s]

    ready, eager, order = [], [], []
    done = [False] * n
    for s in range(start, n):
        if waiting[s] == 0:
            heapq.heappush(ready, s)
            if freeing(s):
                heapq.heappush(eager, s)
    total = n - start
    while len(order) < total:
        s = None
        while eager:
            c = heapq.heappop(eager)
            if not done[c] and freeing(c):
                s = c
                break
        while s is None:
            c = heapq.heappop(ready)
            if not done[c]:
                s = c
        done[s] = True
        order.append(s)
        for e in steps[s][0]:
            r = remaining[e] - 1
            remaining[e] = r
            if r == 1:
                # the last consumer of e may now free it
                for u in users[e]:
                    if not done[u] and waiting[u] == 0 and freeing(u):
                        heapq.heappush(eager, u)
        for d in dependents[s]:
            waiting[d] -= 1
            if waiting[d] == 0:
                heapq.heappush(ready, d)
                if freeing(d):
                    heapq.heappush(eager, d)
    return order

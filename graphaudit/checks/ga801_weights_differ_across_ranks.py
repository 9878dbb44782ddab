"""GA801 weights-differ-across-ranks."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from graphaudit import fingerprint as fpr
from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding


def _local_for_peers(ctx: AuditContext, peers: list[fpr.Fingerprint]) -> fpr.Fingerprint:
    """This process's fingerprint, numbered to fit among *peers* when the environment is silent."""
    rank = fpr._env_int("RANK_ID", "MS_NODE_ID")
    world = fpr._env_int("RANK_SIZE", "MS_WORKER_NUM")
    peer_sizes = {p.world_size for p in peers if p.world_size is not None}
    if world is None:
        world = peer_sizes.pop() if len(peer_sizes) == 1 else len(peers) + 1
    if rank is None:
        taken = {p.rank for p in peers}
        rank = next(r for r in range(world + len(peers) + 1) if r not in taken)
    local = fpr.fingerprint(ctx.net, rank=rank, world_size=world)
    local.source = "audited network"
    return local


@register(fpr.CHECK_ID, fpr.CHECK_NAME)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter whose initial value is not the same on every rank of a data-parallel job.

    What it does:
        When ``mindspore.communication`` is initialised (``init()`` was called, e.g. under
        ``msrun``) and the world has more than one rank, hashes every parameter of the network
        (blake2b of dtype, shape and bytes), exchanges the hashes with ``ops.AllGather`` and
        reports each parameter that differs across ranks (saying which ranks agree with which)
        or exists on some ranks only. It is an error, a warning for a parameter with
        ``requires_grad=False``. Without initialised communication it does nothing, unless
        the fingerprints of the other ranks were given with
        ``graphaudit.fingerprint.use_peer_fingerprints(net, files)``; the offline path is to
        save ``graphaudit.fingerprint.fingerprint(net)`` on each rank and run
        ``graphaudit compare rank*.json``. The check is a collective: call ``audit`` on every
        rank, or the others wait for it.

    Why is this bad:
        Data-parallel training averages the *gradients* of the ranks and applies the same
        update everywhere: the copies stay equal only if they start equal. A rank that drew
        its own random weights (a seed that depends on the rank, a checkpoint loaded on rank 0
        only) trains another model; the averaged gradient fits none of them, accuracy
        degrades, and which rank's weights get saved decides the result. Nothing raises.

    Example:
        ```python
        init()
        ms.set_seed(42 + get_rank())  # a different initialisation on every rank
        net = Net()
        ```

    Use instead:
        ```python
        init()
        ms.set_seed(42)  # the same initial weights everywhere; shuffle the data per rank instead
        net = Net()
        ```
    """
    world = fpr.communication_world()
    if world is not None and world[1] > 1:
        local = fpr.fingerprint(ctx.net, rank=world[0], world_size=world[1])
        fingerprints = fpr.gather_fingerprints(local, world[1])
    else:
        peers = list(ctx.extra.get(fpr.EXTRA_KEY) or fpr.peer_fingerprints(ctx.net))
        if not peers:
            return
        fingerprints = [_local_for_peers(ctx, peers), *peers]
    nodes = {param.name: node for node, param in ctx.parameters()}
    for finding in fpr.compare(fingerprints):
        node = nodes.get(finding.subject)
        yield dataclasses.replace(finding, nodes=(node,) if node else ())

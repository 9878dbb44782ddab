"""Weight fingerprints: are the ranks of a data-parallel job starting from the same weights?

In data-parallel training every rank holds a full copy of the network and the gradients are
averaged across ranks; the copies only stay equal if they *start* equal. A rank that drew its
own random initialisation (a seed that depends on the rank, a checkpoint loaded on rank 0
only) trains a different model, and nothing raises.

:func:`fingerprint` hashes every parameter of a network (name → blake2b of dtype, shape and
raw bytes), :meth:`Fingerprint.save` / :meth:`Fingerprint.load` keep it as JSON, and
:func:`compare` lists the parameters that differ across ranks (check GA801). Inside
:func:`graphaudit.audit` GA801 exchanges the fingerprints with MindSpore's own ``AllGather``
when ``mindspore.communication`` is initialised, or compares with the files given as
``audit(net, peers=["rank1.json", ...])``; the offline path is ``graphaudit compare rank*.json``
(see ``docs/distributed.md``). This module is the public face of :mod:`graphaudit.distributed`.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> def dense(seed):
    ...     init = Tensor(np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32))
    ...     return nn.Dense(4, 2, weight_init=init, bias_init="zeros")
    >>> rank0, rank1 = fingerprint(dense(0), rank=0), fingerprint(dense(1), rank=1)
    >>> sorted(rank0.parameters)
    ['bias', 'weight']
    >>> [(f.check_id, f.subject) for f in compare([rank0, rank1])]
    [('GA801', 'weight')]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphaudit.distributed.fingerprint import (
    ALGORITHM,
    FORMAT,
    FORMAT_VERSION,
    Fingerprint,
    FingerprintError,
    ParameterDigest,
)
from graphaudit.errors import ArgumentError, ArgumentTypeError
from graphaudit.errors.arguments import check_count, checked_call
from graphaudit.findings import Finding

__all__ = [
    "ALGORITHM",
    "FORMAT",
    "FORMAT_VERSION",
    "Fingerprint",
    "FingerprintError",
    "ParameterDigest",
    "compare",
    "fingerprint",
]


@checked_call
def fingerprint(
    net: Any, *, rank: int | None = None, world_size: int | None = None, dataset: Any = None
) -> Fingerprint:
    """The :class:`Fingerprint` of every parameter of *net* (a ``nn.Cell``), by parameter name.

    ``rank`` and ``world_size`` default to the communication world when it is initialised,
    else to the ``RANK_ID`` / ``RANK_SIZE`` environment variables (set by ``msrun``), else
    ``0`` and ``1``. Parameters are read, never changed. Shared parameters count once.
    It carries the rank's setup (:class:`~graphaudit.distributed.fingerprint.RankSetup`: the
    parallel context, a ``TrainOneStepCell``'s gradient reducer and, given ``dataset=``, the
    training pipeline's sharding, size, seed, preprocessing and a digest of its first batch,
    sampled from a copy), which ``audit(net, peers=[...])`` compares across ranks (GA802-GA806).

    Example:
        >>> from mindspore import nn
        >>> fingerprint(nn.Dense(2, 2), rank=0, world_size=1).label
        'rank 0'
    """
    from graphaudit.distributed.hashing import fingerprint_network  # runs MindSpore: on first use

    check_count(rank, "rank", "fingerprint()", minimum=0, allow_none=True)
    check_count(world_size, "world_size", "fingerprint()", minimum=1, allow_none=True)
    if rank is not None and world_size is not None and rank >= world_size:
        raise ArgumentError(
            f"fingerprint() got rank={rank} with world_size={world_size}: ranks count from 0, so "
            f"rank must be below world_size (0 to {world_size - 1})"
        )
    from graphaudit.distributed.rank_setup import setup_of

    found = fingerprint_network(net, rank=rank, world_size=world_size)
    found.setup = setup_of(net, dataset)
    return found


@checked_call
def compare(fingerprints: Sequence[Fingerprint], *, config: Any = None) -> list[Finding]:
    """GA801 findings for the parameters that are not identical on every fingerprint.

    One finding per parameter whose content (or shape or dtype) differs, naming which ranks
    agree with which (the largest group first); one per parameter missing on some ranks; and
    a warning, subject ``(world)``, when the fingerprints do not cover every rank of their
    world or disagree on its size. A difference in a parameter with ``requires_grad=False``
    (a frozen weight, a BatchNorm moving statistic) is a warning, any other an error. GA801
    runs as every check runs (:func:`graphaudit.runner.ranks.audit_fingerprints`): what is
    reported follows ``[tool.graphaudit]`` or *config*, as for :func:`graphaudit.audit`.
    """
    if isinstance(fingerprints, (str, bytes, Fingerprint)) or not hasattr(fingerprints, "__iter__"):
        raise ArgumentTypeError(
            f"compare() expects a list of Fingerprint objects (one per rank), got {type(fingerprints).__name__}: "
            "write compare([Fingerprint.load(path) for path in paths])"
        )
    fingerprints = list(fingerprints)
    wrong = [f for f in fingerprints if not isinstance(f, Fingerprint)]
    if wrong:
        raise ArgumentTypeError(
            f"compare() expects Fingerprint objects (from fingerprint(net) or Fingerprint.load(path)), "
            f"got a {type(wrong[0]).__name__} in the list"
        )
    if not fingerprints:
        raise ArgumentError(
            "compare() got no fingerprint: save one per rank (fingerprint(net).save(path)) and compare them all"
        )
    from graphaudit.runner.ranks import audit_fingerprints

    return audit_fingerprints(fingerprints, config=config).findings

"""The weights of every rank of a data-parallel job, as fingerprints (for GA801), and how each trains.

When ``mindspore.communication`` is initialised (``init()`` under ``msrun``) and the world has
more than one rank, every rank's fingerprint is exchanged with ``ops.AllGather``: a
collective, so every rank must audit. Otherwise the fingerprints of the other ranks can be
given as files (``audit(net, peers=["rank1.json", ...])``, ``graphaudit audit --peers``); the
audited network is then numbered to fit among them. See ``docs/distributed.md``.

Each fingerprint carries its rank's :class:`~graphaudit.distributed.fingerprint.RankSetup`
(the parallel context, the gradient reducer, the training pipeline's facts), taken by the
same audit and exchanged in the same ``AllGather``: :class:`RankSetups` and :class:`RankData`
serve them to the checks of the data-parallel setup (GA802-GA806).

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> from graphaudit.fingerprint import fingerprint
    >>> peer = fingerprint(nn.Dense(2, 2), rank=1, world_size=2)
    >>> ranks = EvidenceSet(AuditRequest(nn.Dense(2, 2), options={"peers": [peer]})).need(RankFingerprints)
    >>> [fp.label for fp in ranks.fingerprints]
    ['rank 0', 'rank 1']
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.errors import (
    ArgumentError,
    ArgumentTypeError,
    ExchangeError,
    FingerprintError,
    GraphAuditError,
)
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.dataset import TrainingData

if TYPE_CHECKING:
    from graphaudit.distributed.fingerprint import DataFacts, Fingerprint, RankSetup

__all__ = ["RankData", "RankFingerprints", "RankSetups"]


def _peer_list(name: str, value: Any) -> list[Fingerprint]:
    """*value*'s fingerprints, read from its files (the door's check of ``peers=``).

    Read when the request is made, before anything runs: a missing or broken file is an
    error naming the option (``peers=``, ``--peers``), not a failure half-way through the audit.
    """
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError(
            f"{name}= takes a list of fingerprint files (or Fingerprint objects), got {type(value).__name__}; "
            'write peers=["rank1.json"]'
        )
    from graphaudit.distributed.fingerprint import Fingerprint

    items = list(value)
    odd = next((p for p in items if not isinstance(p, (str, os.PathLike, Fingerprint))), None)
    if odd is not None:
        raise ArgumentTypeError(
            f"{name}= takes fingerprint files (paths) or Fingerprint objects, got {type(odd).__name__} in the list"
        )
    try:
        return _peers(items)
    except FingerprintError as err:
        raise ArgumentError(f"{name}= {err}") from err


def _peers(value: list[Any]) -> list[Fingerprint]:
    from graphaudit.distributed.fingerprint import Fingerprint

    return [p if isinstance(p, Fingerprint) else Fingerprint.load(p) for p in value]


def _local_setup(request: AuditRequest, have: EvidenceSet) -> RankSetup:
    """The audited rank's setup, from the evidence this audit already has, its first batch sampled anew."""
    from graphaudit.distributed.rank_setup import first_batch, rank_setup

    # The first batch is sampled again, under the seed every rank samples under (not the
    # audit's own sample: an unseeded shuffle would make the ranks' batches differ); only
    # when the audit samples at all (dataset_batches=0 turns it off).
    data = have.get(TrainingData)
    if data is None:
        return rank_setup(request.net)
    # the option, not the DataSample kind: making it would sample 8 batches only to learn this
    sampled = request.option("dataset_batches") != 0
    return rank_setup(request.net, data.pipeline, first_batch(data.pipeline) if sampled else None)


def _numbered_among(net: Any, peers: list[Fingerprint]) -> Fingerprint:
    """The audited network's fingerprint, numbered to fit among *peers* when the environment is silent."""
    from graphaudit.distributed.hashing import env_int, fingerprint_network

    rank = env_int("RANK_ID", "MS_NODE_ID")
    world = env_int("RANK_SIZE", "MS_WORKER_NUM")
    peer_sizes = {p.world_size for p in peers if p.world_size is not None}
    if world is None:
        world = peer_sizes.pop() if len(peer_sizes) == 1 else len(peers) + 1
    if rank is None:
        taken = {p.rank for p in peers}
        rank = next(r for r in range(world + len(peers) + 1) if r not in taken)
    local = fingerprint_network(net, rank=rank, world_size=world)
    local.source = "audited network"
    return local


@dataclass(frozen=True)
class RankFingerprints(Evidence):
    """One fingerprint per rank: in rank order when ``gathered`` by AllGather, else the audited network's first."""

    title = "the fingerprints of the other data-parallel ranks"
    requirement = Requirement(
        "run under msrun with mindspore.communication initialised, or pass peers=['rank1.json', ...]",
        "run under msrun with communication initialised, or give --peers rank1.json ...",
    )
    options = (
        Option(
            "peers",
            "fingerprint files of the other ranks (written with graphaudit.fingerprint.fingerprint(net)"
            ".save(path)), compared with the audited network by GA801 when communication is not initialised",
            flag="--peers",
            metavar="FINGERPRINT.json",
            cli_value="paths",
            parse=_peer_list,
        ),
    )

    uses = (TrainingData,)

    fingerprints: tuple[Fingerprint, ...]
    gathered: bool = False

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> RankFingerprints | Missing:
        from graphaudit.distributed.hashing import (
            communication_world,
            fingerprint_network,
            gather_fingerprints,
        )

        world = communication_world()
        if world is not None and world[1] > 1:
            local = fingerprint_network(request.net, rank=world[0], world_size=world[1])
            local.setup = _local_setup(request, have)
            try:
                return cls(tuple(gather_fingerprints(local, world[1])), gathered=True)
            except ExchangeError as err:  # the checks that compare ranks are NOT RUN, saying why
                return Missing(str(err))
        peers = request.option("peers")
        if not peers:
            return Missing()
        try:
            peers = _peers(peers)
        except GraphAuditError as err:  # a file that is not a fingerprint: said in the CLI's words too
            raise cls.options[0].worded(err) from err.__cause__
        local = _numbered_among(request.net, peers)
        local.setup = _local_setup(request, have)
        return cls((local, *peers))


_WRITE_SETUP = "write every rank's fingerprint with graphaudit.fingerprint.fingerprint(net, dataset=train_ds)"


@dataclass(frozen=True)
class RankSetups(Evidence):
    """How every rank trains (:class:`~graphaudit.distributed.fingerprint.RankSetup`), in the fingerprints' order."""

    title = "how every data-parallel rank trains (parallel context, gradient reducer)"
    requirement = Requirement(
        "run under msrun with mindspore.communication initialised, or pass peers= files "
        "written with graphaudit.fingerprint.fingerprint(net, dataset=train_ds)",
        "run under msrun with communication initialised, or give --peers files written with fingerprint(net, dataset=...)",
    )
    needs = (RankFingerprints,)

    setups: tuple[tuple[str, RankSetup], ...]  #: (rank label, setup)

    @property
    def world_size(self) -> int:
        return len(self.setups)

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> RankSetups | Missing:
        fingerprints = have.need(RankFingerprints).fingerprints
        bare = [fp.label for fp in fingerprints if fp.setup is None]
        if bare:
            return Missing(
                f"the fingerprint of {', '.join(bare)} carries no setup (an older graphaudit wrote it): {_WRITE_SETUP}"
            )
        return cls(tuple((fp.label, fp.setup) for fp in fingerprints if fp.setup is not None))


@dataclass(frozen=True)
class RankData(Evidence):
    """Every rank's training-pipeline facts (:class:`~graphaudit.distributed.fingerprint.DataFacts`), in rank order."""

    title = "the training data of every data-parallel rank"
    requirement = Requirement(
        "pass dataset=train_ds on every rank under msrun (or peers= files written with "
        "graphaudit.fingerprint.fingerprint(net, dataset=train_ds))",
        "give --dataset MODULE:FACTORY on every rank under msrun (or --peers files written with a dataset)",
    )
    needs = (RankSetups, TrainingData)

    data: tuple[tuple[str, DataFacts], ...]  #: (rank label, facts)

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> RankData | Missing:
        setups = have.need(RankSetups).setups
        bare = [label for label, setup in setups if setup.data is None]
        if bare:
            return Missing(f"{', '.join(bare)} gave no training pipeline: {_WRITE_SETUP}")
        return cls(tuple((label, setup.data) for label, setup in setups if setup.data is not None))

"""Fingerprints of the ranks of one job compared offline: GA801 run like any check (``graphaudit compare``).

There is no network here, only the fingerprints each rank saved
(``graphaudit.fingerprint.fingerprint(net).save(path)``): they are the
:class:`~graphaudit.evidence.ranks.RankFingerprints` evidence, and GA801 runs on them through
the one runner policy (:func:`~graphaudit.runner.judged`): its declared causes, the folds, the
configuration (``[tool.graphaudit]``, ``config=``) and the error wrapping of every entry point.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.fingerprint import fingerprint
    >>> def dense(seed):
    ...     init = Tensor(np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32))
    ...     return nn.Dense(4, 2, weight_init=init, bias_init="zeros")
    >>> report = audit_fingerprints([fingerprint(dense(0), rank=0, world_size=2),
    ...                              fingerprint(dense(1), rank=1, world_size=2)], config=False)
    >>> [(f.check_id, f.subject, type(f.cause).__name__) for f in report.findings]
    [('GA801', 'weight', 'ParameterDiffersAcrossRanks')]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphaudit.checks import all_checks
from graphaudit.evidence import AuditRequest, EvidenceSet
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.ranks import RankFingerprints
from graphaudit.report import Report
from graphaudit.runner import configuration, judged, judging
from graphaudit.runner.data import no_network

if TYPE_CHECKING:
    from graphaudit.distributed.fingerprint import Fingerprint

__all__ = ["COMPARED_BY", "audit_fingerprints"]

#: The check that compares fingerprints.
COMPARED_BY = "GA801"


def audit_fingerprints(fingerprints: Sequence[Fingerprint], *, config: Any = None) -> Report:
    """GA801 on *fingerprints* (one per rank, checked by the caller), reported as *config* says."""
    settings = configuration(config, "compare()")
    with judging("the comparison", "The fingerprints were left as they were; if the files are sound"):
        given = tuple(fingerprints)
        have = EvidenceSet(
            AuditRequest(None, given), {NetworkGraph: no_network(), RankFingerprints: RankFingerprints(given)}
        )
        return judged(have, settings, [all_checks()[COMPARED_BY]])

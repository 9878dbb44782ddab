"""The comparison of weight fingerprints across ranks, as text and JSON (``graphaudit compare``).

:class:`Comparison` holds the fingerprints and what :func:`graphaudit.fingerprint.compare`
found in them (GA801's findings: :func:`graphaudit.fingerprint.compare` runs it); ``identical`` is true when no parameter differs or is
missing on some rank (a ``(world)`` warning alone, a world that is not complete, does not
make them differ).

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.fingerprint import fingerprint
    >>> def dense(seed):
    ...     init = Tensor(np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32))
    ...     return nn.Dense(4, 2, weight_init=init, bias_init="zeros")
    >>> from graphaudit.fingerprint import compare
    >>> ranks = [fingerprint(dense(0), rank=0, world_size=2), fingerprint(dense(0), rank=1, world_size=2)]
    >>> same = Comparison(tuple(ranks), tuple(compare(ranks)))
    >>> same.identical, same.parameters
    (True, 2)
    >>> ranks = [fingerprint(dense(0), rank=0, world_size=2), fingerprint(dense(1), rank=1, world_size=2)]
    >>> other = Comparison(tuple(ranks), tuple(compare(ranks)))
    >>> other.identical, [f.subject for f in other.differing]
    (False, ['weight'])
    >>> print(other.text().splitlines()[-1])
    1 parameter not identical across the fingerprints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from graphaudit.distributed.compare import WORLD
from graphaudit.distributed.fingerprint import Fingerprint
from graphaudit.findings import Finding
from graphaudit.text import counted

__all__ = ["WORLD", "Comparison"]


@dataclass(frozen=True)
class Comparison:
    """Fingerprints of the ranks of one job, and the GA801 findings comparing them."""

    fingerprints: tuple[Fingerprint, ...]
    findings: tuple[Finding, ...]

    @property
    def differing(self) -> list[Finding]:
        """The findings about parameters: those that differ, or exist on some ranks only."""
        return [f for f in self.findings if f.subject != WORLD]

    @property
    def identical(self) -> bool:
        """True when every parameter has the same content in every fingerprint."""
        return not self.differing

    @property
    def parameters(self) -> int:
        """How many parameter names the fingerprints hold, together."""
        return len({name for fp in self.fingerprints for name in fp.parameters})

    def to_dict(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "parameters": self.parameters,
            "fingerprints": [
                {
                    "file": fp.source,
                    "rank": fp.rank,
                    "world_size": fp.world_size,
                    "hostname": fp.hostname,
                    "network": fp.network,
                    "graphaudit_version": fp.version,
                    "parameters": len(fp.parameters),
                }
                for fp in self.fingerprints
            ],
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def text(self) -> str:
        """The fingerprints compared, each finding with its fix, and the verdict."""
        count = len(self.fingerprints)
        lines = [f"compared {count} fingerprints of {self.parameters} parameters:"]
        for fp in self.fingerprints:
            world = fp.world_size if fp.world_size is not None else "?"
            lines.append(
                f"  {fp.label}: {fp.source}  ({len(fp.parameters)} parameters of {fp.network or '?'}, "
                f"host {fp.hostname or '?'}, world size {world})"
            )
        lines.append("")
        for finding in self.findings:
            lines.append(f"{finding.check_id} [{finding.severity}] {finding.subject}: {finding.message}")
            lines.append(f"    fix: {finding.fix}")
        if self.differing:
            lines.append(
                f"{counted(len(self.differing), 'parameter')} not identical across the fingerprints."
            )
        else:
            lines.append(f"identical: every parameter has the same content in all {count} fingerprints.")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

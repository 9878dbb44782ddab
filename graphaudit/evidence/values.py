"""The initial values of the network's weights, summarised once (for the GA6xx checks).

Every materialised floating-point parameter with at least two dimensions is read once:
whether all its elements are one value, and a few of its bytes (its start, middle and end);
its full hash is computed only when asked (:attr:`ValueSummary.digest`), since hashing every
weight of a large model costs more than the rest of a structure-only audit. Values are only
read. A parameter whose data does not exist yet (built under
``mindspore.nn.utils.no_init_parameters()``) is not read, since reading it would make it:
when no weight can be read this evidence is missing, with that reason.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> values = EvidenceSet(AuditRequest(nn.Dense(3, 2, weight_init="zeros"))).need(ParameterValues)
    >>> values.summaries["param:weight"].constant
    0.0
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ParameterValues", "ValueSummary"]

# How many leading elements are compared before a weight is scanned in full: a random
# weight differs within them, so only a (nearly) constant one pays for the full comparison.
SAMPLE = 64


@dataclass(frozen=True, eq=False)
class ValueSummary:
    """What the value checks need to know about one parameter's values."""

    parameter: Any
    constant: float | None  # the one value of a parameter whose elements are all equal
    sample: bytes = b""  # the bytes of a few elements: equal for equal parameters

    @property
    def digest(self) -> bytes:
        """A BLAKE2b hash of every byte of the values (computed on first use, then kept)."""
        cached = self.__dict__.get("_digest")
        if cached is None:
            from graphaudit.capture.network.values import tensor_values

            values = tensor_values(self.parameter)
            cached = hashlib.blake2b(values.tobytes(order="C"), digest_size=16).digest()
            object.__setattr__(self, "_digest", cached)
        return cached


def _sample(values: np.ndarray) -> bytes:
    flat = values.reshape(-1)
    if flat.size <= 3 * SAMPLE:
        return flat.tobytes()
    middle = flat.size // 2 - SAMPLE // 2
    return flat[:SAMPLE].tobytes() + flat[middle : middle + SAMPLE].tobytes() + flat[-SAMPLE:].tobytes()


def _constant(values: np.ndarray) -> float | None:
    """The one value of *values* if all its elements are equal (a NaN never is), else None."""
    import numpy as np

    flat = values.reshape(-1)
    first = flat[0]
    if not bool(np.all(flat[:SAMPLE] == first)):
        return None  # the common case, decided without touching the rest
    return float(first) if bool(np.all(values == first)) else None


@dataclass(frozen=True)
class ParameterValues(Evidence):
    """A :class:`ValueSummary` per parameter node, and the nodes whose values do not exist yet."""

    title = "the initial values of the weights"
    requirement = Requirement(
        "initialise the weights before the audit (not a network built under no_init_parameters())",
        "build the network with its weights initialised",
    )
    needs = (NetworkGraph,)

    summaries: dict[str, ValueSummary]
    uninitialized: tuple[str, ...] = field(default=())

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ParameterValues | Missing:
        import mindspore as ms

        from graphaudit.capture.network.values import is_initialized, tensor_values

        summaries: dict[str, ValueSummary] = {}
        uninitialized: list[str] = []
        for node, param in have.need(NetworkGraph).structure.parameters.items():
            if len(param.shape) < 2 or param.dtype not in ms.common.dtype.float_type:
                continue
            if not is_initialized(param):
                uninitialized.append(node)
                continue
            try:
                values = tensor_values(param)
            except (RuntimeError, TypeError, ValueError):
                continue
            if values.size:
                summaries[node] = ValueSummary(param, _constant(values), _sample(values))
        if uninitialized and not summaries:
            return Missing(
                f"none of the {len(uninitialized)} weight matrices is initialised yet (the network was "
                "built under no_init_parameters() or with lazy initialisation), and reading them would "
                "initialise them; audit after loading or initialising the weights"
            )
        return cls(summaries, tuple(uninitialized))

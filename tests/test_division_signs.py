"""GA703 warns where a divisor can be zero, read from the operations that make it (issue 19, pattern 6).

Before: any division by a computed tensor was reported unless the divisor was literally
``y + eps``, a clamp or an ``exp``, once per traced division: mindone's RWKV port got 32
warnings for ``numerator / denominator`` with ``denominator = e1 * den_state + e2`` over
exponentials (strictly positive). Now the divisor's sign is followed through the traced
operations (exponentials, sums and products of positives are positive; a difference, a
count, a variance, a norm without epsilon, data may be zero), and the same division in every
block of a stack is one finding.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import graphaudit

X = Tensor(np.random.default_rng(0).standard_normal((2, 6, 4)).astype(np.float32))


class Recurrence(nn.Cell):
    """RWKV's linear attention as the port computes it on CPU: a ratio of running sums of exponentials."""

    def __init__(self) -> None:
        super().__init__()
        self.key, self.value = nn.Dense(4, 4), nn.Dense(4, 4)
        self.time_first = nn.Dense(4, 4)

    def construct(self, x):
        key, value = self.key(x), self.value(x)
        num = ops.zeros_like(key[:, 0])
        den = ops.zeros_like(key[:, 0])
        top = ops.zeros_like(key[:, 0]) - 1e38
        outputs = []
        for t in range(key.shape[1]):
            k = key[:, t]
            best = ops.maximum(top, k)
            e1, e2 = ops.exp(top - best), ops.exp(k - best)
            outputs.append((e1 * num + e2 * value[:, t]) / (e1 * den + e2))
            num, den, top = e1 * num + e2 * value[:, t], e1 * den + e2, best
        return ops.stack(outputs, 1)


class Divides(nn.Cell):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.fc, self.kind = nn.Dense(4, 4), kind

    def construct(self, x):
        h = self.fc(x)
        if self.kind == "difference":
            return h / (h.max(-1, keepdim=True)[0] - h.min(-1, keepdim=True)[0])
        if self.kind == "count":
            mask = (x > 0).astype(x.dtype)
            return (h * mask).sum(axis=1) / mask.sum(axis=1)
        if self.kind == "variance":
            centred = h - h.mean(-1, True)
            return centred / ops.sqrt((centred * centred).mean(-1, True))
        if self.kind == "norm":
            return h / ops.norm(h, dim=-1, keepdim=True)
        if self.kind == "data":
            return h / x
        if self.kind == "norm+eps":
            return h / (ops.norm(h, dim=-1, keepdim=True) + 1e-6)
        if self.kind == "softmax-sum":
            e = ops.exp(h - h.max(-1, keepdim=True)[0])
            return e / e.sum(-1, keepdims=True)
        return h / ops.sqrt((h * h).mean(-1, True) + 1e-5)  # RMSNorm


def warnings_of(report: graphaudit.Report) -> list[tuple[str, tuple[str, ...]]]:
    return [(f.subject, f.subjects) for f in report.by_check("GA703")]


def test_a_ratio_of_sums_of_exponentials_is_not_reported():
    assert warnings_of(graphaudit.audit(Recurrence(), inputs=X)) == []


@pytest.mark.parametrize("kind", ["difference", "count", "variance", "norm", "data"])
def test_a_divisor_that_can_be_zero_is_reported(kind):
    (finding,) = graphaudit.audit(Divides(kind), inputs=X).by_check("GA703")
    assert finding.severity == "warning" and finding.subject == "(root)"


@pytest.mark.parametrize("kind", ["norm+eps", "softmax-sum", "rms-norm"])
def test_a_divisor_kept_positive_is_not_reported(kind):
    assert warnings_of(graphaudit.audit(Divides(kind), inputs=X)) == []


def test_the_same_division_in_every_block_is_one_finding():
    net = nn.SequentialCell([Divides("norm") for _ in range(3)])
    report = graphaudit.audit(net, inputs=X)
    assert warnings_of(report) == [("0", ("0", "1", "2"))]

"""One cause, one finding: fold a confirming check's findings into the finding they confirm.

A check that declares ``confirms="GA201"`` (GA905: one real training step shows that a
trainable parameter left out of the optimizer did not move) finds again, from other
evidence, what the confirmed check found statically. When every subject of such a finding is
a subject of findings of the confirmed check, it is not reported on its own: those findings
get its ID in ``confirmed_by`` and its message after theirs. A finding about subjects the
static check did not see is kept as it is.

Example:
    >>> from graphaudit.checks import all_checks
    >>> static = Finding("GA201", "trainable-not-in-optimizer", "error", "head", "Left out.", "Add it.",
    ...                  subjects=("head.weight", "head.bias"))
    >>> probe = Finding("GA905", "probe-trainable-not-updated", "error", "head", "Did not move.", "Add it.",
    ...                 subjects=("head.weight", "head.bias"))
    >>> [(f.check_id, f.confirmed_by, f.message) for f in merge_confirmations([static, probe], all_checks().values())]
    [('GA201', ('GA905',), 'Left out. Confirmed by GA905 (probe-trainable-not-updated).')]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from graphaudit.checks import Check
from graphaudit.findings import Finding

__all__ = ["merge_confirmations"]


def merge_confirmations(findings: list[Finding], checks: Iterable[Check]) -> list[Finding]:
    """*findings*, with those of confirming checks folded into the findings they confirm."""
    by_id = {check.check_id: check for check in checks}
    confirmed: dict[int, list[Finding]] = {}  # index of a confirmed finding -> its confirmations
    folded: set[int] = set()
    for index, finding in enumerate(findings):
        target = getattr(by_id.get(finding.check_id), "confirms", None)
        if target is None:
            continue
        subjects = set(finding.subjects)
        hits = [i for i, f in enumerate(findings) if f.check_id == target and subjects & set(f.subjects)]
        if not hits or not subjects <= set().union(*(findings[i].subjects for i in hits)):
            continue  # the static check did not see all of it: it stands on its own
        for i in hits:
            confirmed.setdefault(i, []).append(finding)
        folded.add(index)
    merged = []
    for index, finding in enumerate(findings):
        if index in folded:
            continue
        confirmations = confirmed.get(index)
        if confirmations:
            ids = tuple(dict.fromkeys(c.check_id for c in confirmations))
            names = ", ".join(dict.fromkeys(c.name for c in confirmations))
            finding = dataclasses.replace(
                finding,
                confirmed_by=(*finding.confirmed_by, *ids),
                message=f"{finding.message} Confirmed by {', '.join(ids)} ({names}).",
            )
        merged.append(finding)
    return merged

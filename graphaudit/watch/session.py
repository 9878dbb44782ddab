"""What both entry points share: the watchpoints chosen, judging the run while it trains, the report.

A :class:`Session` owns the :class:`~graphaudit.watch.record.Recorder` of one run. Every
so often (an epoch's end, a NaN loss, the end of training) :meth:`Session.judge` runs the
chosen watchpoints (checks GA950-GA979) on what was recorded so far; a finding not seen
before is logged at once (logger ``graphaudit``) and handed to ``on_finding``; one at or
above ``fail_on`` stops the training with :class:`WatchFailed`. :meth:`Session.finish`
makes the final :class:`~graphaudit.report.Report` and writes the dashboard to ``out``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from graphaudit.checks import Check, all_checks, find_check
from graphaudit.errors import ArgumentError, WatchFailed
from graphaudit.errors.arguments import check_callable, check_names, check_path, checked_call
from graphaudit.evidence import EvidenceSet
from graphaudit.evidence.baseline import baseline_of
from graphaudit.evidence.network import NetworkGraph
from graphaudit.findings import FAIL_ON, Finding
from graphaudit.report import Report
from graphaudit.suggest import did_you_mean
from graphaudit.watch.record import Recorder

__all__ = ["DEFAULT_EVERY", "Session", "WatchFailed", "watchpoints"]

#: Sample the weights and gradients every this many steps (the loss is read at every step).
DEFAULT_EVERY = 50
logger = logging.getLogger("graphaudit")


@checked_call
def watchpoints(selected: Iterable[str] | None = None) -> list[Check]:
    """The watchpoints (checks of the training-watch family), all of them or those *selected* by ID or name.

    Example:
        >>> [c.check_id for c in watchpoints(["loss-not-finite"])]
        ['GA950']
    """
    every = [c for c in all_checks().values() if c.family_key == "950-979"]
    if selected is None:
        return every
    if isinstance(selected, str):
        selected = [selected]
    chosen = []
    for key in selected:
        check = find_check(str(key))
        if check is None or check not in every:
            names = [c.check_id for c in every] + [c.name for c in every]
            raise ArgumentError(
                f"watch(checks=...) got {key!r}, which is not a watchpoint{did_you_mean(str(key), names)}; "
                f"the watchpoints are {', '.join(c.check_id for c in every)}"
            )
        chosen.append(check)
    return chosen


def check_every(every: Any) -> int:
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ArgumentError(f"watch(every=...) takes a whole number of steps >= 1, got {every!r}")
    return every


class Session:
    """One watched run: its recorder, its watchpoints, and what they found so far."""

    def __init__(
        self,
        *,
        every: int,
        checks: Iterable[str] | None,
        fail_on: str,
        out: str | Path | None,
        on_finding: Callable[[Finding], Any] | None,
        layers: Sequence[str] = (),
        baseline: Any = None,
        config: Any = None,
    ) -> None:
        from graphaudit.runner import configuration

        if fail_on not in FAIL_ON:
            raise ArgumentError(f"watch(fail_on=...) takes one of {', '.join(FAIL_ON)}, got {fail_on!r}")
        self.every = check_every(every)
        if checks is not None and not isinstance(checks, str):
            checks = check_names(checks, "checks", "watch()", what="watchpoint IDs or names")
        self.checks = watchpoints(checks)
        # what is reported follows [tool.graphaudit] (or config=), as for audit(): read once, at the start
        self.config = configuration(config, "watch()")
        self.fail_on = fail_on
        self.out = check_path(out, "out", "watch()", allow_none=True)
        self.on_finding = check_callable(on_finding, "on_finding", "watch()", takes="a Finding")
        self.layers = tuple(check_names(layers, "layers", "watch()", what="cell paths"))
        # read now, before any training: a missing or foreign file says so at once (JSON only)
        self.baseline = None if baseline is None else baseline_of("baseline", baseline)
        self.recorder: Recorder | None = None
        self.report: Report | None = None
        self._net: Any = None
        self._optimizer: Any = None
        self._graph: NetworkGraph | None = None
        self._seen: set[tuple[str, str]] = set()

    def start(self, net: Any, optimizer: Any, params: Sequence[Any], batch_size: int | None) -> Recorder:
        self._net, self._optimizer = net, optimizer
        # An optimizer built with loss_scale=S gets gradients S times too large and divides them itself
        # (TrainOneStepCell(sens=S), a FixedLossScaleManager): the watch reads the true ones.
        scale = float(getattr(optimizer, "loss_scale", 1.0) or 1.0)
        self.recorder = Recorder(params, every=self.every, batch_size=batch_size, gradient_scale=scale)
        record = self.recorder.record
        record.network_parameters = (
            tuple(p.name for p in net.get_parameters()) if hasattr(net, "get_parameters") else ()
        )
        if self.baseline is not None:
            self.baseline.check_network(
                record.network_parameters or record.parameters, dict(zip(record.parameters, record.sizes))
            )
        return self.recorder

    @property
    def record(self) -> Any:
        return None if self.recorder is None else self.recorder.record

    def _report(self) -> Report:
        from graphaudit.runner import judged
        from graphaudit.runner.request import build_request

        options = {"watched": self.record}
        if self.baseline is not None:
            options["baseline"] = self.baseline
        request = build_request(self._net, self._optimizer, options=options)
        given = {} if self._graph is None else {NetworkGraph: self._graph}
        have = EvidenceSet(request, given)
        self._graph = have.need(NetworkGraph)  # the structure does not change while training: made once
        return judged(have, self.config, self.checks)

    def judge(self) -> Report:
        """Run the watchpoints on the run so far; say each new finding; stop on one at ``fail_on``."""
        report = self._report()
        self.report = report
        failing = None
        for finding in report.findings:
            key = (finding.check_id, finding.subject)
            if key in self._seen:
                continue
            self._seen.add(key)
            logger.warning("graphaudit watch: %s", finding)
            if self.on_finding is not None:
                self.on_finding(finding)
            if failing is None and finding.severity in FAIL_ON[self.fail_on]:
                failing = finding
        if failing is not None:
            self.record.stopped = f"{failing.check_id} at step {self.record.steps}"
            self.write_dashboard()
            raise WatchFailed(report, failing)
        return report

    def finish(self) -> Report:
        """The final report (the run is over: the end-of-run watchpoints judge too), and the dashboard."""
        if self.recorder is None:
            raise ArgumentError("the watch saw no training: nothing was run while it watched")
        self.record.finished = True
        try:
            return self.judge()
        finally:
            self.write_dashboard()

    def write_dashboard(self) -> None:
        if self.out is None or self.recorder is None:
            return
        from graphaudit.watch.dashboard import write_dashboard

        losses = self.baseline.losses if self.baseline is not None else ()
        write_dashboard(self.record, self.report, self.out, layers=self.layers, baseline=losses)

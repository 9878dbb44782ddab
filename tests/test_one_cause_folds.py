"""One cause, one finding across checks (issue 22): what a second check says about the same cause folds in.

Each case is the newcomer's bug on a real small network: a head replaced after the optimizer
was built (GA201 and GA905 fold into GA202), a backbone left in eval mode (GA502 into GA501),
a learning rate of 10 run for five probe steps (GA907 into GA908, GA908 into GA721). And the
other side: what the confirmed check does not cover stays its own finding, and so does what
says the other way (steps too large, a rate below its range).
"""

from __future__ import annotations

import dataclasses
import re

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.checks import all_checks, register
from graphaudit.findings import Finding
from graphaudit.runner.merge import fold_order, merge_confirmations

CHECKS = all_checks()


def loud(report: graphaudit.Report) -> list[tuple[str, str]]:
    return [(f.check_id, f.severity) for f in report.findings if f.severity != "info"]


def named_checks_are_reported(report: graphaudit.Report) -> None:
    """No finding sends the reader to a check the report does not show (``see GA911``)."""
    shown = {i for f in report.findings for i in (f.check_id, *f.confirmed_by)}
    for finding in report.findings:
        for cited in re.findall(r"\bsee (GA\d{3})", f"{finding.message} {finding.fix}"):
            assert cited in shown, (cited, str(finding))


def batch(features: int = 4, classes: int = 2, rows: int = 8) -> tuple[Tensor, Tensor]:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((rows, features)).astype(np.float32))
    return x, Tensor((np.arange(rows) % classes).astype(np.int32))


# -- GA201 (and GA905) into GA202: a head replaced after the optimizer was built -------------------
class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 16), nn.ReLU()])
        self.head = nn.Dense(16, 3)

    def construct(self, x):
        return self.head(self.body(x))


def test_a_head_replaced_after_the_optimizer_is_one_error_naming_both_sides():
    net = Classifier()
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    net.head = nn.Dense(16, 2)  # a new head for 2 classes: the optimizer still holds the old one
    x, y = batch()
    report = graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.CrossEntropyLoss(), probe=True)
    assert loud(report) == [("GA202", "error")], str(report)
    [finding] = report.of_severity("error")
    assert finding.confirmed_by == ("GA201", "GA905")
    # what was seen, both sides: the same name, another object; and both likely causes
    assert "head.weight" in finding.message and "other Parameter objects" in finding.message
    assert (
        "replaced after the optimizer was built" in finding.message and "another instance" in finding.message
    )
    assert (
        "Confirmed by GA201 (trainable-not-in-optimizer) and GA905 (probe-trainable-not-updated)."
        in finding.message
    )
    # every subject stays queryable, and each check still finds its finding
    assert report.about("head.weight") == report.about("head.bias") == [finding]
    assert report.by_check("GA201") == report.by_check("GA905") == [finding]
    named_checks_are_reported(report)


def test_a_head_left_out_without_a_namesake_stays_ga201():
    net = Classifier()
    report = graphaudit.audit(net, nn.Momentum(net.body.trainable_params(), 0.01, 0.9))
    assert loud(report) == [("GA201", "error")], str(report)


# -- GA502 into GA501: a backbone left in eval mode --------------------------------------------------
class ConvBnNet(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        blocks = []
        for cin, cout in ((3, 8), (8, 8), (8, 16)):
            blocks += [nn.Conv2d(cin, cout, 3, has_bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
        self.backbone = nn.SequentialCell(blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.head = nn.SequentialCell([nn.Dropout(p=0.2), nn.Dense(16, 4)])

    def construct(self, x):
        return self.head(self.flatten(self.pool(self.backbone(x))))


def test_a_backbone_left_in_eval_mode_is_one_error():
    net = ConvBnNet()
    net.set_train(True)
    net.backbone.set_train(False)  # left over from looking at the features
    report = graphaudit.audit(net, nn.Momentum(net.trainable_params(), 0.01, 0.9), mode="train")
    assert loud(report) == [("GA501", "error")], str(report)
    [finding] = report.by_check("GA502")
    assert finding.check_id == "GA501" and finding.confirmed_by == ("GA502",)
    assert report.about("backbone") == [finding]  # GA502's subject, kept
    assert report.about("backbone.1") == [finding]  # a BatchNorm, GA501's
    named_checks_are_reported(report)


def test_a_ga502_whose_cells_ga501_does_not_report_stays_on_its_own():
    net = ConvBnNet()
    net.set_train(True)
    net.backbone.set_train(False)
    for p in net.backbone.get_parameters():  # a frozen backbone: its BatchNorms stay in eval mode on purpose
        p.requires_grad = False
    report = graphaudit.audit(net, nn.Momentum(net.trainable_params(), 0.01, 0.9), mode="train")
    assert not report.by_check("GA501")
    [finding] = report.by_check("GA502")
    assert (finding.check_id, finding.severity, finding.subject) == ("GA502", "warning", "backbone")
    assert not finding.confirmed_by


# -- GA907 into GA908 into GA721: a learning rate of 10 ----------------------------------------------
def mlp() -> nn.Cell:
    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(16, 64), nn.ReLU(), nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 4)])


def test_a_learning_rate_far_off_is_one_finding_with_the_probes_numbers():
    net = mlp()
    x, y = batch(16, 4, 16)
    optimizer = nn.SGD(net.trainable_params(), learning_rate=10.0)
    report = graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.CrossEntropyLoss(), probe=5)
    static = graphaudit.audit(mlp(), nn.SGD(mlp().trainable_params(), learning_rate=10.0))
    assert [(f.check_id, f.severity) for f in static.by_check("GA721")] == [("GA721", "info")]  # alone: info
    lr = [f for f in report.findings if {"GA721", "GA907", "GA908"} & {f.check_id, *f.confirmed_by}]
    assert len(lr) == 1, str(report)
    [finding] = lr
    # the probe confirmed it: the worse severity (the loss grew 1e8-fold in 5 steps: measured divergence,
    # an error), the static message then the probe's numbers
    assert (finding.check_id, finding.severity, finding.subject) == ("GA721", "error", "SGD")
    assert finding.confirmed_by == ("GA908", "GA907")
    assert finding.message.startswith(static.by_check("GA721")[0].message)
    assert "times their norm" in finding.message and "loss per step" in finding.message
    assert report.by_check("GA907") == report.by_check("GA908") == [finding]
    assert report.about("0.weight") == [finding]  # GA908 measured it; GA721 already listed it
    assert CHECKS["GA721"].direction_of(static.by_check("GA721")[0]) == "too large"
    named_checks_are_reported(report)


def test_adam_far_above_its_range_folds_the_rising_loss_in_too():
    net = mlp()
    x, y = batch(16, 4, 16)
    report = graphaudit.audit(
        net,
        nn.Adam(net.trainable_params(), learning_rate=1.0),
        inputs=x,
        label=y,
        loss_fn=nn.CrossEntropyLoss(),
        probe=5,
    )
    [finding] = [f for f in report.findings if {"GA721", "GA907", "GA908"} & {f.check_id, *f.confirmed_by}]
    assert (finding.check_id, finding.severity) == ("GA721", "warning"), str(report)
    assert "above the plausible range" in finding.message and "GA907" in finding.confirmed_by
    assert "loss per step" in finding.message  # GA907's curve (Adam's steps stay about the rate: no GA908)
    named_checks_are_reported(report)


def test_a_probe_whose_loss_explodes_is_an_error_and_the_report_is_not_ok():
    """Issue 37: SGD(1e4) took another MLP's loss from 1.4 to 5e25 in five probe steps, still finite, and
    the report was OK. SGD(100) does the same to this one (NaN comes later: GA912 would say it)."""
    net = mlp()
    x, y = batch(16, 4, 16)
    report = graphaudit.audit(
        net, nn.SGD(net.trainable_params(), 100.0), inputs=x, label=y, loss_fn=nn.CrossEntropyLoss(), probe=5
    )
    assert not report.by_check("GA912"), str(report)  # every loss of the probe is finite
    [finding] = [f for f in report.findings if {"GA721", "GA907"} & {f.check_id, *f.confirmed_by}]
    assert finding.severity == "error" and "diverging" in finding.message and not report.ok, str(report)


def test_a_loss_that_rises_without_exploding_stays_a_warning():
    """Adam(1) on this batch rises but stays within a thousandfold of its first loss."""
    net = mlp()
    x, y = batch(16, 4, 16)
    report = graphaudit.audit(
        net, nn.Adam(net.trainable_params(), 1.0), inputs=x, label=y, loss_fn=nn.CrossEntropyLoss(), probe=5
    )
    [finding] = [f for f in report.findings if "GA907" in (f.check_id, *f.confirmed_by)]
    assert finding.severity == "warning" and "diverging" not in finding.message, str(report)


def test_steps_too_large_at_a_rate_below_its_range_stay_two_findings():
    """Regression targets in the hundreds of millions, the rate lowered to 1e-7 to tame them.

    The rate is below SGD's range (GA721) and the steps still replace the weights (GA908, the
    loss rising with them: GA907): the targets want scaling. Folded, one finding would say the
    rate is too small and, confirmed, that it is too large; kept apart, each says its own.
    """
    net = mlp()
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    y = Tensor((rng.standard_normal((16, 4)) * 1e8).astype(np.float32))
    optimizer = nn.SGD(net.trainable_params(), learning_rate=1e-7)
    report = graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.MSELoss(), probe=5)
    [rate] = report.by_check("GA721")
    [steps] = report.by_check("GA908")
    assert (rate.check_id, rate.severity, rate.confirmed_by) == ("GA721", "warning", ()), str(report)
    assert "below the plausible range" in rate.message and "times their norm" not in rate.message
    assert CHECKS["GA721"].direction_of(rate) == "too small"
    assert (steps.check_id, steps.confirmed_by) == ("GA908", ("GA907",))  # what agrees still folds
    assert "times their norm" in steps.message and "below the" not in steps.message
    named_checks_are_reported(report)


def test_ga908_without_ga721_stays_on_its_own():
    net = mlp()
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    y = Tensor((rng.standard_normal((16, 4)) * 1000).astype(np.float32))  # regression targets in raw units
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.01)  # a usual SGD rate: GA721 is silent
    report = graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.MSELoss(), probe=5)
    assert not [f for f in report.findings if f.check_id == "GA721"], str(report)
    [finding] = report.by_check("GA908")
    # the loss rose a thousandfold and more within the probe (GA907): measured divergence, an error
    assert (finding.check_id, finding.severity) == ("GA908", "error")
    assert finding.confirmed_by == ("GA907",) and report.by_check("GA907") == [finding]  # the loss rose too
    named_checks_are_reported(report)


# -- the declarations and the merge itself ---------------------------------------------------------
def finding(check_id: str, severity: str, subjects: tuple[str, ...], message: str = "") -> Finding:
    check = CHECKS[check_id]
    return Finding(
        check_id, check.name, severity, subjects[0], message or f"{check_id} says.", "Fix.", subjects=subjects
    )


def test_a_chain_folds_from_its_far_end_whatever_the_order_of_the_findings():
    static = finding("GA721", "info", ("SGD", "0.weight", "0.bias"), "Rate far off.")
    ratio = finding("GA908", "warning", ("0.weight",), "Updates too large.")
    curve = finding("GA907", "warning", ("(root)",), "Loss rose.")
    for order in ([static, ratio, curve], [curve, ratio, static], [ratio, static, curve]):
        [merged] = merge_confirmations(order, CHECKS.values())
        assert merged.check_id == "GA721" and merged.severity == "warning"
        assert merged.confirmed_by == ("GA908", "GA907")
        assert merged.message == (
            "Rate far off. Confirmed by GA908 (probe-learning-rate-too-large): Updates too large. "
            "Confirmed by GA907 (probe-loss-rising): Loss rose."
        )
        assert merged.subjects == ("SGD", "0.weight", "0.bias", "(root)")


def ga721(side: str, layer: str = "0", group: int | None = None) -> Finding:
    """A GA721 finding as the check makes it: the rate of *layer* *side* (above, below) its range."""
    from graphaudit.checks.ga721_learning_rate_out_of_range import LearningRateOutOfRange

    rate, low = (1e-6, 1e-5) if side == "below" else (1.0, 1e-7)
    cause = LearningRateOutOfRange(
        "Adam",
        "Adam-like",
        "fixed",
        rate,
        group,
        layer,
        side,
        "plausible",
        low,
        0.03,
        1e-5,
        0.01,
        "Kingma & Ba 2015",
    )
    return dataclasses.replace(
        finding("GA721", "warning", ("Adam", f"{layer}.weight", f"{layer}.bias"), cause.message()),
        fix=cause.fix(),
        cause=cause,
    )


def test_a_fold_that_would_say_both_ways_keeps_both():
    below, above = ga721("below"), ga721("above")
    assert (CHECKS["GA721"].direction_of(below), CHECKS["GA721"].direction_of(above)) == (
        "too small",
        "too large",
    )
    ratio = finding("GA908", "warning", ("0.weight",), "Updates too large.")
    curve = finding("GA907", "warning", ("(root)",), "Loss rose.")
    for order in ([below, ratio, curve], [curve, ratio, below]):
        kept = merge_confirmations(order, CHECKS.values())
        assert sorted((f.check_id, f.confirmed_by) for f in kept) == [("GA721", ()), ("GA908", ("GA907",))]
        assert below in kept
    assert merge_confirmations([below, curve], CHECKS.values()) == [below, curve]  # GA907 alone: kept too
    [merged] = merge_confirmations([above, ratio, curve], CHECKS.values())  # the rate too large: one finding
    assert merged.confirmed_by == ("GA908", "GA907") and merged.message.startswith(above.message)
    # two parameter groups, one rate above and one below: each group's steps go with their own rate only
    high, low = ga721("above", "0", 0), ga721("below", "4", 1)
    ratio_high, ratio_low = (finding("GA908", "warning", (f"{n}.weight",), f"Group {n}.") for n in "04")
    merged, kept_low, kept_ratio = merge_confirmations([high, low, ratio_high, ratio_low], CHECKS.values())
    assert (merged.check_id, merged.confirmed_by, kept_low, kept_ratio) == (
        "GA721",
        ("GA908",),
        low,
        ratio_low,
    )


def test_what_the_confirmed_check_does_not_cover_stays():
    ratio = finding("GA908", "warning", ("1.weight",))
    static = finding("GA721", "info", ("Adam", "0.weight"))  # another parameter group's rate
    assert merge_confirmations([static, ratio], CHECKS.values()) == [static, ratio]
    curve = finding("GA907", "warning", ("(root)",))
    [kept_static, kept_ratio] = merge_confirmations([static, ratio, curve], CHECKS.values())
    assert kept_static == static and kept_ratio.check_id == "GA908" and kept_ratio.confirmed_by == ("GA907",)
    mode = finding("GA502", "warning", ("backbone",))
    elsewhere = finding("GA501", "error", ("head.0",))
    assert merge_confirmations([elsewhere, mode], CHECKS.values()) == [elsewhere, mode]
    inside = finding("GA501", "error", ("backbone.1", "backbone.4"))
    [merged] = merge_confirmations([inside, mode], CHECKS.values())
    assert merged.subjects == ("backbone.1", "backbone.4", "backbone") and merged.confirmed_by == ("GA502",)


def test_the_declared_folds():
    assert fold_order(CHECKS.values()).index("GA905") < fold_order(CHECKS.values()).index("GA201")
    assert CHECKS["GA201"].confirms == ("GA202",)
    assert (CHECKS["GA502"].confirms, CHECKS["GA502"].covered_by) == (("GA501",), "cells")
    assert (CHECKS["GA908"].confirms, CHECKS["GA908"].keeps_message) == (("GA721",), "both")
    assert CHECKS["GA907"].confirms == ("GA908", "GA721")
    for check in CHECKS.values():
        assert set(check.confirms) <= set(CHECKS), (check.check_id, check.confirms)


@pytest.mark.parametrize(
    ("keywords", "error"),
    [
        ({"confirms": "GA9"}, "confirms= takes the IDs"),
        ({"confirms": "GA990"}, "confirms= takes the IDs"),
        ({"confirms": "GA201", "covered_by": "names"}, "covered_by= is one of"),
        ({"confirms": "GA201", "keeps_message": "mine"}, "keeps_message= is one of"),
        ({"covered_by": "cells"}, "say how it folds into what it confirms="),
        ({"confirms": "GA201", "direction": 1}, "direction= is a word"),
    ],
)
def test_a_malformed_fold_is_refused_at_import(keywords, error):
    def run(ctx):
        """X.

        What it does: x. Why is this bad: x. Example: x. Use instead: x.
        """
        return iter(())

    with pytest.raises(ValueError, match=error):
        register("GA990", "fold-test", severity="warning", **keywords)(run)
    assert "GA990" not in all_checks()

"""The text report: short by default, every detail one option away (JSON and SARIF keep everything)."""

import json

import numpy as np
from mindspore import Tensor, nn

import graphaudit
from graphaudit.findings import Finding
from graphaudit.report import SUBJECTS_SHOWN, Report


def test_checks_not_run_take_one_line_unless_asked_for():
    report = graphaudit.audit(nn.Dense(3, 2))
    assert report.not_run
    short = report.text()
    assert "\nNOT RUN\n" not in short
    assert short.splitlines()[-1] == (
        f"NOT RUN: {len(report.not_run)} checks (what each needs: report.not_run, or "
        "report.text(not_run=True))"
    )
    full = report.text(not_run=True)
    assert "\nNOT RUN\n" in full and all(n.check_id in full for n in report.not_run)
    assert str(report) == short


def grouped_finding(count: int) -> Finding:
    subjects = tuple(f"backbone.{i}.weight" for i in range(count))
    return Finding("GA204", "misspelt-freeze-attribute", "error", "backbone", "m", "f", subjects=subjects)


def test_a_group_of_many_subjects_shows_the_first_few_and_a_count():
    report = Report([grouped_finding(260)], graphaudit.to_networkx(nn.Dense(2, 2)))
    line = next(line for line in str(report).splitlines() if line.strip().startswith("subjects:"))
    assert line.count(",") == SUBJECTS_SHOWN - 1
    assert line.endswith(f"and {260 - SUBJECTS_SHOWN} more (260 in all)")
    assert len(json.loads(report.to_json())["findings"][0]["subjects"]) == 260  # everything stays in JSON


def test_a_small_group_is_listed_whole():
    text = Report([grouped_finding(SUBJECTS_SHOWN)], graphaudit.to_networkx(nn.Dense(2, 2))).text()
    assert f"backbone.{SUBJECTS_SHOWN - 1}.weight\n" in text and "more" not in text


def test_subjects_the_message_already_names_are_not_listed_again():
    net = nn.SequentialCell(
        [nn.Dense(4, 4)] + [nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()]) for _ in range(6)]
    )
    for param in net.trainable_params()[2:]:
        param.require_grad = False  # the typo: one cause over 12 parameters, named once
    text = graphaudit.audit(net, nn.SGD(net.trainable_params())).text()
    assert sum("GA204" in line for line in text.splitlines()) == 1, text
    assert "subjects:" not in text, text
    assert text.count("1.0.weight") == 1, text  # the message lists it; the text does not repeat it
    unnamed = Finding(
        "GA204",
        "misspelt-freeze-attribute",
        "error",
        "backbone",
        "12 parameters.",
        "f",
        subjects=("backbone.0.weight", "backbone.1.weight"),
    )
    assert (
        "subjects: backbone.0.weight, backbone.1.weight"
        in Report([unnamed], graphaudit.to_networkx(net)).text()
    )


def test_the_text_still_reports_a_traced_audit_in_full():
    net = nn.Dense(3, 2)
    x = Tensor(np.ones((2, 3), np.float32))
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), inputs=x)
    assert report.text().startswith(f"graphaudit report for Dense: {report.summary()}")

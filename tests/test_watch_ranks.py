"""The ranks' losses in the watch (GA963, GA964): the judgement on hand-made records, the exchange's pieces, the dashboard.

The real two-rank jobs are the samples' (``samples/GA963``, ``samples/GA964``, one shared
``msrun`` job); here everything runs in one process, cheaply: what a gathered vector becomes,
which records the watchpoints judge and how, and what the dashboard shows of them.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from mindspore import nn

import graphaudit
from graphaudit.checks._shared.rank_losses import departures, identical_groups, same
from graphaudit.evidence.training import RankStep, RunRecord, Sample
from graphaudit.watch.dashboard import dashboard_html, samples_lines
from graphaudit.watch.ranks import RankLossExchange, local_vector, rank_step


def steps_of(losses: np.ndarray) -> list[RankStep]:
    """``losses[step, rank]`` as the gathered steps of a run sampled at every step."""
    return [RankStep(i + 1, tuple(float(v) for v in row)) for i, row in enumerate(losses)]


def healthy(rng: np.random.Generator, steps: int, world: int, noise: float = 0.08) -> np.ndarray:
    """A falling loss, each rank's batch adding its own noise: ranks reading their own shards."""
    curve = 1.4 * np.exp(-np.arange(steps) / (steps / 2)) + 0.3
    return (curve[:, None] + rng.normal(0.0, noise, (steps, world))).astype(np.float32)


def audit(steps: list[RankStep], world: int, check: str) -> graphaudit.Report:
    losses = [s.losses[0] for s in steps]
    record = RunRecord(("w",), losses=losses, epochs=[1] * len(losses), finished=True, world_size=world)
    record.rank_steps = list(steps)
    return graphaudit.audit(nn.Dense(2, 2), watched=record, select=[check], config=False)


# -- GA963: the same losses on several ranks ----------------------------------------------------
def test_the_same_losses_at_every_step_after_the_first_are_one_group():
    losses = healthy(np.random.default_rng(0), 6, 1)
    assert identical_groups(steps_of(np.repeat(losses, 2, axis=1))) == [(0, 1)]


def test_losses_that_differ_at_one_step_by_more_than_rounding_are_never_identical():
    losses = np.repeat(healthy(np.random.default_rng(0), 6, 1), 2, axis=1)
    losses[4, 1] += 1e-4
    assert identical_groups(steps_of(losses)) == []


def test_rounding_is_a_few_float32_units_and_the_first_step_is_not_judged():
    assert same(1.0, float(np.nextafter(np.float32(1.0), np.float32(2.0))))
    assert not same(1.0, 1.0 + 1e-5)
    losses = np.repeat(healthy(np.random.default_rng(1), 6, 1), 2, axis=1)
    losses[0, 1] += 0.5  # the first step differs: the rest still read the same batches
    assert identical_groups(steps_of(losses)) == [(0, 1)]


def test_too_few_steps_or_a_loss_that_never_moves_say_nothing():
    losses = np.repeat(healthy(np.random.default_rng(2), 3, 1), 2, axis=1)  # 2 steps after the first
    assert identical_groups(steps_of(losses)) == []
    constant = np.full((10, 2), np.float32(np.log(4.0)))  # a constant output: the same loss on any data
    assert identical_groups(steps_of(constant)) == []


def test_pairs_of_ranks_on_the_same_shard_are_named_in_groups():
    pair = healthy(np.random.default_rng(3), 6, 2)
    assert identical_groups(steps_of(pair[:, [0, 1, 0, 1]])) == [(0, 2), (1, 3)]


def test_ga963_fires_on_identical_ranks_and_is_silent_on_sharded_ones():
    same_data = steps_of(np.repeat(healthy(np.random.default_rng(4), 8, 1), 2, axis=1))
    report = audit(same_data, 2, "GA963")
    (finding,) = report.by_check("GA963")
    assert finding.severity == "error" and "all 2 ranks" in finding.message and "num_shards" in finding.fix
    assert not audit(steps_of(healthy(np.random.default_rng(4), 8, 2)), 2, "GA963").findings


def test_the_watchpoints_are_not_run_without_the_ranks_losses():
    record = RunRecord(("w",), losses=[1.0, 0.9], epochs=[1, 1], finished=True)
    report = graphaudit.audit(nn.Dense(2, 2), watched=record, select=["GA963", "GA964"], config=False)
    assert "GA963" not in report.checks_run and "GA964" not in report.checks_run


# -- GA964: one rank far from the others --------------------------------------------------------
@pytest.mark.parametrize("world", [2, 3, 4])
def test_healthy_ranks_never_depart(world):
    rng = np.random.default_rng(world)
    alarms = [departures(steps_of(healthy(rng, steps, world))) for steps in (8, 16, 48) for _ in range(100)]
    assert not any(alarms)


def test_a_rank_whose_loss_stays_high_departs_and_two_ranks_are_named_both():
    losses = healthy(np.random.default_rng(5), 16, 2)
    losses[:, 1] = 1.5 + np.random.default_rng(6).normal(0.0, 0.08, 16)  # its labels shuffled: no learning
    found = departures(steps_of(losses))
    assert found is not None and found.ranks == (0, 1) and found.means[1] > found.means[0]
    (finding,) = audit(steps_of(losses), 2, "GA964").by_check("GA964")
    assert finding.severity == "warning" and finding.subjects[0] == "rank 1"


def test_of_three_ranks_only_the_odd_one_is_named():
    losses = healthy(np.random.default_rng(7), 16, 3)
    losses[:, 2] *= 3.0
    found = departures(steps_of(losses))
    assert found is not None and found.ranks == (2,)


def test_a_far_noisier_rank_does_not_widen_the_yardstick():
    """Inputs 10x too large: that rank's loss jumps around far above the others'."""
    losses = healthy(np.random.default_rng(8), 12, 2)
    losses[:, 1] += np.abs(np.random.default_rng(9).normal(0.8, 0.6, 12))
    found = departures(steps_of(losses))
    assert found is not None and found.sigma < 0.15


def test_fewer_than_eight_steps_or_non_finite_losses_are_not_judged():
    losses = healthy(np.random.default_rng(10), 7, 2)
    losses[:, 1] += 5.0
    assert departures(steps_of(losses)) is None
    losses = healthy(np.random.default_rng(10), 9, 2)
    losses[:, 1] += 5.0
    losses[3, 0] = np.nan  # 8 finite steps are left: judged
    assert departures(steps_of(losses)) is not None


# -- the exchange's pieces (the collective itself runs in the samples' msrun job) ----------------
def test_the_local_vector_is_the_loss_the_total_gradient_norm_and_whether_it_was_seen():
    record = RunRecord(("a", "b"), losses=[2.0, 1.5])
    record.samples.append(Sample(2, [1.0, 1.0], [0.1, 0.1], grad_norms=[3.0, 4.0]))
    assert local_vector(record, 2).tolist() == [1.5, 5.0, 1.0]
    vector = local_vector(record, 3)  # no sample of that step: no gradients
    assert vector[0] == 1.5 and np.isnan(vector[1]) and vector[2] == 0.0
    assert vector.dtype == np.float32


def test_the_gathered_rows_become_a_rank_step():
    rows = np.array([[0.5, 2.0, 1.0], [0.75, np.inf, 1.0]], np.float32)
    assert rank_step(3, rows) == RankStep(3, (0.5, 0.75), (2.0, None))
    rows[:, 2] = 0.0
    assert rank_step(3, rows).grad_norms is None


def test_without_communication_there_is_no_exchange():
    assert RankLossExchange.when_distributed(RunRecord(("w",)), 1) is None


# -- the dashboard ------------------------------------------------------------------------------
def test_the_dashboard_shows_the_ranks_side_by_side_and_the_samples_list_them():
    record = RunRecord(("w",), losses=[1.0, 0.9, 0.8], epochs=[1, 1, 1], world_size=2)
    record.rank_steps = [RankStep(s, (1.0 / s, 1.2 / s), (0.5, 0.5)) for s in (1, 2, 3)]
    html = dashboard_html(record, None)
    assert len(re.findall(r'<polyline class="rank" data-rank="\d"', html)) == 2
    table = html[html.index('<table id="rank-table">') :]
    assert table.count("<tr><td>") == 2 and "0.4" in table  # rank 1's last loss, 1.2 / 3
    ranks = [json.loads(line) for line in samples_lines(record) if '"ranks"' in line]
    assert ranks[-1]["losses"] == [1.0 / 3, 1.2 / 3] and ranks[0]["grad_norms"] == [0.5, 0.5]
    assert "rank-losses" not in dashboard_html(RunRecord(("w",), losses=[1.0], epochs=[1]), None)

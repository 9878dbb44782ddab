"""A known-good run to judge the watched run against (``Watch(baseline=...)``, ``audit(..., baseline=...)``).

The baseline is the ``samples.jsonl`` that a watch wrote with ``out=`` for an earlier, healthy
run of the same recipe (:mod:`graphaudit.watch.dashboard` describes the format), or that run's
:class:`~graphaudit.evidence.training.RunRecord`. It is read as JSON and nothing else: no line of
it is ever executed or unpickled. A file that is missing, that is not a watch's samples, or that
was written for another network (its parameters are not this network's) raises
:class:`~graphaudit.errors.BaselineError` saying which.

:class:`WatchBaseline` is the baseline itself (the loss at every step: GA966);
:class:`BaselineSamples` the steps that both runs sampled, paired (GA967, GA968), missing when
fewer than :data:`MIN_COMPARED` were (the runs sampled at different ``every=``).

Example:
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "samples.jsonl"
    >>> lines = [{"kind": "run", "parameters": ["w"], "every": 1}, {"kind": "step", "step": 1, "loss": 2.0}]
    >>> _ = path.write_text("\\n".join(json.dumps(line) for line in lines))
    >>> base = read_baseline(path)
    >>> base.parameters, base.losses
    (('w',), (2.0,))
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphaudit.errors import ArgumentTypeError, BaselineError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.training import RunRecord, Sample, TrainingRun

__all__ = ["MIN_COMPARED", "BaselineRun", "BaselineSamples", "WatchBaseline", "read_baseline"]

#: The fewest steps sampled in both runs that the per-parameter comparisons judge.
MIN_COMPARED = 3
_HOW = (
    "pass the samples.jsonl that graphaudit.Watch(out=folder) wrote for a healthy run (folder/samples.jsonl)"
)


@dataclass(frozen=True)
class BaselineRun:
    """What a known-good run recorded: its parameters, the loss of every step, its sampled steps."""

    source: str  # the file it was read from, or "a RunRecord"
    parameters: tuple[str, ...]  # the optimizer's, in the order of the samples' lists
    network: tuple[str, ...] = ()  # every parameter of its network (empty: a file written before this)
    sizes: tuple[int, ...] = ()  # of each of ``parameters`` (empty: not written)
    every: int = 1
    losses: tuple[float, ...] = ()
    samples: Mapping[int, Sample] = field(default_factory=dict)  # by step

    def differences(self, network: Sequence[str], sizes: Mapping[str, int]) -> str | None:
        """Why this baseline is of another network than one with parameters *network* (``None``: the same).

        *sizes* are the values of this run's watched parameters, by name.
        """
        here = set(network)
        there = set(self.network) if self.network else set(self.parameters)
        only_there = [n for n in (self.network or self.parameters) if n not in here]
        only_here = [n for n in network if n not in there] if self.network else []
        if only_there or only_here:
            parts = []
            if only_there:
                parts.append(
                    f"{len(only_there)} of its parameters are not in this network ({_few(only_there)})"
                )
            if only_here:
                parts.append(f"{len(only_here)} of this network's are not in it ({_few(only_here)})")
            return "; ".join(parts)
        resized = [
            f"{name} has {size} values there and {sizes[name]} here"
            for name, size in zip(self.parameters, self.sizes)
            if name in sizes and sizes[name] != size
        ]
        return "; ".join(resized[:3]) if resized else None

    def check_network(self, network: Sequence[str], sizes: Mapping[str, int]) -> None:
        """Raise :class:`~graphaudit.errors.BaselineError` when the baseline is of another network."""
        why = self.differences(network, sizes)
        if why is not None:
            raise BaselineError(
                f"baseline= {self.source} was recorded for another network: {why}. Pass the samples.jsonl "
                "of a run of this same network (the same recipe, run healthy once with Watch(out=...))"
            )


def _few(names: Sequence[str]) -> str:
    return ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")


def _number(value: Any) -> float | None:
    """A norm or a loss as written by the dashboard (a number, or ``"nan"``/``"inf"`` text), ``None`` for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value.lower() in ("nan", "inf", "-inf", "infinity", "-infinity"):
        return float(value)
    raise ValueError(f"{value!r} is not a number")


def _numbers(value: Any, count: int, what: str) -> list[float | None]:
    if not isinstance(value, list) or len(value) != count:
        raise ValueError(f"its {what} are not a list of {count} numbers")
    return [_number(v) for v in value]


def _header(line: Any, source: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...], int]:
    names = line.get("parameters") if isinstance(line, dict) and line.get("kind") == "run" else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise BaselineError(
            f"baseline= {source} is not a graphaudit watch's samples.jsonl: its first line is not the "
            f'run header ({{"kind": "run", "parameters": [...]}}); {_HOW}'
        )
    network = line.get("network") or []
    sizes = line.get("sizes") or []
    every = line.get("every") or 1
    if not isinstance(network, list) or not all(isinstance(n, str) for n in network):
        raise BaselineError(f"baseline= {source}: its run header's network is not a list of names")
    if (
        not isinstance(sizes, list)
        or not all(isinstance(n, int) for n in sizes)
        or len(sizes) not in (0, len(names))
    ):
        raise BaselineError(
            f"baseline= {source}: its run header's sizes are not one whole number a parameter"
        )
    if not isinstance(every, int) or every < 1:
        raise BaselineError(f"baseline= {source}: its run header's every is not a whole number >= 1")
    return tuple(names), tuple(network), tuple(sizes), every


def read_baseline(path: str | os.PathLike[str]) -> BaselineRun:
    """The baseline in *path*: a watch's ``samples.jsonl``, or the ``out=`` folder holding one (JSON only)."""
    file = Path(path)
    if file.is_dir():
        file = file / "samples.jsonl"
    source = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"baseline= {source} does not exist: {_HOW}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise BaselineError(f"baseline= {source} could not be read ({type(err).__name__}): {_HOW}") from err
    rows = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    parsed = []
    for number, line in rows:
        try:
            parsed.append((number, json.loads(line)))
        except ValueError:
            raise BaselineError(
                f"baseline= {source} is not a graphaudit watch's samples.jsonl: line {number} is not JSON; {_HOW}"
            ) from None
    if not parsed:
        raise BaselineError(f"baseline= {source} is empty: {_HOW}")
    names, network, sizes, every = _header(parsed[0][1], source)
    losses: dict[int, float] = {}
    samples: dict[int, Sample] = {}
    for number, line in parsed[1:]:
        kind = line.get("kind") if isinstance(line, dict) else None
        try:
            if kind == "step":
                losses[int(line["step"])] = _number(line["loss"])  # type: ignore[assignment]
            elif kind == "sample":
                step, count = int(line["step"]), len(names)
                grads = line.get("grad_norms")
                samples[step] = Sample(
                    step,
                    _numbers(line["weight_norms"], count, "weight norms"),  # type: ignore[arg-type]
                    _numbers(line["update_norms"], count, "update norms"),
                    None if grads is None else _numbers(grads, count, "gradient norms"),
                )
        except (KeyError, TypeError, ValueError) as err:
            raise BaselineError(
                f"baseline= {source}: its line {number} (a {kind}) is not what a watch writes ({err}); {_HOW}"
            ) from None
    steps = sorted(losses)
    if not steps or steps != list(range(1, len(steps) + 1)) or any(v is None for v in losses.values()):
        raise BaselineError(f"baseline= {source} records no training steps numbered 1, 2, ...: {_HOW}")
    return BaselineRun(source, names, network, sizes, every, tuple(losses[s] for s in steps), samples)


def from_record(record: RunRecord) -> BaselineRun:
    """The baseline of a run watched earlier in this process (its ``watch.record``)."""
    samples = {
        s.step: Sample(s.step, list(s.weight_norms), list(s.update_norms), s.grad_norms)
        for s in record.samples
    }
    return BaselineRun(
        "a RunRecord",
        tuple(record.parameters),
        tuple(getattr(record, "network_parameters", ())),
        tuple(record.sizes),
        record.every,
        tuple(record.losses),
        samples,
    )


def baseline_of(name: str, value: Any) -> BaselineRun:
    """*value* (a path, an ``out=`` folder, a watch's RunRecord, or one read already) as a :class:`BaselineRun`."""
    if isinstance(value, BaselineRun):
        return value
    if isinstance(value, RunRecord):
        if not value.losses:
            raise BaselineError(f"{name}= got a RunRecord of a run that trained no step: {_HOW}")
        return from_record(value)
    if isinstance(value, (str, os.PathLike)):
        return read_baseline(value)
    raise ArgumentTypeError(
        f"{name}= takes the path of a watch's samples.jsonl (or its out= folder), or a watch's .record, "
        f"got {type(value).__name__}"
    )


@dataclass(frozen=True)
class WatchBaseline(Evidence):
    """A known-good run of the same recipe: the loss of its every step, its sampled norms."""

    title = "a known-good run of the same recipe (baseline=)"
    requirement = Requirement(
        "no baseline= given: pass graphaudit.Watch(baseline='good_run/samples.jsonl') (or watch(..., baseline=)), "
        "the samples.jsonl a healthy run of the same recipe wrote with out=",
        "train under graphaudit.Watch(baseline=...) in Python; the command line cannot watch a run",
    )
    needs = (TrainingRun,)
    options = (
        Option(
            "baseline",
            "the samples.jsonl (or out= folder) of a healthy watched run of the same recipe, or its RunRecord",
            parse=baseline_of,
        ),
    )

    baseline: BaselineRun

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> WatchBaseline | Missing:
        baseline = request.option("baseline")
        if baseline is None:
            return Missing()
        record = have.need(TrainingRun).record
        network = getattr(record, "network_parameters", ()) or record.parameters
        baseline.check_network(network, dict(zip(record.parameters, record.sizes)))
        return cls(baseline)


@dataclass(frozen=True)
class BaselineSamples(Evidence):
    """The steps sampled in both runs: ``(step, the baseline's sample, this run's)``, in step order."""

    title = "steps sampled in both the baseline and the watched run"
    requirement = WatchBaseline.requirement
    needs = (TrainingRun, WatchBaseline)

    pairs: tuple[tuple[int, Sample, Sample], ...]

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> BaselineSamples | Missing:
        baseline = have.need(WatchBaseline).baseline
        record = have.need(TrainingRun).record
        pairs = tuple(
            (s.step, baseline.samples[s.step], s) for s in record.samples if s.step in baseline.samples
        )
        if len(pairs) < MIN_COMPARED:
            return Missing(
                f"{len(pairs)} steps were sampled in both runs, {MIN_COMPARED} are needed: watch with the "
                f"baseline's every={baseline.every} (this run's is {record.every}), or train longer"
            )
        return cls(pairs)


def finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)

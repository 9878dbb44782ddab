"""The benchmark's table: one row per measurement against its baseline, and the printed text."""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.groups import format_group


def _ratio(value: float | None, baseline: float | None) -> float | None:
    if value is None or baseline is None or baseline <= 0:
        return None
    return value / baseline


def make_row(
    item: str,
    group: str,
    unit: str,
    value: tuple[float | None, float | None],
    baseline_name: str,
    baseline: tuple[float | None, float | None],
    limit: float | None = None,
    *,
    on: str = "ratio",
    note: str = "",
    met: bool | None = None,
    missed_by: str | None = None,
) -> dict[str, Any]:
    """One row. *limit* applies to the median ratio (``on="ratio"``) or the median value (``"value"``)."""
    ratio = _ratio(value[0], baseline[0])
    ratio_min = _ratio(value[1], baseline[1])
    target = None
    if limit is not None:
        target = f"<= {limit:g}x" if on == "ratio" else f"<= {limit:g} {unit}"
        judged = ratio if on == "ratio" else value[0]
        if judged is not None:
            within = judged <= limit
            met = within if met is None else (met and within)
            if not within and missed_by is None:
                missed_by = f"+{(judged / limit - 1) * 100:.0f}%"
    return {
        "item": item,
        "group": group,
        "unit": unit,
        "median": value[0],
        "min": value[1],
        "baseline": baseline_name,
        "baseline_median": baseline[0],
        "baseline_min": baseline[1],
        "ratio": ratio,
        "ratio_min": ratio_min,
        "target": target,
        "met": met,
        "missed_by": missed_by,
        "note": note,
    }


def med_min(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), min(times)


def phase_of(phases: dict[str, Any], name: str) -> tuple[float, float]:
    return phases[name]["median_s"], phases[name]["min_s"]


def invariants_hold(results: dict[str, Any]) -> bool:
    if "lazy" not in results:  # not measured (run.py --only): nothing broken
        return True
    inv = results["lazy"]["invariants"]
    return bool(inv["weights_uninitialised"] and inv["value_checks_not_run"])


def format_table(results: dict[str, Any], table: list[dict[str, Any]]) -> str:
    def num(value: float | None, unit: str) -> str:
        if value is None:
            return "-"
        spec = {"s": ".3f", "MiB": ".1f", "us": ".1f"}[unit]
        return format(value, spec)

    def pair(a: float | None, b: float | None, unit: str, suffix: str = "") -> str:
        text = num(a, unit) + suffix
        return text if b is None else f"{text} / {num(b, unit)}{suffix}"

    def ratio(a: float | None, b: float | None) -> str:
        fa = "-" if a is None else f"{a:.3f}x"
        return fa if b is None else f"{fa} / {b:.3f}x"

    meta = results["meta"]
    groups = results["groups"]
    loaded = [g["title"] for g in groups.values() if g["loaded"]]
    header = (
        f"{'measurement':<44} {'measured med / min':>22} {'baseline':<22} {'baseline med / min':>20} "
        f"{'ratio med / min':>19} {'target':>11}  met"
    )
    lines = [
        f"graphaudit performance: {meta['model']} input {tuple(meta['input_shape'])}, medians / minimums of "
        f"{meta['repeats']} (model), {meta['lm_repeats']} (LM), {meta['scale_repeats']} (synthetic) interleaved "
        f"runs; mindspore {meta['mindspore_version']}, python {meta['python_version']}, {meta['usable_cores']} "
        f"usable cores ({meta['cpu_count']} CPUs, {meta.get('cpu_model', 'CPU unknown')}); "
        f"{meta['wall_seconds']:.0f} s in all"
        + (f"; only the groups {', '.join(meta['only'])}" if meta.get("only") else ""),
        "load: "
        + (
            f"{len(loaded)} of {sum(g['timed'] for g in groups.values())} timed groups LOADED "
            f"(threshold {meta['load_threshold']:g}): their ratios are unreliable"
            if loaded
            else f"every timed group ran below the threshold ({meta['load_threshold']:g})"
        ),
        header,
        "-" * len(header),
    ]
    if "model_time" in results:  # the machine in one number: how fast its kernels are (issue 40)
        forwards = ", ".join(
            f"{mode} {statistics.median(results['model_time']['seconds'][f'forward:{mode}']):.3f} s"
            for mode in results["model_time"]["modes"]
        )
        lines.insert(
            2, f"machine: {meta.get('cpu_model', 'CPU unknown')}; {meta['model']} forward pass {forwards}"
        )
    order = list(dict.fromkeys(row["group"] for row in table))  # each group's rows together, in order
    current = None
    for row in sorted(table, key=lambda row: order.index(row["group"])):
        if row["group"] != current:
            current = row["group"]
            lines.append(format_group(groups[current]))
        unit = row["unit"]
        suffix = {"s": "s", "MiB": "M", "us": "us"}[unit]
        met = {True: "yes", False: "NO", None: ""}[row["met"]]
        if row["met"] is False and row["missed_by"]:
            met += f" {row['missed_by']}"
        if groups[row["group"]]["loaded"]:
            met += " LOADED"
        lines.append(
            f"{row['item']:<44} {pair(row['median'], row['min'], unit, suffix):>22} {row['baseline']:<22} "
            f"{pair(row['baseline_median'], row['baseline_min'], unit):>20} "
            f"{ratio(row['ratio'], row['ratio_min']):>19} {row['target'] or '':>11}  {met}".rstrip()
        )
        for note in filter(None, row["note"].split("\n")):
            lines.append(f"{'':<4}{note}")
    lines.append(
        "units: s = seconds, M = MiB (peak RSS rise), us = microseconds; ratio = measured / baseline "
        "(of the medians, and of the minimums); met: the median against the target, NO +n% = missed by n%"
    )
    if "skipped" in results.get("anchor", {}):
        lines.append(f"13 torchview anchor skipped: {results['anchor']['skipped']}")
    memory = [*results.get("scale_memory", []), *results.get("model_memory", {}).values()]
    if "lazy" in results:
        memory.append(results["lazy"])
    if not all(m["peak_reset"] for m in memory):
        lines.append("note: VmHWM could not be reset; memory is the growth over earlier peaks")
    if not invariants_hold(results):
        lines.append(
            "INVARIANT BROKEN: the LLaMA-shaped audit initialised weights or ran GA601-GA603 (row 8)"
        )
    return "\n".join(lines)

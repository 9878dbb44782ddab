"""A port's comparison with its original, as the report carries it (``Report.reference``).

With ``audit(..., reference=...)`` the report holds, beside the findings of GA630-GA640, what
they were found in: the mapping of the port's parameters to the original's weights (how each
pair was found, and its layout), and, when the original's outputs were compared (GA640), one
row per cell call with msprobe's figures. :func:`reference_section` builds it from the
evidence the audit made (never making more), :func:`reference_lines` is its short text.
The drawing (:mod:`graphaudit.draw.divergence`) and SARIF read the same data.

Example:
    >>> from graphaudit.capture.reference.compare import CallFigures, Comparison, Figures
    >>> import numpy as np
    >>> same = Figures.of(np.float32([1, 2]), np.float32([1, 2]))
    >>> off = Figures.of(np.float32([1, 2]), np.float32([1, 3]))
    >>> calls = (CallFigures("", "", 0, "float32", off, same), CallFigures("fc", "fc", 0, "float32", off, same, ""))
    >>> comparison = Comparison(calls, ((0, "input"), (1, "input"), (1, "output"), (0, "output")), ("act",))
    >>> first_cell(comparison)
    {'port': 'fc', 'reference': 'fc', 'call': 0, 'at': 'output', 'cell': 'fc', 'cell_call': 0}
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from graphaudit.findings import printable

if TYPE_CHECKING:
    from graphaudit.capture.reference.compare import Comparison

__all__ = ["TEXT_ROWS", "first_cell", "reference_lines", "reference_section"]

TEXT_ROWS = 5  # diverging calls the text lists; JSON, SARIF and the HTML page list every call


def first_cell(comparison: Comparison) -> dict[str, Any] | None:
    """Where the port first parts from the original, and the cell GA640 names for it.

    ``port``/``reference``/``call``: the call whose tensors first differ; ``at``: its
    ``"output"`` or its ``"input"``; ``cell``/``cell_call``: the cell that made the difference
    (the call itself for an output; for an input, the caller whose construct fed it, and the
    call of the caller under way then, ``None`` when the caller was not compared).
    """
    found = comparison.first_divergence()
    if found is None:
        return None
    call, at = found
    cell, cell_call = call.port, call.call
    if at == "input":
        cell, cell_call = call.caller or "", None
        index = comparison.calls.index(call)
        for event, kind in comparison.events:  # the caller's call that was under way: its last start before
            if event == index and kind == "input":
                break
            started = comparison.calls[event]
            if kind == "input" and started.port == cell:
                cell_call = started.call
    return {
        "port": call.port,
        "reference": call.reference,
        "call": call.call,
        "at": at,
        "cell": cell,
        "cell_call": cell_call,
    }


def reference_section(weights: Any, outputs: Any, outputs_missing: str | None = None) -> dict[str, Any]:
    """The ``reference`` key of a report: the mapping, and each compared call when outputs were compared.

    *weights* is the audit's :class:`~graphaudit.evidence.reference.ReferenceWeights`,
    *outputs* its :class:`~graphaudit.evidence.reference_outputs.ReferenceOutputs` or ``None``
    (the report layer reads evidence it is handed, and imports none).

    *outputs_missing*: why the outputs were not compared (``None`` when they were, or when
    no check asked for them).
    """
    section: dict[str, Any] = {
        "source": weights.source,
        "format": weights.format,
        "mapping": weights.mapping.to_dict(),
        "matched_fraction": weights.matched_fraction(),
        "unmatched_weights": weights.missing(),
        "unmatched_parameters": weights.added(),
        "compared": outputs is not None,
    }
    if outputs is None:
        section["not_compared"] = outputs_missing or "the original's outputs were not compared"
        return section
    comparison = outputs.comparison
    first = first_cell(comparison)
    rows = []
    for call in comparison.calls:
        row = call.to_dict()
        row["first"] = first is not None and (call.port, call.call) == (first["port"], first["call"])
        rows.append(row)
    section["cells"] = rows
    section["first_divergence"] = first
    section["unmatched_cells"] = list(comparison.unpaired)
    return section


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def reference_lines(section: dict[str, Any]) -> list[str]:
    """The report text's section about the original: the mapping in one line, the compared calls in a few."""
    mapping = section["mapping"]
    how: dict[str, int] = {}
    for pair in mapping["pairs"]:
        how[pair["how"]] = how.get(pair["how"], 0) + 1
        if pair["layout"] == "transposed":
            how["stored transposed"] = how.get("stored transposed", 0) + 1
    ways = ", ".join(
        f"{n} by {way}" if way != "stored transposed" else f"{n} {way}" for way, n in how.items()
    )
    lines = [
        "\nAGAINST THE ORIGINAL (" + printable(os.path.basename(section["source"].rstrip("/\\"))) + ")",
        f"  mapping: {len(mapping['pairs'])} pairs ({ways or 'none'}); "
        f"{len(section['unmatched_weights'])} of the original's weights and "
        f"{len(section['unmatched_parameters'])} port parameters unmatched",
    ]
    if not section["compared"]:
        lines.append(f"  outputs not compared: {printable(section['not_compared'])}")
        return lines
    rows = section["cells"]
    diverging = [r for r in rows if r["diverges"] or r["first"]]
    lines.append(
        f"  outputs: {len(rows)} cell calls compared, {len(diverging)} diverge; "
        f"{len(section['unmatched_cells'])} port cells have no module of the original"
    )
    first = section["first_divergence"]
    if first is not None:
        lines.append(
            printable(
                f"  first divergence: the {first['at']} of {first['port'] or '(root)'} "
                f"(call {first['call'] + 1}), made in {first['cell'] or '(root)'}"
            )
        )
    if diverging:
        lines.append("  cell (call) <- original: cosine, max abs, max rel")
        for row in diverging[:TEXT_ROWS]:
            mark = ""
            if row["first"]:
                mark = (
                    " (first)" if first is None or first["at"] == "output" else " (first: its input differs)"
                )
            figures = (
                f"{_number(row['cosine'])}, {_number(row['max_abs'])}, {_number(row['max_rel'])}"
                if row["compared"]
                else f"not comparable: {row['shapes'] or 'no tensor of one shape'}"
            )
            lines.append(
                printable(
                    f"    {row['port'] or '(root)'} ({row['call'] + 1}) <- {row['reference'] or '(root)'}: "
                    f"{figures}{mark}"
                )
            )
        if len(diverging) > TEXT_ROWS:
            lines.append(
                f"    and {len(diverging) - TEXT_ROWS} more (every call: report.reference, JSON, SARIF)"
            )
    return lines

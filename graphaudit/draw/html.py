"""The self-contained HTML report: an explorer of the graph, its findings, filters, and details.

One file that references nothing outside itself (no URL, no external CSS, script or font):
the page's script (``assets/explorer.js``), its style (``assets/explorer.css``) and Graphviz
compiled to WebAssembly (``assets/viz-global.js``, from the npm package ``@viz-js/viz``; see
``assets/README.md``) are written into it. It opens on a view laid out by Graphviz's ``dot``
in Python, inline as SVG, so it shows at once; expanding a box lays out the new view in the
page. Every text from the network or the findings is HTML-escaped here, or is JSON (made safe
inside a ``<script>`` by :func:`graphaudit.draw.explorer.model_json`) that the script only
ever writes as text; the SVG comes from Graphviz, which escapes the (already DOT-escaped) labels.

Example:
    >>> page = html_page("{}", "<svg></svg>", [], [], title="Net")
    >>> page.startswith("<!DOCTYPE html>"), re.findall(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=", page)
    (True, [])
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from html import escape
from pathlib import Path
from typing import Any

from graphaudit.draw.divergence import AGREE_FILLS, DIVERGE_FILLS, UNMATCHED_FILL, Divergence
from graphaudit.findings import SEVERITIES, Finding, plural

__all__ = ["ASSETS", "Header", "Panel", "asset", "html_page", "inline_svg"]

ASSETS = Path(__file__).resolve().parent / "assets"
NOT_RUN = "not run: "  # how Header.text starts the line of each check that did not run
_PROLOG = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", re.S)
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


@cache
def asset(name: str) -> str:
    """The text of a file of ``graphaudit/draw/assets`` (read once)."""
    return (ASSETS / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Header:
    """What a report page says above its drawing: the outcome of the audit and what did not run.

    *not_run* holds one ``(check ID, reason)`` pair for each check that did not run, the
    reason as the report words it (``NotRun.text()``).

    Example:
        >>> from types import SimpleNamespace
        >>> drawing = SimpleNamespace(view="traced", plan=SimpleNamespace(count=26))
        >>> header = Header(False, {"error": 2, "warning": 0, "info": 1}, 24,
        ...                 [("GA103", "GA103 declared-shared-not-shared needs a declared design"),
        ...                  ("GA801", "needs the fingerprints of the other ranks")])
        >>> print(header.text(drawing))
        FAILED: 2 errors, 0 warnings, 1 info; 24 checks run, 2 not run; traced view, 26 nodes drawn
        not run: GA103 declared-shared-not-shared needs a declared design
        not run: GA801 needs the fingerprints of the other ranks
    """

    ok: bool
    counts: dict[str, int]
    checks_run: int
    not_run: list[tuple[str, str]] = field(default_factory=list)  # (check ID, why it did not run)

    def text(self, drawing: Any) -> str:
        """The outcome on the first line, then ``not run: <ID> <reason>`` for each check that did not run."""
        counts = ", ".join(plural(n, s) for s, n in self.counts.items())
        lines = [
            f"{'OK' if self.ok else 'FAILED'}: {counts}; {plural(self.checks_run, 'check')} run, "
            f"{len(self.not_run)} not run; {drawing.view} view, {plural(drawing.plan.count, 'node')} drawn"
        ]
        for check_id, reason in self.not_run:
            reason = " ".join(reason.splitlines())  # one line each: the page splits on lines
            lines.append(f"{NOT_RUN}{reason if reason.startswith(check_id) else f'{check_id} {reason}'}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Panel:
    """One more drawing the page shows in a tab of its own (a data pipeline), as SVG text.

    *targets* gives, for a finding drawn in it, the SVG ids of what shows it: clicking that
    finding in the table opens the tab and highlights them.
    """

    title: str
    svg: str
    targets: Mapping[Finding, Sequence[str]] = field(default_factory=dict)


def inline_svg(svg: str) -> str:
    """Graphviz's SVG document made ready to sit inside HTML: no prolog, comments or namespaces.

    Example:
        >>> inline_svg('<?xml version="1.0"?>\\n<!-- x -->\\n<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>')
        '<svg><g/></svg>'
    """
    return _XMLNS.sub("", _PROLOG.sub("", svg)).strip()


def _row(index: int, finding: Finding, targets: Sequence[str]) -> str:
    not_drawn = "" if targets else ' <span class="ga-note">(not drawn)</span>'
    cells = [
        f'<td class="ga-id">{escape(finding.check_id)} <span class="ga-sev">{escape(finding.severity)}</span>'
        f'<div class="ga-name">{escape(finding.name)}</div></td>',
        f'<td class="ga-subject">{escape(finding.subject)}</td>',
        f'<td class="ga-message">{escape(finding.message)}{not_drawn}<div class="ga-fix">Fix: {escape(finding.fix)}</div></td>',
    ]
    attrs = (
        f'class="ga-finding ga-sev-{escape(finding.severity)}" tabindex="0" data-index="{index}" '
        f'data-check="{escape(finding.check_id)}" data-severity="{escape(finding.severity)}" '
        f'data-targets="{escape(" ".join(targets))}"'
    )
    return f"<tr {attrs}>{''.join(cells)}</tr>"


def _header(title: str, summary: str, notes: Sequence[str]) -> str:
    outcome, *more = summary.splitlines() or [""]
    not_run = [line.removeprefix(NOT_RUN) for line in more if line.startswith(NOT_RUN)]
    note_html = "".join(f'<p class="ga-note">{escape(n)}</p>' for n in notes)
    note_html += "".join(
        f'<p class="ga-note">{escape(line)}</p>' for line in more if not line.startswith(NOT_RUN)
    )
    if not_run:
        items = "".join(f"<li>{escape(line)}</li>" for line in not_run)
        note_html += (
            f'<details class="ga-not-run"><summary>{plural(len(not_run), "check")} did not run</summary>'
            f"<ul>{items}</ul></details>"
        )
    return f'<header class="ga-head"><h1>{escape(title)}</h1><p class="ga-summary">{escape(outcome)}</p>{note_html}</header>'


def _tabs(panels: Sequence[Panel]) -> tuple[str, str]:
    if not panels:
        return "", ""
    buttons = '<button type="button" class="ga-tab ga-tab-on" data-panel="">network</button>' + "".join(
        f'<button type="button" class="ga-tab" data-panel="{i}">{escape(p.title)}</button>'
        for i, p in enumerate(panels)
    )
    views = "".join(
        f'<div class="ga-canvas ga-panel" data-panel="{i}" hidden tabindex="0">{inline_svg(p.svg)}</div>'
        for i, p in enumerate(panels)
    )
    return f'<nav class="ga-tabs">{buttons}</nav>', views


# Written with the section, not into explorer.css: a page without a reference stays byte for byte as it was.
REFERENCE_CSS = (
    ".ga-app .ga-side > .ga-reference { flex: 0 1 auto; max-height: 40%; overflow: auto; margin-bottom: 8px; }"
    " .ga-reference table { border-collapse: collapse; width: 100%; font-size: 12px; }"
    " .ga-reference td, .ga-reference th { padding: 1px 4px; border-bottom: 1px solid #eef0f2; text-align: left; }"
    " .ga-reference td:first-child { word-break: break-all; }"
    " .ga-reference .ga-ref-first-row { outline: 2px solid #b45a91; }"
    " .ga-ref-swatch { display: inline-block; width: 14px; height: 10px; border: 1px solid #9aa5b1; }"
)
#: The columns of the table of compared calls (:attr:`Divergence.rows`) and of the mapping.
CALL_COLUMNS = ("cell (call)", "original", "cosine", "max abs", "max rel", "input", "")
MAPPING_COLUMNS = ("port parameter", "original weight", "paired by", "layout")


def _table(kind: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = []
    for row in rows:
        first = ' class="ga-ref-first-row"' if kind == "calls" and row[-1] == "first" else ""
        body.append(f"<tr{first}>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>")
    return (
        f'<table class="ga-ref-{kind}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def reference_html(divergence: Divergence | None) -> str:
    """The page's section on a port's comparison with its original: the scale, each compared call, the mapping.

    Example:
        >>> from graphaudit.draw.divergence import Shade
        >>> part = reference_html(Divergence({}, rows=(("fc (1)", "fc", "0.5", "1", "2", "agrees", "first"),)))
        >>> "<td>fc (1)</td>" in part, 'class="ga-ref-first-row"' in part, reference_html(None)
        (True, True, '')
    """
    if divergence is None:
        return ""
    swatch = '<span class="ga-ref-swatch" style="background:{}"></span>'
    scale = (
        f"{swatch.format(AGREE_FILLS[0])} agrees {swatch.format(AGREE_FILLS[1])} at the tolerance "
        f"{swatch.format(DIVERGE_FILLS[0])} {swatch.format(DIVERGE_FILLS[1])} diverges (10<sup>4</sup>&#215;) "
        f"{swatch.format(UNMATCHED_FILL)} not compared; the first divergence has a double border"
    )
    notes = "".join(f'<p class="ga-note">{escape(n)}</p>' for n in divergence.notes)
    calls = (
        f"<details open><summary>{plural(len(divergence.rows), 'cell call')} compared</summary>"
        f'<div class="ga-table-wrap">{_table("calls", CALL_COLUMNS, divergence.rows)}</div></details>'
        if divergence.rows
        else ""
    )
    mapping = (
        f"<details><summary>mapping: {plural(len(divergence.mapping), 'pair')}</summary>"
        f'<div class="ga-table-wrap">{_table("mapping", MAPPING_COLUMNS, divergence.mapping)}</div></details>'
    )
    return (
        f'<section class="ga-reference"><style>{REFERENCE_CSS}</style><h2>Against the original</h2>'
        f'<p class="ga-note">{scale}</p>{notes}{calls}{mapping}</section>'
    )


def html_page(
    model: str,
    svg: str,
    findings: Sequence[Finding],
    targets: Sequence[Sequence[str]],
    *,
    title: str,
    summary: str = "",
    notes: Sequence[str] = (),
    panels: Sequence[Panel] = (),
    reference: Divergence | None = None,
) -> str:
    """The report page: the explorer's *model* (JSON text), the first view *svg*, the findings table.

    *targets* are the SVG ids showing each finding in *svg*; *summary* is :meth:`Header.text`
    (its first line the outcome, each further ``not run: ...`` line one check that did not run);
    *panels* are more drawings (data pipelines), each in a tab; *reference* (a port's
    comparison with its original) adds a section with each compared call and the mapping.

    Example:
        >>> f = Finding("GA201", "trainable-not-in-optimizer", "error", "<b>", "m", "f", ("param:x",))
        >>> page = html_page("{}", "<svg></svg>", [f], [["ga-param_3a_x"]], title="Net",
        ...                  summary="FAILED: 1 error\\nnot run: GA103 needs a <spec>")
        >>> 'data-targets="ga-param_3a_x"' in page, "&lt;b&gt;" in page, "<b>" in page
        (True, True, False)
        >>> print(page[page.index('<details'):page.index('</details>')])
        <details class="ga-not-run"><summary>1 check did not run</summary><ul><li>GA103 needs a &lt;spec&gt;</li></ul>
    """
    counts = Counter(f.severity for f in findings)
    checks = Counter(f.check_id for f in findings)
    names = {f.check_id: f.name for f in findings}
    boxes = "".join(
        f'<label><input type="checkbox" class="ga-severity-filter" value="{s}" checked> {s} ({counts[s]})</label>'
        for s in SEVERITIES
    )
    options = "".join(
        f'<option value="{escape(c)}">{escape(c)} {escape(names[c])} ({n})</option>'
        for c, n in sorted(checks.items())
    )
    rows = "\n".join(_row(i, f, t) for i, (f, t) in enumerate(zip(findings, targets)))
    empty = "" if findings else '<p class="ga-note">No findings.</p>'
    tabs, views = _tabs(panels)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{asset("explorer.css")}</style>
</head>
<body class="ga-page">
<div class="ga-app">
{_header(title, summary, notes)}
{tabs}
<div class="ga-main">
<div class="ga-left">
<div class="ga-toolbar">
<span class="ga-search-box"><input type="search" class="ga-search" placeholder="search a path, class or parameter" aria-label="search the graph" autocomplete="off"><ul class="ga-results" hidden></ul></span>
<button type="button" class="ga-fit" title="fit the drawing to the screen (0)">fit</button>
<button type="button" class="ga-zoom-in" title="zoom in (+)">+</button>
<button type="button" class="ga-zoom-out" title="zoom out (-)">&#8722;</button>
<button type="button" class="ga-actual" title="actual size (1)">100%</button>
<button type="button" class="ga-reset" title="back to the first view">first view</button>
<span class="ga-status" role="status"></span>
</div>
<div class="ga-canvas ga-network" tabindex="0">{inline_svg(svg)}</div>
{views}
</div>
<div class="ga-splitter" role="separator" aria-orientation="vertical" aria-label="resize the findings panel" tabindex="0" title="drag to resize the findings panel (or use the arrow keys)"></div>
<aside class="ga-side">
<section class="ga-findings-box">
<h2>Findings</h2>
<div class="ga-controls">
<span>{boxes}</span>
<label>Check: <select class="ga-check-filter"><option value="">all checks</option>{options}</select></label>
<span><span class="ga-shown">{len(findings)}</span> of {len(findings)} shown; click one to find it in the graph</span>
</div>
<div class="ga-table-wrap">
<table class="ga-findings">
<colgroup><col class="ga-col-id"><col class="ga-col-subject"><col></colgroup>
<thead><tr><th>check</th><th>subject</th><th>message and fix</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
{empty}
</div>
</section>
{reference_html(reference)}<section class="ga-details"><h2>Details</h2><p class="ga-note">Click a box to see what it is; double-click it, or its &#8853; / &#8854;, to open or close it. Drag to pan, wheel to zoom.</p></section>
<section class="ga-legend"><h2>Legend</h2><div class="ga-legend-body"></div></section>
</aside>
</div>
<script type="application/json" class="ga-model">{model}</script>
</div>
<script>{asset("viz-global.js")}</script>
<script>{asset("explorer.js")}</script>
</body>
</html>
"""

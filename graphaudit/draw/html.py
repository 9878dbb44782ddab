"""A self-contained HTML report: the SVG inline, a findings table, highlight on click, filters.

The page references nothing outside itself (no URL, no external CSS, script or font).
Every text from the network or the findings is HTML-escaped; the SVG comes from Graphviz,
which escapes the (already DOT-escaped) labels; the script reads only ``data-*`` attributes
whose values are ids made by :func:`graphaudit.draw.style.svg_id`.

Example:
    >>> page = html_page([], [], "<svg></svg>", title="Net")
    >>> page.startswith("<!DOCTYPE html>"), "http" in page
    (True, False)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from graphaudit.findings import SEVERITIES, Finding, plural

__all__ = ["Header", "html_page", "inline_svg"]

NOT_RUN = "not run: "  # how Header.text starts the line of each check that did not run
_PROLOG = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", re.S)
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1f2933; }
header, #ga-controls, #ga-table-wrap { padding: 0 16px; }
h1 { font-size: 20px; margin: 12px 0 4px; }
.ga-summary { margin: 0 0 8px; color: #52606d; }
#ga-controls { display: flex; gap: 16px; align-items: center; flex-wrap: wrap; margin: 6px 0; }
#ga-table-wrap { max-height: 38vh; overflow: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #e4e7eb; }
th { position: sticky; top: 0; background: #f5f7fa; }
tr.ga-finding { cursor: pointer; }
tr.ga-finding:hover { background: #f0f4f8; }
tr.ga-selected { background: #fff3c4 !important; }
td.ga-sev { font-weight: 600; }
/* The drawing's severity hues, darkened to read as text on white (contrast over 4.5:1). */
tr.ga-sev-error td.ga-sev { color: #a84a00; }
tr.ga-sev-warning td.ga-sev { color: #8a5f00; }
tr.ga-sev-info td.ga-sev { color: #0072b2; }
td.ga-subject, td.ga-id { font-family: ui-monospace, monospace; white-space: nowrap; }
#ga-graph { overflow: auto; border-top: 1px solid #e4e7eb; margin-top: 8px; max-height: 100vh; }
/* Auto margins centre a narrow drawing and fall to 0 for a wide one, which then scrolls from
   its left edge; centring with flex or text-align would push its left side out of reach. */
#ga-graph > svg { display: block; margin: 0 auto; max-width: none; }
#ga-graph.ga-fit > svg { width: 100%; height: auto; }
.ga-not-run { margin: 0 0 8px; color: #52606d; }
.ga-not-run ul { margin: 4px 0; padding-left: 20px; }
#ga-graph g.ga-hl polygon, #ga-graph g.ga-hl path, #ga-graph g.ga-hl ellipse {
  stroke: #9c27b0 !important; stroke-width: 6px !important; }
#ga-graph g.ga-dim { opacity: 0.35; }
#ga-graph g.ga-flagged { cursor: pointer; }
.ga-note { color: #52606d; font-style: italic; }
"""

SCRIPT = """
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll("#ga-findings tr.ga-finding"));
  var checkSelect = document.getElementById("ga-check-filter");
  var severityBoxes = Array.prototype.slice.call(document.querySelectorAll("input.ga-severity-filter"));
  var shownCount = document.getElementById("ga-shown");
  function targets(row) { return row.getAttribute("data-targets").split(" ").filter(Boolean); }
  function clear() {
    Array.prototype.forEach.call(document.querySelectorAll(".ga-hl"), function (el) { el.classList.remove("ga-hl"); });
    rows.forEach(function (row) { row.classList.remove("ga-selected"); });
  }
  function select(row) {
    clear();
    row.classList.add("ga-selected");
    var first = null;
    targets(row).forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { el.classList.add("ga-hl"); first = first || el; }
    });
    if (first) { first.scrollIntoView({block: "center", inline: "center"}); }
  }
  function applyFilter() {
    var severities = {};
    severityBoxes.forEach(function (box) { severities[box.value] = box.checked; });
    var check = checkSelect.value, visible = {}, count = 0;
    rows.forEach(function (row) {
      var show = severities[row.getAttribute("data-severity")] &&
        (!check || row.getAttribute("data-check") === check);
      row.hidden = !show;
      if (show) { count += 1; targets(row).forEach(function (id) { visible[id] = true; }); }
      else if (row.classList.contains("ga-selected")) { clear(); }
    });
    Array.prototype.forEach.call(document.querySelectorAll("#ga-graph g.ga-flagged"), function (el) {
      el.classList.toggle("ga-dim", !visible[el.id]);
    });
    shownCount.textContent = String(count);
  }
  rows.forEach(function (row) {
    row.addEventListener("click", function () { select(row); });
    row.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(row); }
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("#ga-graph g.ga-flagged"), function (el) {
    el.addEventListener("click", function () {
      var row = rows.filter(function (r) { return !r.hidden && targets(r).indexOf(el.id) >= 0; })[0];
      if (row) { select(row); row.scrollIntoView({block: "nearest"}); }
    });
  });
  severityBoxes.forEach(function (box) { box.addEventListener("change", applyFilter); });
  checkSelect.addEventListener("change", applyFilter);
  document.getElementById("ga-fit").addEventListener("change", function (event) {
    document.getElementById("ga-graph").classList.toggle("ga-fit", event.target.checked);
  });
  applyFilter();
})();
"""


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


def inline_svg(svg: str) -> str:
    """Graphviz's SVG document made ready to sit inside HTML: no prolog, comments or namespaces.

    Example:
        >>> inline_svg('<?xml version="1.0"?>\\n<!-- x -->\\n<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>')
        '<svg><g/></svg>'
    """
    return _XMLNS.sub("", _PROLOG.sub("", svg)).strip()


def _row(index: int, finding: Finding, targets: Sequence[str]) -> str:
    cells = [
        f'<td class="ga-id">{escape(finding.check_id)}</td>',
        f"<td>{escape(finding.name)}</td>",
        f'<td class="ga-sev">{escape(finding.severity)}</td>',
        f'<td class="ga-subject">{escape(finding.subject)}</td>',
        f"<td>{escape(finding.message)}"
        + ("" if targets else ' <span class="ga-note">(not drawn)</span>')
        + "</td>",
        f"<td>{escape(finding.fix)}</td>",
    ]
    attrs = (
        f'class="ga-finding ga-sev-{escape(finding.severity)}" tabindex="0" data-index="{index}" '
        f'data-check="{escape(finding.check_id)}" data-severity="{escape(finding.severity)}" '
        f'data-targets="{escape(" ".join(targets))}"'
    )
    return f"<tr {attrs}>{''.join(cells)}</tr>"


def html_page(
    findings: Sequence[Finding],
    targets: Sequence[Sequence[str]],
    svg: str,
    *,
    title: str,
    summary: str = "",
    notes: Sequence[str] = (),
) -> str:
    """The HTML report page: *findings* (with the SVG ids showing each) and the drawing *svg*.

    *summary* is :meth:`Header.text`: its first line is the outcome, each further line
    (``not run: ...``) goes in the list of the checks that did not run.

    Example:
        >>> f = Finding("GA201", "trainable-not-in-optimizer", "error", "<b>", "m", "f", ("param:x",))
        >>> page = html_page([f], [["ga-param_3a_x"]], "<svg></svg>", title="Net",
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
    note_html = "".join(f'<p class="ga-note">{escape(n)}</p>' for n in notes)
    outcome, *more = summary.splitlines() or [""]
    not_run = [line.removeprefix(NOT_RUN) for line in more if line.startswith(NOT_RUN)]
    note_html += "".join(
        f'<p class="ga-note">{escape(line)}</p>' for line in more if not line.startswith(NOT_RUN)
    )
    if not_run:
        items = "".join(f"<li>{escape(line)}</li>" for line in not_run)
        note_html += (
            f'<details class="ga-not-run"><summary>{plural(len(not_run), "check")} did not run</summary>'
            f"<ul>{items}</ul></details>"
        )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{escape(title)}</h1>
<p class="ga-summary">{escape(outcome)}</p>
{note_html}
</header>
<div id="ga-controls">
<span>Severity: {boxes}</span>
<label>Check: <select id="ga-check-filter"><option value="">all checks</option>{options}</select></label>
<span><span id="ga-shown">{len(findings)}</span> of {len(findings)} findings shown; click one to find it in the graph</span>
<label><input type="checkbox" id="ga-fit"> fit graph to width</label>
</div>
<div id="ga-table-wrap">
<table id="ga-findings">
<thead><tr><th>ID</th><th>name</th><th>severity</th><th>subject</th><th>message</th><th>fix</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
{empty}
</div>
<div id="ga-graph">
{inline_svg(svg)}
</div>
<script>{SCRIPT}</script>
</body>
</html>
"""

"""graphaudit.draw: DOT text (exact on small nets), escaping, reuse, findings, collapsing, formats."""

from __future__ import annotations

import html
import os
import re
import shutil
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import graphviz
import numpy as np
import pytest
from cielab import _distance
from mindspore import Parameter, Tensor, nn
from nets import Repeated, Tied, tensor
from render_nets import (
    EVIL_KEY,
    EVIL_PARAM,
    WEIRD_KEY,
    Hostile,
    big_net,
    evil_report,
    nested_report,
    sample_report,
)

import graphaudit
from graphaudit.draw import KIND_COLORS, SEVERITY_COLORS, RenderError, RenderTimeoutError, graph_svg, to_dot
from graphaudit.draw.dot import draw, findings_from_graph
from graphaudit.draw.engine import run_dot
from graphaudit.draw.html import asset
from graphaudit.draw.style import PLAIN_BORDER, SEVERITY_FILLS, label, tooltip
from graphaudit.draw.tree import Loss
from graphaudit.findings import Finding
from graphaudit.report.render import render, render_report, report_html, report_svg

needs_dot = pytest.mark.needs_dot
skip_without_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
SVG_NS = "{http://www.w3.org/2000/svg}"


def small_net() -> nn.Cell:
    return nn.SequentialCell([nn.Dense(2, 2)])


STRUCTURE_DOT = """\
digraph graphaudit {
	graph [compound=true rankdir=TB nodesep=0.2 ranksep=0.22 fontname=Arial fontsize=12 labelloc=t style="rounded,filled" color="#9aa5b1" label="SequentialCell (structure view)"]
	node [shape=box style="rounded,filled" fontname=Arial fontsize=10 height=0.3 margin="0.1,0.04" color="#5f6b7a" penwidth=1]
	edge [fontname=Arial fontsize=8 arrowsize=0.6]
	graph [pack=8 packmode=array_tu]
	subgraph "cluster_ga-legend" {
		graph [id="ga-legend" label=legend fillcolor="#ffffff" color="#9aa5b1" penwidth=1 fontsize=9]
		"ga-legend-cell" [label=cell fillcolor="#ffffff"]
	}
	subgraph "cluster_ga-cell_3a_" {
		graph [id="ga-cell_3a_" class="ga-cell" label="(network) · SequentialCell · 6 params" tooltip="cell (network)\\nSequentialCell · 6 params" fillcolor="#fafafa" color="#9aa5b1" penwidth=1]
		"ga-cell_3a_0" [id="ga-cell_3a_0" class="ga-cell" label="0\\nDense · 6 params" tooltip="cell 0\\nDense · 6 params" fillcolor="#ffffff"]
	}
}
"""

TRACED_DOT = """\
digraph graphaudit {
	graph [compound=true rankdir=TB nodesep=0.2 ranksep=0.22 fontname=Arial fontsize=12 labelloc=t style="rounded,filled" color="#9aa5b1" label="SequentialCell (traced view)"]
	node [shape=box style="rounded,filled" fontname=Arial fontsize=10 height=0.3 margin="0.1,0.04" color="#5f6b7a" penwidth=1]
	edge [fontname=Arial fontsize=8 arrowsize=0.6]
	graph [pack=8 packmode=array_tu]
	subgraph "cluster_ga-legend" {
		graph [id="ga-legend" label=legend fillcolor="#ffffff" color="#9aa5b1" penwidth=1 fontsize=9]
		"ga-legend-call" [label="cell call" fillcolor="#ffffff"]
		"ga-legend-input" [label="input / output" fillcolor="#e6e6e6" shape=cds]
		"ga-legend-call" -> "ga-legend-input" [style=invis]
	}
	"ga-input_3a_0" [id="ga-input_3a_0" class="ga-input" label="input 0: [1, 2] Float32" tooltip="input 0\\n[1, 2] Float32" fillcolor="#e6e6e6" shape=cds]
	subgraph "cluster_ga-call_3a__23_1" {
		graph [id="ga-call_3a__23_1" class="ga-call" label="(network) · SequentialCell · 6 params" tooltip="call 1 of 1: (network)\\nSequentialCell · 6 params" fillcolor="#fafafa" color="#9aa5b1" penwidth=1]
		"ga-call_3a_0_23_1" [id="ga-call_3a_0_23_1" class="ga-call" label="0\\nDense · 6 params" tooltip="call 1 of 1: 0\\nDense · 6 params" fillcolor="#ffffff"]
	}
	"ga-output_3a_0" [id="ga-output_3a_0" class="ga-output" label="output 0: [1, 2] Float32" tooltip="output 0\\n[1, 2] Float32" fillcolor="#e6e6e6" shape=cds]
	"ga-input_3a_0" -> "ga-call_3a_0_23_1" [label="[1, 2]" color="#444444"]
	"ga-call_3a_0_23_1" -> "ga-output_3a_0" [color="#444444"]
}
"""

# One warning on the Dense: the node is filled and bordered, and the network's cluster (which
# holds it, but is not what the finding is about) stays plain; the tooltip carries the message and the fix, quotes escaped, & as &amp;.
FINDING_DOT = """\
digraph graphaudit {
	graph [compound=true rankdir=TB nodesep=0.2 ranksep=0.22 fontname=Arial fontsize=12 labelloc=t style="rounded,filled" color="#9aa5b1" label="SequentialCell (structure view)"]
	node [shape=box style="rounded,filled" fontname=Arial fontsize=10 height=0.3 margin="0.1,0.04" color="#5f6b7a" penwidth=1]
	edge [fontname=Arial fontsize=8 arrowsize=0.6]
	graph [pack=8 packmode=array_tu]
	subgraph "cluster_ga-legend" {
		graph [id="ga-legend" label=legend fillcolor="#ffffff" color="#9aa5b1" penwidth=1 fontsize=9]
		"ga-legend-cell" [label=cell fillcolor="#ffffff"]
		"ga-legend-warning" [label="warning finding [check ID]" fillcolor="#f1ca73" color="#e69f00" penwidth=2.5]
		"ga-legend-cell" -> "ga-legend-warning" [style=invis]
	}
	subgraph "cluster_ga-cell_3a_" {
		graph [id="ga-cell_3a_" class="ga-cell" label="(network) · SequentialCell · 6 params" tooltip="cell (network)\\nSequentialCell · 6 params" fillcolor="#fafafa" color="#9aa5b1" penwidth=1]
		"ga-cell_3a_0" [id="ga-cell_3a_0" class="ga-cell ga-flagged ga-sev-warning ga-check-GA900" label="0\\nDense · 6 params [GA900]" tooltip="cell 0\\nDense · 6 params\\nGA900 example-check [warning] 0\\n  Say \\"why\\". Fix: Do <this> &amp; that." fillcolor="#f1ca73" color="#e69f00" penwidth=2.5]
	}
}
"""

# Cell names that are DOT syntax, escapes, an entity, HTML and a trailing backslash: each
# shown as written. In the DOT text: \\" is a quote, \\\\ a backslash (\\\\\\\\ in a tooltip,
# which Graphviz unescapes twice), \\n a line break.
HOSTILE_DOT = """\
digraph graphaudit {
	graph [compound=true rankdir=TB nodesep=0.2 ranksep=0.22 fontname=Arial fontsize=12 labelloc=t style="rounded,filled" color="#9aa5b1" label="Hostile (structure view)"]
	node [shape=box style="rounded,filled" fontname=Arial fontsize=10 height=0.3 margin="0.1,0.04" color="#5f6b7a" penwidth=1]
	edge [fontname=Arial fontsize=8 arrowsize=0.6]
	graph [pack=8 packmode=array_tu]
	subgraph "cluster_ga-legend" {
		graph [id="ga-legend" label=legend fillcolor="#ffffff" color="#9aa5b1" penwidth=1 fontsize=9]
		"ga-legend-cell" [label=cell fillcolor="#ffffff"]
	}
	subgraph "cluster_ga-cell_3a_" {
		graph [id="ga-cell_3a_" class="ga-cell" label="(network) · Hostile" tooltip="cell (network)\\nHostile" fillcolor="#fafafa" color="#9aa5b1" penwidth=1]
		"ga-cell_3a_a_22_b_5c_n_a_c_26_lt_3b__7b_x_7d__20_-_3e__20_y_3b_" [id="ga-cell_3a_a_22_b_5c_n_a_c_26_lt_3b__7b_x_7d__20_-_3e__20_y_3b_" class="ga-cell" label="a\\"b\\\\n\\\\nc&amp;lt;{x} -> y;\\nReLU" tooltip="cell a\\"b\\\\\\\\n\\\\\\\\nc&amp;lt;{x} -> y;\\nReLU" fillcolor="#ffffff"]
		"ga-cell_3a__3c_script_3e_alert_28_1_29__3c__2f_script_3e_" [id="ga-cell_3a__3c_script_3e_alert_28_1_29__3c__2f_script_3e_" class="ga-cell" label="<script>alert(1)</script>\\nReLU" tooltip="cell <script>alert(1)</script>\\nReLU" fillcolor="#ffffff"]
		"ga-cell_3a_tail_5c_" [id="ga-cell_3a_tail_5c_" class="ga-cell" label="tail\\\\\\nReLU" tooltip="cell tail\\\\\\\\\\nReLU" fillcolor="#ffffff"]
	}
	"ga-cell_3a_a_22_b_5c_n_a_c_26_lt_3b__7b_x_7d__20_-_3e__20_y_3b_" -> "ga-cell_3a__3c_script_3e_alert_28_1_29__3c__2f_script_3e_" [style=invis]
	"ga-cell_3a__3c_script_3e_alert_28_1_29__3c__2f_script_3e_" -> "ga-cell_3a_tail_5c_" [style=invis]
}
"""


class Unused(nn.Cell):
    """A cell that ``construct`` never calls (``spare``)."""

    def __init__(self) -> None:
        super().__init__()
        self.used = nn.Dense(4, 4)
        self.spare = nn.Dense(4, 4)

    def construct(self, x: Tensor) -> Tensor:
        return self.used(x)


def quoted_strings(dot: str) -> list[str]:
    return re.findall(r'"((?:[^"\\]|\\.)*)"', dot)


# --- DOT text -------------------------------------------------------------------------------


def test_structure_dot_is_exact() -> None:
    assert to_dot(graphaudit.to_networkx(small_net())) == STRUCTURE_DOT


def test_traced_dot_is_exact() -> None:
    graph = graphaudit.to_networkx(small_net(), inputs=Tensor(np.ones((1, 2), np.float32)))
    assert to_dot(graph) == TRACED_DOT
    assert to_dot(graph, view="structure").replace("structure view", "x") == STRUCTURE_DOT.replace(
        "structure view", "x"
    )


def test_dot_with_a_finding_is_exact() -> None:
    finding = Finding(
        "GA900", "example-check", "warning", "0", 'Say "why".', "Do <this> & that.", ("cell:0",)
    )
    assert to_dot(graphaudit.to_networkx(small_net()), [finding]) == FINDING_DOT


@pytest.mark.filterwarnings("error")  # graphviz warns of a string ending in one backslash
def test_dot_with_hostile_names_is_exact() -> None:
    assert to_dot(graphaudit.to_networkx(Hostile())) == HOSTILE_DOT


@needs_dot
@skip_without_dot
def test_hostile_names_are_drawn_as_written() -> None:
    root = ET.fromstring(run_dot(HOSTILE_DOT, "svg"))
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]
    assert {WEIRD_KEY.replace("\n", "\\n"), EVIL_KEY, "tail\\"} <= set(texts)  # a newline shown as \n
    titles = {a.get("{http://www.w3.org/1999/xlink}title") for a in root.iter(f"{SVG_NS}a")}
    assert {f"cell {name}\nReLU" for name in (WEIRD_KEY.replace("\n", "\\n"), EVIL_KEY, "tail\\")} <= titles


def test_text_that_looks_like_an_html_label_stays_a_quoted_string() -> None:
    # graphviz.quoting.quote passes '<...>' through unquoted, as an HTML-like label, unless
    # it is marked nohtml; and leaves backslashes and entities to Graphviz.
    dot = graphviz.Digraph()
    dot.node("n", _attributes=[("label", label(EVIL_PARAM)), ("tooltip", tooltip("&lt;\\N"))])
    assert (
        dot.source.splitlines()[1] == '\tn [label="<img src=x onerror=alert(2)>" tooltip="&amp;lt;\\\\\\\\N"]'
    )
    if shutil.which("dot"):
        root = ET.fromstring(run_dot(dot.source, "svg"))
        assert ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")] == [EVIL_PARAM]
        assert [a.get("{http://www.w3.org/1999/xlink}title") for a in root.iter(f"{SVG_NS}a")] == ["&lt;\\N"]


def test_every_user_string_is_escaped_in_dot() -> None:
    report = evil_report()
    dot = to_dot(report.graph, report.findings)
    for string in quoted_strings(dot):
        assert "\n" not in string and "\r" not in string
        assert not re.search(r"&(?!amp;)", string), string  # every & is ours, spelled &amp;
    assert "heads.<script>alert(1)</script>" in dot  # shown as text, quoted
    assert 'heads.a\\"b\\\\n\\\\nc&amp;lt;{x} -> y;' in dot  # quote, backslash, newline, entity, DOT syntax
    assert EVIL_PARAM in dot
    ids = re.findall(r'\bid="([^"]*)"', dot)
    assert ids and all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids)


def test_a_cell_called_several_times_says_so_on_each_call_without_a_tangle() -> None:
    graph = graphaudit.to_networkx(Repeated(), inputs=tensor(1, 4))
    dot = to_dot(graph)
    for k in (1, 2, 3):
        assert f'label="layers.0 (call {k}/3)\\nDense · 20 shared params"' in dot
    assert "ga-param_" not in dot and "invokes" not in dot  # no weights node, no edge from every call
    assert dot.count("style=dashed") == dot.count("style=dotted") == 0
    assert "one cell object (layers.0 = layers.1 = layers.2) called 3 times" in dot  # in each tooltip


def test_later_calls_of_a_reused_block_are_closed_boxes_unless_asked() -> None:
    class Twice(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.block = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])

        def construct(self, x: Tensor) -> Tensor:
            return self.block(self.block(x))

    graph = graphaudit.to_networkx(Twice(), inputs=tensor(1, 4))
    dot = to_dot(graph)
    assert 'subgraph "cluster_ga-call_3a_block_23_1"' in dot  # the first call is drawn open
    assert (
        '"ga-call_3a_block_23_2" [id="ga-call_3a_block_23_2" class="ga-collapsed"' in dot
    )  # the second closed
    assert "2 nodes inside, as in the first call" in dot
    assert 'subgraph "cluster_ga-call_3a_block_23_2"' in to_dot(graph, repeats=True)


def test_a_tied_parameter_is_drawn_once_with_an_edge_to_each_user() -> None:
    graph = graphaudit.to_networkx(Tied(), inputs=Tensor(np.array([[1, 2]], np.int32)))
    dot = to_dot(graph)
    node = '"ga-param_3a_embed_2e_embedding_5f_table"'
    assert dot.count(f"{node} [") == 1
    readers = re.findall(rf"{node} -> (\S+) \[", dot)
    assert sorted(readers) == ['"ga-call_3a_decoder_23_1"', '"ga-call_3a_embed_23_1"']
    structure = to_dot(graph, view="structure")
    assert sorted(re.findall(rf'(\S+) -> {node} \[color="#8a8a8a"', structure)) == [
        '"ga-cell_3a_decoder"',
        '"ga-cell_3a_embed"',
    ]


def test_params_all_and_none() -> None:
    graph = graphaudit.to_networkx(nn.Dense(3, 2))
    assert to_dot(graph, params="all").count('class="ga-parameter"') == 2
    assert "ga-param_" not in to_dot(graph, params="none")
    with pytest.raises(ValueError, match="params must be one of"):
        to_dot(graph, params="some")
    with pytest.raises(ValueError, match="needs a graph captured with inputs"):
        to_dot(graph, view="traced")


def _contents(graph) -> str:
    return repr((list(graph.nodes(data=True)), list(graph.edges(keys=True, data=True))))


def test_findings_are_coloured_labelled_and_explained() -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    drawing = draw(report.graph, report.findings)
    [ga101] = report.by_check("GA101")
    index = drawing.findings.index(ga101)
    calls = [f"ga-call_3a_layers_2e_0_23_{k}" for k in (1, 2, 3)]
    assert drawing.targets[index] == [*calls, "ga-call_3a_layers_23_1"]  # every call of the one cell
    line = next(x for x in drawing.dot.splitlines() if x.strip().startswith(f'"{calls[1]}" ['))
    assert "ga-sev-error ga-check-GA101" in line and f'color="{SEVERITY_COLORS["error"]}"' in line
    assert "[GA101]" in line
    assert ga101.message.split(":")[0] in line and "Fix: Create a separate Dense" in line  # the tooltip
    assert '"ga-legend-error" [label="error finding [check ID]"' in drawing.dot
    # Only the findings given are drawn: the report's graph alone is unmarked; an annotated copy
    # (read back from GraphML, say) is drawn marked again through findings_from_graph.
    captured = _contents(report.graph)
    assert "GA101" not in to_dot(report.graph) and "GA101" not in to_dot(report.graph, [])
    assert "[GA101]" in to_dot(report.graph, findings_from_graph(report.annotated()))
    assert "GA101" not in to_dot(graphaudit.Report([], report.graph).graph)
    # an annotated copy (findings on its nodes) drawn with no findings: none drawn, findings=() means none
    assert "GA101" not in to_dot(report.annotated(), []) and "GA101" not in to_dot(report.annotated(), ())
    str(report), report.to_json(), graphaudit.Report(report.findings, report.graph)
    assert _contents(report.graph) == captured  # reporting and drawing never write into the captured graph


def test_severity_colours_and_kind_colours_are_fixed() -> None:
    graph = graphaudit.to_networkx(nn.Dense(3, 2))
    found = [
        Finding("GA900", "x", severity, "s", "m", "f", (node,))
        for severity, node in (("warning", "param:weight"), ("info", "param:bias"))
    ]
    dot = to_dot(graph, found)
    assert f'color="{SEVERITY_COLORS["warning"]}"' in dot and f'color="{SEVERITY_COLORS["info"]}"' in dot
    assert SEVERITY_COLORS == {"error": "#d55e00", "warning": "#e69f00", "info": "#0072b2"}  # Okabe-Ito
    assert KIND_COLORS["parameter"] == "#f7f7f7" and KIND_COLORS["op"] == "#eeeeee"


def test_only_flagged_things_are_coloured() -> None:
    # Plain boxes are white or grey (kinds differ by shape); hue is kept for findings alone.
    for kind, color in KIND_COLORS.items():
        r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
        assert max(r, g, b) - min(r, g, b) <= 6, kind
    dot = to_dot(graphaudit.to_networkx(Repeated(), inputs=tensor(1, 4)))  # no findings given
    colours = set(
        re.findall(
            r'(?:fill)?color="(#[0-9a-f]{6})"', dot.split("cluster_ga-legend")[0] + dot.split("\t}\n", 1)[1]
        )
    )
    assert not colours & {*SEVERITY_COLORS.values(), *SEVERITY_FILLS.values()}


def test_a_flagged_fill_is_never_close_to_a_plain_one() -> None:
    # The old info fill (#dcebf7) was 1.7 CIELAB units from a plain cell (#dfe9f5): invisible.
    for severity, fill in SEVERITY_FILLS.items():
        for kind, plain in KIND_COLORS.items():
            assert _distance(fill, plain) >= 20, (severity, kind)
        for other, other_fill in SEVERITY_FILLS.items():
            assert other == severity or _distance(fill, other_fill) >= 20, (severity, other)
    for severity, border in SEVERITY_COLORS.items():
        assert _distance(border, PLAIN_BORDER) >= 20, severity


def _legend_labels(dot: str) -> dict[str, str]:
    found = re.findall(r'"ga-legend-(\w+)" \[label=(?:"([^"]*)"|(\S+))', dot)
    return {key: quoted or bare for key, quoted, bare in found}


def test_the_legend_says_why_a_parameter_is_drawn() -> None:
    dense = graphaudit.to_networkx(nn.Dense(3, 2))
    flagged = Finding("GA900", "x", "warning", "weight", "m", "f", ("param:weight",))
    assert _legend_labels(to_dot(dense, [flagged]))["parameter"] == "parameter (with a finding)"
    assert _legend_labels(to_dot(dense, params="all"))["parameter"] == "parameter"
    tied = graphaudit.to_networkx(Tied(), inputs=Tensor(np.array([[1, 2]], np.int32)))
    assert _legend_labels(to_dot(tied))["parameter"] == "parameter (shared)"
    both = to_dot(tied, [Finding("GA900", "x", "info", "decoder.bias", "m", "f", ("param:decoder.weight",))])
    assert _legend_labels(both)["parameter"] == "parameter (shared)"  # the flagged one is the shared one
    unused = graphaudit.to_networkx(Unused(), inputs=tensor(1, 4))
    found = [Finding("GA900", "x", "warning", "spare", "m", "f", ("cell:spare", "param:spare.weight"))]
    labels = _legend_labels(to_dot(unused, found))
    assert labels["cell"] == "cell never called" and labels["parameter"] == "parameter (with a finding)"


@pytest.mark.parametrize("depth", [0, 1, 2, None])
def test_collapsing_never_hides_a_finding(depth: int | None) -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    drawing = draw(report.graph, report.findings, depth=depth)
    assert all(drawing.targets) and not drawing.unplaced
    for finding, targets in zip(drawing.findings, drawing.targets):
        for target in targets:
            line = next(x for x in drawing.dot.splitlines() if f'id="{target}"' in x)
            assert "ga-flagged" in line or "ga-flagged" in drawing.dot.split(f'id="{target}"')[1][:80]
            assert finding.check_id in drawing.dot
    if depth == 0:  # one box for the whole network, still red and labelled
        assert drawing.targets[0] == ["ga-call_3a__23_1"]
        assert 'label="(network)\\nRepeated · 20 params\\n(4 nodes inside) [GA101]"' in drawing.dot


def test_repeated_blocks_roll_up_into_one_box() -> None:
    def block() -> nn.Cell:
        return nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])

    net = nn.SequentialCell([nn.Dense(4, 4), *(block() for _ in range(6)), nn.Dense(4, 2)])
    graph = graphaudit.to_networkx(net, inputs=tensor(1, 4))
    for view in ("traced", "structure"):
        dot = to_dot(graph, view=view, rollup=True)
        assert "SequentialCell \u00d76" in dot, view
    assert "\u00d76" not in to_dot(graph, rollup=False)
    assert "\u00d76" in to_dot(graph, rollup_threshold=5)  # automatic above the threshold


@pytest.mark.slow
def test_a_5000_cell_network_falls_back_to_a_collapsed_view(tmp_path: Path) -> None:
    graph = graphaudit.to_networkx(big_net())
    assert graph.number_of_nodes() > 10_000
    flagged = "cell:37.42"
    drawing = draw(graph, [Finding("GA900", "deep", "warning", "37.42", "m", "f", (flagged,))])
    assert drawing.plan.count <= 1500 and drawing.plan.depth == 1
    assert "collapsed to depth 1: depth 2 would draw 5051 nodes, over max_nodes=1500" in drawing.dot
    assert drawing.targets == [["ga-cell_3a_37"]]  # the finding marks the box it fell into
    assert "[GA900]" in drawing.dot
    if shutil.which("dot"):  # within render's own bound: a RenderTimeoutError otherwise (costs: benchmarks/)
        svg = render_report(graphaudit.Report([], graph, network="Big"), tmp_path / "big.svg", timeout=60)
        assert ET.parse(svg).getroot().tag == f"{SVG_NS}svg"


def test_dot_that_hangs_is_stopped_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("GRAPHAUDIT_DOT", str(fake))
    with pytest.raises(RenderTimeoutError) as caught:  # without the bound, dot would exit 0 with no drawing
        render(Repeated(), tmp_path / "r.svg", inputs=tensor(1, 4), timeout=0.5)
    message = str(caught.value)
    assert "lay out 7 nodes (drawn at depth 2) within 0.5 s" in message and "pass depth=1" in message
    assert isinstance(caught.value, graphaudit.GraphAuditError)


def test_missing_dot_is_a_clear_error_and_dot_format_needs_no_dot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRAPHAUDIT_DOT", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RenderError, match="apt-get install graphviz"):
        render(small_net(), tmp_path / "n.svg")
    assert render(small_net(), tmp_path / "n.gv").read_text() == STRUCTURE_DOT
    with pytest.raises(RenderError, match="unknown format 'jpeg'"):
        render(small_net(), tmp_path / "n.x", format="jpeg")


# --- with Graphviz --------------------------------------------------------------------------


@needs_dot
@skip_without_dot
def test_every_format_is_written(tmp_path: Path) -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    magic = {
        "svg": b"<?xml",
        "png": b"\x89PNG",
        "pdf": b"%PDF",
        "dot": b"digraph",
        "html": b"<!DOCTYPE html>",
    }
    for fmt, start in magic.items():
        out = render_report(report, tmp_path / f"report.{fmt}")
        assert out == tmp_path / f"report.{fmt}" and out.read_bytes().startswith(start), fmt
    forced = render_report(report, tmp_path / "report.txt", format="png")
    assert forced.read_bytes().startswith(b"\x89PNG")
    with pytest.raises(RenderError, match=r"cannot tell what to write to 'unknown.suffix'"):
        render_report(report, tmp_path / "unknown.suffix")  # never SVG in a file named otherwise
    assert not (tmp_path / "unknown.suffix").exists()


@needs_dot
@skip_without_dot
def test_svg_structure_carries_ids_classes_and_tooltips() -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    root = ET.fromstring(report_svg(report))
    groups = {g.get("id"): g for g in root.iter(f"{SVG_NS}g")}
    second = groups["ga-call_3a_layers_2e_0_23_2"]
    assert "node" in second.get("class") and "ga-check-GA101" in second.get("class")
    assert "cluster" in groups["ga-call_3a_layers_23_1"].get("class")
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]
    assert "Dense · 20 shared params [GA101]" in texts and "layers.0 (call 2/3)" in texts
    titles = [a.get("{http://www.w3.org/1999/xlink}title") or "" for a in root.iter(f"{SVG_NS}a")]
    assert any("Fix: Create a separate Dense" in t for t in titles)


def _strokes(group: ET.Element) -> set[str | None]:
    return {el.get("stroke") for el in group.iter() if el.tag in (f"{SVG_NS}path", f"{SVG_NS}polygon")}


def _xs(group: ET.Element) -> list[float]:
    """The x coordinates of the outline (path or polygon) of an SVG group."""
    xs = []
    for el in group.iter():
        if el.tag == f"{SVG_NS}path":
            xs += [float(x) for x in re.findall(r"(-?[\d.]+),-?[\d.]+", el.get("d", ""))]
        elif el.tag == f"{SVG_NS}polygon":
            xs += [float(p.split(",")[0]) for p in el.get("points", "").split()]
    return xs


@needs_dot
@skip_without_dot
@pytest.mark.parametrize("view", ["structure", "traced"])
def test_a_cluster_inside_a_flagged_cluster_keeps_a_plain_border(view: str) -> None:
    net = nn.SequentialCell([nn.SequentialCell([nn.SequentialCell([nn.Dense(2, 2)])])])
    graph = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 2), np.float32)))
    finding = Finding("GA900", "x", "error", "0", "m", "f", ("cell:0",))
    groups = {
        g.get("id"): g for g in ET.fromstring(graph_svg(graph, [finding], view=view)).iter(f"{SVG_NS}g")
    }
    ident = {"structure": "ga-cell_3a_{}", "traced": "ga-call_3a_{}_23_1"}[view].format
    assert _strokes(groups[ident("0")]) == {SEVERITY_COLORS["error"]}  # the flagged cluster
    assert _strokes(groups[ident("0_2e_0")]) == {PLAIN_BORDER}  # inside it, innocent
    assert not _strokes(groups[ident("0_2e_0_2e_0")]) & set(SEVERITY_COLORS.values())


@needs_dot
@skip_without_dot
def test_the_legend_is_one_column_on_the_left() -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    root = ET.fromstring(report_svg(report))
    groups = {g.get("id"): g for g in root.iter(f"{SVG_NS}g")}
    assert max(_xs(groups["ga-legend"])) < min(_xs(groups["ga-call_3a__23_1"]))  # left of the network
    entries = [
        g for g in root.iter(f"{SVG_NS}g") if (g.findtext(f"{SVG_NS}title") or "").startswith("ga-legend-")
    ]
    assert len(entries) >= 3
    assert len({g.find(f"{SVG_NS}text").get("x") for g in entries}) == 1  # one under the other


def _box_lines(dot: str) -> list[str]:
    """The attribute lists of the network's nodes and clusters (not the legend's)."""
    return [line for line in dot.splitlines() if ' [id="ga-' in line and "ga-legend" not in line]


@pytest.mark.parametrize("view", ["structure", "traced"])
def test_only_a_findings_own_subject_is_coloured_and_always_with_its_id(view: str) -> None:
    report = nested_report()
    assert [f.check_id for f in report.findings] == ["GA201"]  # about the head
    dot = to_dot(report.graph, report.findings, view=view)
    coloured = [line for line in _box_lines(dot) if any(c in line for c in SEVERITY_COLORS.values())]
    assert coloured and all("[GA201]" in line for line in coloured), coloured
    head = re.compile(
        r'\[id="(ga-cell_3a_head"|ga-call_3a_head_23_1"|ga-param_3a_head_2e_)'
    )  # the head, its weights
    assert all(head.search(line) for line in coloured), coloured
    root = next(line for line in _box_lines(dot) if "(network)" in line)
    assert f'color="{PLAIN_BORDER}" penwidth=1' in root  # the network holds the head, but is not its subject


@needs_dot
@skip_without_dot
def test_the_legend_is_packed_without_gaps_beside_tall_ranks() -> None:
    root = ET.fromstring(report_svg(nested_report()))
    entries = [
        g for g in root.iter(f"{SVG_NS}g") if (g.findtext(f"{SVG_NS}title") or "").startswith("ga-legend-")
    ]
    ys = sorted(float(g.find(f"{SVG_NS}text").get("y")) for g in entries)  # type: ignore[union-attr]
    steps = [b - a for a, b in zip(ys, ys[1:])]
    assert len(ys) >= 4 and max(steps) < 50, steps  # one entry's height and a rank gap (it was 166 pt)
    groups = {g.get("id"): g for g in root.iter(f"{SVG_NS}g")}
    assert max(_xs(groups["ga-legend"])) < min(_xs(groups["ga-call_3a__23_1"]))  # still on the left


@needs_dot
@skip_without_dot
def test_the_html_header_lists_each_check_not_run_with_its_own_reason(tmp_path: Path) -> None:
    report = evil_report()
    assert report.counts()["error"] == 2 and len(report.not_run) > 3
    page = render_report(report, tmp_path / "evil.html").read_text()
    summary = re.search(r'<p class="ga-summary">(.*?)</p>', page).group(1)  # type: ignore[union-attr]
    assert summary.startswith("FAILED: 2 errors, 0 warnings, 0 info; ")
    assert f"{len(report.checks_run)} checks run, {len(report.not_run)} not run;" in summary
    block = page[page.index('<details class="ga-not-run">') : page.index("</details>")]
    assert f"<summary>{len(report.not_run)} checks did not run</summary>" in block
    assert re.findall(r"<li>(.*?)</li>", block) == [html.escape(n.text()) for n in report.not_run]
    reasons = dict(zip((n.check_id for n in report.not_run), re.findall(r"<li>(.*?)</li>", block)))
    assert (
        "spec=" in reasons["GA103"] and "probe=True" in reasons["GA901"] and "inputs=" not in reasons["GA103"]
    )


@needs_dot
@skip_without_dot
def test_malicious_names_stay_text_in_svg_and_html(tmp_path: Path) -> None:
    report = evil_report()
    root = ET.fromstring(report_svg(report))
    assert not [
        el for el in root.iter() if el.tag.split("}")[-1].lower() in ("script", "img", "foreignobject")
    ]
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]
    assert f"heads.{EVIL_KEY}" in texts and EVIL_PARAM in texts
    assert any('heads.a"b\\n\\nc&lt;{x} -> y;' in t for t in texts)  # shown as written, escapes visible
    page = report_html(report)
    assert re.findall(r"<script\b[^>]*>", page) == [
        '<script type="application/json" class="ga-model">',
        "<script>",
        "<script>",
    ]
    model = page[page.index('class="ga-model">') : page.index("</script>")]
    assert (
        "<" not in model.removeprefix('class="ga-model">') and "\\u003cscript\\u003e" in model
    )  # JSON, escaped
    outside = page.replace(asset("viz-global.js"), "").replace(asset("explorer.js"), "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in outside and "<img" not in outside


@needs_dot
@skip_without_dot
def test_html_report_is_self_contained_and_links_findings_to_nodes(tmp_path: Path) -> None:
    report = graphaudit.audit(Repeated(), inputs=tensor(1, 4))
    page = render_report(report, tmp_path / "r.html").read_text()
    viz = asset("viz-global.js")
    assert viz in page  # the engine, inline: its only URLs are XML namespaces and its licence header
    assert set(re.findall(r"https?://[\w./-]+", viz)) <= {
        "http://www.w3.org/1999/xlink",
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd",
        "http://www.w3.org/XML/1998/namespace",
        "http://www.w3.org/2000/xmlns/",
        "https://www.graphviz.org",
        "https://libexpat.github.io",
    }
    page = page.replace(viz, "")
    assert not re.search(r"https?:", page, re.I)
    assert not re.search(r"\s(src|href)\s*=", page, re.I) and "@import" not in page and "url(" not in page
    assert '<table class="ga-findings">' in page and "<svg" in page and "<?xml" not in page
    for targets in re.findall(r'data-targets="([^"]*)"', page):
        for target in targets.split():
            assert f'id="{target.replace("-", "&#45;")}"' in page or f'id="{target}"' in page


@needs_dot
@skip_without_dot
def test_a_flagged_cell_that_is_never_called_is_drawn(tmp_path: Path) -> None:
    report = graphaudit.audit(Unused(), inputs=tensor(1, 4))
    assert report.by_check("GA301")
    dot = to_dot(report.graph, report.findings)
    assert 'label="spare\\nDense · never called [GA301]"' in dot
    ET.parse(render_report(report, tmp_path / "u.svg"))


# --- real models (slow) ---------------------------------------------------------------------


def _model_report(name: str) -> graphaudit.Report:
    mindcv = pytest.importorskip("mindcv")
    net = mindcv.create_model(name, pretrained=False)
    params = net.trainable_params()
    optimizer = nn.Momentum(params[:-2], learning_rate=0.01, momentum=0.9)  # the classifier left out
    x = Tensor(np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32))
    return graphaudit.audit(net, optimizer, inputs=x)


@pytest.mark.slow
@needs_dot
@skip_without_dot
@pytest.mark.parametrize("name", ["resnet50", "densenet121"])
def test_mindcv_models_render_with_findings_visible(name: str, tmp_path: Path) -> None:
    report = _model_report(name)
    assert [f.subjects for f in report.by_check("GA201")] == [("classifier.weight", "classifier.bias")]
    for options in ({}, {"depth": 2}, {"view": "structure"}):
        svg = render_report(report, tmp_path / f"{name}.svg", timeout=120, **options)
        root = ET.parse(svg).getroot()
        ids = {g.get("id") for g in root.iter(f"{SVG_NS}g")}
        drawing = draw(report.graph, report.findings, **options)
        assert all(drawing.targets) and all(set(t) <= ids for t in drawing.targets), options
        flagged = [g for g in root.iter(f"{SVG_NS}g") if "ga-check-GA201" in (g.get("class") or "")]
        assert flagged, options
    html = render_report(report, tmp_path / f"{name}.html").read_text()
    assert html.count('class="ga-finding ') == len(report.findings)


@pytest.mark.slow
def test_a_traced_5000_cell_network_falls_back(tmp_path: Path) -> None:
    net = big_net()
    graph = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
    drawing = draw(graph)
    assert drawing.view == "traced" and drawing.plan.count <= 1500 and drawing.plan.notes
    if shutil.which("dot"):
        report = graphaudit.Report([], graph, network="Big")
        assert (
            ET.parse(render_report(report, tmp_path / "big.svg", timeout=60)).getroot().tag == f"{SVG_NS}svg"
        )


def test_parameter_names_are_shown_with_their_path_when_they_differ() -> None:
    net = nn.Dense(2, 2)
    net.extra = Parameter(Tensor(np.ones(2, np.float32)), name="renamed")
    dot = to_dot(graphaudit.to_networkx(net), params="all")
    assert 'label="renamed\\nat extra\\n[2] Float32"' in dot
    assert os.path.basename(__file__) == "test_render.py"


# --- the clearer picture: the sample, the loss, parameters on labels, shapes where they change --------


@pytest.fixture(scope="module")
def sample() -> graphaudit.Report:
    return sample_report()


def test_the_sample_draws_the_loss_with_its_finding_on_both_ends(sample: graphaudit.Report) -> None:
    from graphaudit.report.render import loss_of

    assert loss_of(sample) == Loss("BCEWithLogitsLoss", ("output:0",))
    drawing = draw(sample.graph, sample.findings, loss=loss_of(sample))
    [ga401] = [t for f, t in zip(drawing.findings, drawing.targets) if f.check_id == "GA401"]
    assert ga401 == ["ga-op_3a__2f_sigmoid_23_5", "ga-output_3a_0", "ga-loss_3a_BCEWithLogitsLoss"]
    loss = next(
        x for x in drawing.dot.splitlines() if x.strip().startswith('"ga-loss_3a_BCEWithLogitsLoss" [')
    )
    assert 'label="BCEWithLogitsLoss\\nloss(output 0, label) [GA401]"' in loss and "ga-sev-error" in loss
    assert '\t"ga-output_3a_0" -> "ga-loss_3a_BCEWithLogitsLoss" [color="#444444" style=bold]' in drawing.dot
    assert '{rank=same; "ga-output_3a_0" "ga-loss_3a_BCEWithLogitsLoss"}' in drawing.dot  # beside the output
    assert '"ga-legend-loss" [label=loss' in drawing.dot


def test_the_sample_has_no_tangle_of_read_edges(sample: graphaudit.Report) -> None:
    dot = to_dot(sample.graph, sample.findings)
    edges = [line for line in dot.splitlines() if " -> " in line and "ga-legend" not in line]
    assert edges and all('color="#444444"' in e for e in edges)  # data flow only: no dashed or dotted links
    assert "ga-weights" not in dot and "ga-param_" not in dot  # the shared weights are said on the calls


@needs_dot
@skip_without_dot
def test_the_sample_fits_a_laptop_screen(sample: graphaudit.Report, tmp_path: Path) -> None:
    svg = render_report(sample, tmp_path / "sample.svg").read_text()
    width, height = (int(v) for v in re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', svg).groups())  # type: ignore[union-attr]
    assert width <= 700 and height <= 900, (width, height)  # it was 1,653 x 1,595 pt; 1 pt = 4/3 px


def test_params_all_writes_a_parameter_read_by_one_call_on_that_call() -> None:
    graph = graphaudit.to_networkx(nn.SequentialCell([nn.Dense(3, 2)]), inputs=tensor(1, 3))
    dot = to_dot(graph, params="all")
    assert 'label="0\\nDense · 8 params\\n0.weight [2, 3] Float32\\n0.bias [2] Float32"' in dot
    assert "ga-parameter" not in dot
    flagged = Finding("GA900", "x", "warning", "0.weight", "m", "f", ("param:0.weight",))
    with_finding = to_dot(graph, [flagged], params="all")
    assert with_finding.count('class="ga-parameter') == 1 and "\\n0.bias [2] Float32" in with_finding


def test_shapes_are_written_where_they_change() -> None:
    net = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU(), nn.Dense(4, 2)])
    dot = to_dot(graphaudit.to_networkx(net, inputs=tensor(1, 4)))
    labels = re.findall(r'-> "([^"]+)" \[label="([^"]*)"', dot)
    assert labels == [
        ("ga-call_3a_0_23_1", "[1, 4]"),
        ("ga-call_3a_2_23_1", "[1, 4]"),
        ("ga-output_3a_0", "[1, 2]"),
    ] or (labels == [("ga-call_3a_0_23_1", "[1, 4]"), ("ga-output_3a_0", "[1, 2]")])
    assert '"ga-call_3a_0_23_1" -> "ga-call_3a_1_23_1" [color="#444444"]' in dot  # [1, 4] again: not repeated


# --- the explorer's model and page -----------------------------------------------------------------


def test_the_explorer_model_has_every_form_of_every_item_as_safe_json() -> None:
    from graphaudit.draw.explorer import explorer_model, model_json

    report = evil_report()
    drawing = draw(report.graph, report.findings)
    model = explorer_model(drawing, report.graph)
    for item in model["items"]:
        assert ("n" in item) != ("b" in item and "g" in item), item["k"]
        assert item["id"] == re.sub(r"[^A-Za-z0-9_-]", "", item["id"])
    text = model_json(model)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert text.count("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e") >= 3  # label, search text, details
    findings = {f["check_id"]: f for f in model["findings"]}
    keys = [model["items"][i]["k"] for i in findings["GA201"]["items"]]
    assert keys[0].startswith("call:heads.") and "param:" in " ".join(keys)


@needs_dot
@skip_without_dot
def test_the_page_shows_each_data_pipeline_in_a_tab(tmp_path: Path) -> None:
    ds = pytest.importorskip("mindspore.dataset")
    from graphaudit.report.render import pipeline_panels

    assert pipeline_panels(graphaudit.audit(Repeated(), inputs=tensor(1, 4))) == []  # no pipelines: no tab
    x = np.random.default_rng(0).random((64, 4)).astype(np.float32)
    train = ds.NumpySlicesDataset({"x": x, "label": np.arange(64) % 2}, shuffle=False).batch(8)
    report = graphaudit.audit_dataset(train)
    page = render_report(report, tmp_path / "r.html").read_text()
    assert (
        '<button type="button" class="ga-tab" data-panel="0">data pipeline &#x27;train&#x27;</button>' in page
    )
    assert 'class="ga-canvas ga-panel" data-panel="0"' in page and "NumpySlicesDataset" in page
    row = re.search(r'<tr [^>]*data-check="GA001"[^>]*>', page).group(0)  # type: ignore[union-attr]
    assert 'data-targets="ga-ds_3a_train_2f_NumpySlicesDataset_23_1"' in row
    assert "not drawn: GA001" not in page  # it is drawn, in its pipeline's tab


def test_the_vendored_engine_is_the_pinned_release_with_its_licences() -> None:
    import hashlib

    from graphaudit.draw.html import ASSETS

    readme = (ASSETS / "README.md").read_text()
    viz = (ASSETS / "viz-global.js").read_bytes()
    assert viz.startswith(b"/*!\nViz.js 3.31.0\n") and "@viz-js/viz` 3.31.0" in readme
    assert hashlib.sha256(viz).hexdigest() in readme
    for name in ("LICENSE-viz-js.txt", "LICENSE-graphviz-EPL-1.0.txt", "LICENSE-expat.txt"):
        assert (ASSETS / name).stat().st_size > 500 and name in readme

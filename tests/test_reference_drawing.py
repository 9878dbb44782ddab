"""The port's comparison shown where people look: JSON, text, SARIF, the SVG and the explorer (issue 35, item 4).

The ports are those of ``tests/reference_ports.py`` (planted bugs, against the PyTorch
originals dumped in ``tests/references/planted/``) and a real pair of ``tests/references/``.
The figures the report carries are checked against a :class:`Comparison` made apart, from
the evidence alone; the drawing is checked on the SVG Graphviz writes (its classes and fills).
A report without ``reference=`` carries nothing of it, in any form.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from mindspore import Tensor, nn
from reference_ports import CNN, MLP, PLANTED, PLANTED_BUGS, PORTS, TinyTransformer, audit

import graphaudit
from graphaudit.draw.divergence import AGREE_FILLS, DIVERGE_FILLS, UNMATCHED_FILL, divergence_fill
from graphaudit.draw.style import KIND_COLORS, SEVERITY_FILLS
from graphaudit.report.sarif import to_sarif

ROOT = Path(__file__).resolve().parent.parent
REPORT_SCHEMA = ROOT / "graphaudit" / "report" / "schema" / "report.schema.json"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
#: The planted bugs GA640 finds (the others change the structure: GA630, GA631).
OUTPUT_BUGS = sorted(bug for bug, (_, _, (check, _)) in PLANTED_BUGS.items() if check == "GA640")
FIGURES = ("cosine", "max_abs", "max_rel", "scale", "norm_ratio")


def comparison_of(net: nn.Cell, original: str):
    """The comparison made apart from the audit: the evidence alone, on the same batch."""
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference_outputs import ReferenceOutputs

    folder = PLANTED / original
    batch = Tensor(np.load(folder / "inputs.npz")["0"])
    request = AuditRequest(net, inputs=(batch,), options={"reference": str(folder)})
    return EvidenceSet(request).need(ReferenceOutputs).comparison


def svg_classes(svg: str) -> dict[str, str]:
    """SVG id -> its class attribute (Graphviz writes ``-`` as ``&#45;``)."""
    found = re.findall(r'<g id="([^"]+)" class="([^"]+)"', svg.replace("&#45;", "-"))
    return dict(found)


def fills(svg: str, ident: str) -> list[str]:
    """The fill colours of the shapes inside the SVG group *ident*."""
    text = svg.replace("&#45;", "-")
    start = text.index(f'<g id="{ident}"')
    group = text[start : text.index("</g>", start)]
    return re.findall(r'fill="(#[0-9a-f]{6})"', group)


def as_row(figures) -> dict[str, float | None]:
    return {name: getattr(figures, name) for name in FIGURES}


@pytest.mark.parametrize("bug", OUTPUT_BUGS)
def test_the_json_table_carries_the_comparisons_figures_and_its_first_divergence(bug):
    port, original, (_, subject) = PLANTED_BUGS[bug]
    report = audit(port(bug), original)
    section = json.loads(report.to_json())["reference"]
    comparison = comparison_of(port(bug), original)
    assert [(r["port"], r["reference"], r["call"]) for r in section["cells"]] == [
        (c.port, c.reference, c.call) for c in comparison.calls
    ]
    for row, call in zip(section["cells"], comparison.calls):
        assert row["diverges"] == call.diverges and row["input_agrees"] == call.input_agrees
        assert row["compared"] == (call.output is not None)
        if call.output is not None:
            assert {k: row[k] for k in FIGURES} == pytest.approx(as_row(call.output), rel=1e-9, abs=1e-12)
    first, at = comparison.first_divergence()
    assert [(r["port"], r["call"]) for r in section["cells"] if r["first"]] == [(first.port, first.call)]
    named = section["first_divergence"]
    assert (named["port"], named["at"]) == (first.port, at)
    assert (named["cell"] or "(root)") == subject  # the cell GA640 names
    assert section["compared"] and section["unmatched_weights"] == [] and section["unmatched_cells"] == []
    assert len(section["mapping"]["pairs"]) == len(report.reference["mapping"]["pairs"]) > 0


@pytest.mark.parametrize("original", sorted(PORTS))
def test_a_faithful_ports_table_agrees_everywhere_and_names_no_first_divergence(original):
    report = audit(PORTS[original](), original)
    section = report.reference
    assert section["compared"] and section["first_divergence"] is None
    assert section["cells"] and not any(r["diverges"] or r["first"] for r in section["cells"])
    assert all(r["cosine"] > 0.99999 for r in section["cells"] if r["compared"])


def test_the_json_with_a_reference_follows_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for report in (audit(MLP("swapped-activation"), "mlp"), audit(MLP(), "mlp")):
        validator.validate(json.loads(report.to_json()))
    weights = str(ROOT / "samples" / "GA630" / "original.safetensors")
    only_weights = graphaudit.audit(nn.Dense(2, 2), reference=weights, select=["GA63", "GA64"])
    data = json.loads(only_weights.to_json())
    validator.validate(data)
    assert not data["reference"]["compared"] and "weights only" in data["reference"]["not_compared"]
    assert "outputs not compared: " in only_weights.text()


def test_the_text_says_where_the_port_parts_from_the_original():
    text = audit(TinyTransformer("softmax-axis"), "attention").text()
    section = text[text.index("AGAINST THE ORIGINAL (attention)") :]
    assert "first divergence: the output of attn.softmax (call 1), made in attn.softmax" in section
    assert re.search(r"attn\.softmax \(1\) <- attn\.softmax: 0\.97\d*, 0\.556, 4\.45 \(first\)", section)


def test_a_report_without_reference_carries_nothing_of_it():
    net = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU(), nn.Dense(4, 2)])
    report = graphaudit.audit(net, inputs=Tensor(np.ones((2, 4), np.float32)))
    assert report.reference is None and "reference" not in report.to_dict()
    assert "AGAINST THE ORIGINAL" not in report.text()
    run = to_sarif(report)["runs"][0]
    assert set(run["properties"]) == {"network", "ok", "checksRun", "skipped", "notRun"}
    from graphaudit.draw import to_dot

    dot = to_dot(report.graph, report.findings)
    assert dot == to_dot(report.graph, report.findings, reference=None) and "ga-ref" not in dot


class IdentityInserted(MLP):
    """The faithful MLP with a cell the original does not have (an Identity): nothing to compare it with."""

    def __init__(self) -> None:
        super().__init__()
        self.keep = nn.Identity()

    def construct(self, x):
        return self.fc2(self.norm(self.mid(self.keep(self.act(self.fc1(x))))))


def test_a_cell_the_original_lacks_is_listed_unmatched_and_not_a_finding():
    report = audit(IdentityInserted(), "mlp")
    assert not report.findings, str(report)
    assert report.reference["unmatched_cells"] == ["keep"]
    assert "keep" not in {r["port"] for r in report.reference["cells"]}


@needs_dot
@pytest.mark.parametrize("bug", OUTPUT_BUGS)
def test_the_svg_outlines_the_cell_ga640_names_and_colours_the_cells(bug):
    port, original, (_, subject) = PLANTED_BUGS[bug]
    report = audit(port(bug), original)
    classes = svg_classes(report._repr_svg_())
    first = [ident for ident, cls in classes.items() if "ga-ref-first" in cls.split()]
    path = "" if subject == "(root)" else subject
    assert first == [f"ga-call_3a_{re.sub(r'[.]', '_2e_', path)}_23_1"]
    assert "ga-check-GA640" in classes[first[0]].split()  # the finding's border stays on it
    diverging = [i for i, c in classes.items() if "ga-ref-diverges" in c.split()]
    agreeing = [i for i, c in classes.items() if "ga-ref-agrees" in c.split()]
    rows = report.reference["cells"]
    assert len(diverging) == sum(r["diverges"] or (r["first"] and not r["compared"]) for r in rows)
    assert len(agreeing) + len(diverging) == len(rows)


@needs_dot
def test_the_structure_view_shades_each_cell_by_its_worst_call():
    """Without inputs= the dump's batch is compared and the cells are drawn, not their calls."""
    report = graphaudit.audit(MLP("swapped-activation"), reference=str(PLANTED / "mlp"), select=["GA64"])
    classes = svg_classes(report._repr_svg_())
    assert "ga-ref-first" in classes["ga-cell_3a_act"].split()
    assert "ga-ref-agrees" in classes["ga-cell_3a_fc1"].split()
    assert "ga-ref-diverges" in classes["ga-cell_3a_fc2"].split()


@needs_dot
def test_an_onnx_originals_comparison_is_drawn_alike():
    report = audit(TinyTransformer("softmax-axis"), "attention", "onnx")
    assert (
        report.reference["format"] == "onnx"
        and report.reference["first_divergence"]["cell"] == "attn.softmax"
    )
    classes = svg_classes(report._repr_svg_())
    assert [i for i, c in classes.items() if "ga-ref-first" in c.split()] == [
        "ga-call_3a_attn_2e_softmax_23_1"
    ]


@needs_dot
def test_the_svg_greys_a_cell_without_an_original_and_shades_agreeing_ones_green():
    svg = audit(IdentityInserted(), "mlp")._repr_svg_()
    classes = svg_classes(svg)
    assert "ga-ref-unmatched" in classes["ga-call_3a_keep_23_1"].split()
    assert UNMATCHED_FILL in fills(svg, "ga-call_3a_keep_23_1")
    green = fills(svg, "ga-call_3a_fc1_23_1")[0]
    assert green != KIND_COLORS["call"] and "ga-ref-agrees" in classes["ga-call_3a_fc1_23_1"].split()
    assert "not compared with the original" in svg and "agrees with the original" in svg  # the legend
    assert "diverges from the original" not in svg and "ga-ref-first" not in svg


@needs_dot
def test_the_explorer_shows_the_table_and_the_mapping_beside_the_graph(tmp_path):
    report = audit(CNN("pool-kind"), "cnn")
    page = report.render(tmp_path / "port.html").read_text(encoding="utf-8")
    side = page[page.index('<section class="ga-reference">') : page.index('<section class="ga-details">')]
    assert "First divergence: the output of pool (call 1), made in pool." in side
    assert f"{len(report.reference['cells'])} cell calls compared" in side
    assert '<tr class="ga-ref-first-row"><td>pool (1)</td><td>pool</td>' in side
    assert f"mapping: {len(report.reference['mapping']['pairs'])} pairs" in side
    assert "<td>bn.gamma</td><td>bn.weight</td><td>name</td><td>same</td>" in side
    model = json.loads(
        page[page.index('class="ga-model">') + 17 : page.index("</script>", page.index("ga-model"))]
    )
    pool = next(item for item in model["items"] if item["k"] == "call:pool#1")
    assert "ga-ref-first" in pool["n"] and "peripheries=2" in pool["n"]  # every view the page lays out


def test_sarif_carries_the_first_divergences_figures_and_the_table():
    report = audit(MLP("epsilon"), "mlp")
    run = to_sarif(report)["runs"][0]
    assert run["properties"]["reference"] == json.loads(json.dumps(report.reference))
    result = next(r for r in run["results"] if r["ruleId"] == "GA640")
    figures = result["properties"]["figures"]
    row = next(r for r in report.reference["cells"] if r["first"])
    assert (figures["port"], figures["at"], figures["row"]) == ("norm", "output", row)
    assert figures["row"]["cosine"] < 1 and figures["row"]["max_abs"] > 0


def test_the_scale_keeps_apart_from_the_findings_and_the_plain_boxes():
    """Each end of the scale is far from every severity fill and kind colour (CIELAB, as test_render checks)."""
    from cielab import _distance as lab_distance

    for fill in (*AGREE_FILLS, *DIVERGE_FILLS, divergence_fill(10.0)):
        assert min(lab_distance(fill, other) for other in SEVERITY_FILLS.values()) >= 20, fill
    for fill in (AGREE_FILLS[0], *DIVERGE_FILLS[1:]):
        assert min(lab_distance(fill, other) for other in KIND_COLORS.values()) >= 20, fill
    assert divergence_fill(0.5) != divergence_fill(2.0)  # the tolerance is a step, not a blend


@pytest.mark.slow
@pytest.mark.parametrize(("pair", "first"), [("bert", "cls.predictions.decoder"), ("vit", None)])
def test_a_real_pairs_table_and_drawing(pair, first):
    """mindone's BERT against transformers' (its prediction bias never added) and a faithful ViT."""
    pytest.importorskip("mindone")
    from zoo import ports, shims

    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference_outputs import ReferenceOutputs

    with shims.for_mindone():
        model = ports.build(pair)
        dump = str(ports.reference_file(pair, "weights").parent / "dump")
        batch = ports.inputs(pair, model)
        report = graphaudit.audit(model, inputs=batch, reference=dump, select=["GA63", "GA64"])
        request = AuditRequest(model, inputs=batch, options={"reference": dump})
        comparison = EvidenceSet(request).need(ReferenceOutputs).comparison
    rows = report.reference["cells"]
    assert len(rows) == len(comparison.calls) > 30
    for row, call in zip(rows, comparison.calls):
        assert (row["port"], row["call"], row["diverges"]) == (call.port, call.call, call.diverges)
        if call.output is not None:
            assert row["max_abs"] == pytest.approx(call.output.max_abs, rel=1e-6, abs=1e-9)
    named = report.reference["first_divergence"]
    assert (named["cell"] if named else None) == first
    if shutil.which("dot") is None:
        return
    classes = svg_classes(report._repr_svg_())
    outlined = [i for i, c in classes.items() if "ga-ref-first" in c.split()]
    assert outlined == ([f"ga-call_3a_{first.replace('.', '_2e_')}_23_1"] if first else [])
    assert not first or sum("ga-ref-diverges" in c.split() for c in classes.values()) < len(rows)


def test_a_port_output_that_is_not_finite_is_null_in_json_and_drawn_diverging():
    from graphaudit.capture.reference.compare import CallFigures, Figures

    nan = Figures.of(np.float32([np.nan, 1.0]), np.float32([1.0, 1.0]))
    row = CallFigures("fc", "fc", 0, "float32", nan, None).to_dict()
    json.dumps(row, allow_nan=False)  # valid JSON: no NaN literal
    assert row["max_abs"] is None and row["diverges"] and row["compared"]
    assert divergence_fill(float("nan")) == DIVERGE_FILLS[1]

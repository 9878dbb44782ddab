"""Real ports against the PyTorch originals they were made from (``tests/references/<pair>/``).

Each pair is a mindone.transformers or mindcv port and its transformers/torchvision original
at one tiny config: the original's weights (``.safetensors`` as ``save_pretrained`` writes
them, a tied weight once; ``.pth`` with its ties; an ONNX export for some), written by
``scripts/references/make_references.py`` where torch is installed. Here, MindSpore only:
the port is built from the pair's ``manifest.json`` (``tests/zoo/ports.py``) and audited
against each file. A faithful port gives no GA630-GA634 finding and every weight of the
original is paired; the port differences that are real are listed in :data:`REAL_DIFFERENCES`
with their cause. Bugs injected into a few ports (a layer dropped, a weight stored the other
way, a tie broken, another model's file) are found by the check that names them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from zoo import ports, shims

import graphaudit

pytest.importorskip("mindone")
pytest.importorskip("mindcv")

PORT_CHECKS = ["GA630", "GA631", "GA632", "GA633", "GA634"]
PAIRS = ports.pairs()

#: ``pair -> findings`` that are real differences between the port and its original.
REAL_DIFFERENCES: dict[str, list[tuple[str, str]]] = {
    # mindcv's ShuffleNetV2 head is nn.Dense(1024, 10, has_bias=False); torchvision's fc has a bias
    "shufflenet_v2_x0_5": [("GA630", "classifier")],
}


@pytest.fixture(scope="module")
def mindone_shims() -> Iterator[None]:
    with shims.for_mindone():
        yield


def files(pair: str) -> list[str]:
    return ["weights"] + (["onnx"] if "model.onnx" in ports.manifest(pair)["files"] else [])


def port_findings(model: Any, pair: str, reference: Any, *, run: bool = False) -> list[tuple[str, str]]:
    """The port checks' findings; the network's structure is enough for them, its forward pass (*run*) optional."""
    batch = ports.inputs(pair, model) if run else None
    report = graphaudit.audit(model, inputs=batch, reference=reference, select=PORT_CHECKS)
    assert set(PORT_CHECKS) <= set(report.checks_run), report.skipped
    return sorted((f.check_id, f.subject) for f in report.findings)


def weights_of(model: Any, pair: str, reference: Any) -> Any:
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference import ReferenceWeights

    request = AuditRequest(model, options={"reference": reference})
    return EvidenceSet(request).need(ReferenceWeights)


@pytest.mark.parametrize(
    ("pair", "kind"), [(pair, kind) for pair in PAIRS for kind in files(pair)], ids=lambda v: str(v)
)
def test_a_real_port_matches_its_original_and_every_weight_is_paired(mindone_shims, pair, kind):
    model = ports.build(pair)
    reference = str(ports.reference_file(pair, kind))
    assert port_findings(model, pair, reference) == REAL_DIFFERENCES.get(pair, [])
    weights = weights_of(model, pair, reference)
    tied = {name for tie in weights.reference_ties for name in tie}
    unpaired = set(weights.mapping.reference_only) - tied - set(weights.buffers)
    assert unpaired == ({"fc.bias"} if pair == "shufflenet_v2_x0_5" else set())
    assert [p for p in weights.mapping.pairs if p.layout != "same"] == []


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_a_real_port_run_on_the_originals_batch_matches_it_too(mindone_shims, pair):
    model = ports.build(pair)
    found = port_findings(model, pair, str(ports.reference_file(pair)), run=True)
    assert found == REAL_DIFFERENCES.get(pair, [])


@pytest.mark.parametrize(
    ("pair", "port", "reference"),
    [
        # mindcv numbers its layers otherwise (conv, BN and activation are three cells of features)
        # and lists a BatchNorm's parameters moving_mean first: paired by order, each with its own
        ("mobilenet_v2_035", "features.1.moving_mean", "features.0.1.running_mean"),
        ("mobilenet_v2_035", "features.1.gamma", "features.0.1.weight"),
        ("mobilenet_v2_035", "features.3.layers.4.beta", "features.1.conv.2.bias"),
        ("mobilenet_v2_035", "classifier.1.weight", "classifier.1.weight"),
        ("mobilenet_v3_small_075", "features.3.layers.3.conv_expand.weight", "features.1.block.1.fc2.weight"),
        # mindcv's branch_main/branch_proj are torchvision's branch2/branch1, registered the other way
        ("shufflenet_v2_x0_5", "features.0.branch_main.1.moving_variance", "stage2.0.branch2.1.running_var"),
        ("shufflenet_v2_x0_5", "features.0.branch_proj.0.weight", "stage2.0.branch1.0.weight"),
        ("shufflenet_v2_x0_5", "classifier.weight", "fc.weight"),
        # a tie the file keeps once: the port's head (met first) is the embedding it is tied to
        ("gpt2", "lm_head.weight", "transformer.wte.weight"),
        ("squeezenet1_1", "final_conv.weight", "classifier.1.weight"),
    ],
)
def test_renamed_and_reordered_parameters_pair_with_the_right_weight(mindone_shims, pair, port, reference):
    model = ports.build(pair)
    weights = weights_of(model, pair, str(ports.reference_file(pair)))
    assert {p.port: p.reference for p in weights.mapping.pairs}[port] == reference


def test_a_layer_dropped_from_the_port_is_missing(mindone_shims):
    from mindone.transformers import LlamaForCausalLM

    model = ports.build("llama")
    del model.model.layers[1]  # a port that stopped one layer short
    assert isinstance(model, LlamaForCausalLM)
    found = port_findings(model, "llama", str(ports.reference_file("llama")), run=True)
    # one cause, one finding: the layer the port lacks, naming each of its weights
    assert found == [("GA630", "model.layers.1")], found


def test_a_dense_replaced_by_a_matmul_of_the_other_layout_is_transposed(mindone_shims):
    import mindspore as ms
    from mindspore import Parameter, Tensor, nn, ops

    class InOut(nn.Cell):
        """``x @ W + b`` with ``W`` stored ``(in, out)``: what a port that hand-writes a Linear may do."""

        def __init__(self, dense: Any) -> None:
            super().__init__()
            self.weight = Parameter(Tensor(dense.weight.asnumpy().T.copy(), ms.float32), name="weight")
            self.bias = dense.bias

        def construct(self, x: Any) -> Any:
            return ops.matmul(x, self.weight) + self.bias

    model = ports.build("bert")
    intermediate = model.bert.encoder.layer[0].intermediate
    intermediate.dense = InOut(intermediate.dense)
    found = port_findings(model, "bert", str(ports.reference_file("bert")), run=True)
    assert found == [("GA632", "bert.encoder.layer.0.intermediate.dense")]


def test_a_head_untied_from_its_embedding_is_found_against_the_file_that_ties_them(mindone_shims):
    from mindspore import Parameter

    model = ports.build("bert")
    decoder = model.cls.predictions.decoder
    decoder.weight = Parameter(decoder.weight.value().copy(), name="decoder.weight")
    found = port_findings(model, "bert", str(ports.reference_file("bert")))
    assert [check for check, _ in found] == ["GA633"]


def test_another_models_file_is_said_to_be_another_model(mindone_shims):
    model = ports.build("llama")
    found = port_findings(model, "llama", str(ports.reference_file("gpt2")))
    # one finding: the few pairs the order pass finds by chance (lm_head against GPT-2's c_fc, the
    # transpose of its shape) are not reported as a transposed weight as well
    assert found == [("GA634", "(root)")]


def test_the_fixtures_are_small_and_say_how_they_were_made():
    total = 0
    for pair in PAIRS:
        manifest = ports.manifest(pair)
        folder = ports.FOLDER / pair
        size = sum(p.stat().st_size for p in folder.iterdir())
        total += size
        assert size < 2_700_000, (pair, size)
        assert manifest["command"].startswith("python scripts/references/make_references.py")
        assert set(manifest["inputs"]) == set(np.load(folder / "inputs.npz").files)
        assert "" in np.load(folder / "outputs.npz").files
    assert total < 15_000_000
    assert len(PAIRS) >= 10


#: ``pair -> GA640's finding`` on the pairs whose original was dumped (``<pair>/dump/``, by
#: scripts/references/make_dumps.py): the port run with the original's weights and batch.
DUMPED = {
    # mindone's BertLMPredictionHead builds decoder = nn.Dense(..., has_bias=False) and then sets
    # decoder.bias, which nn.Dense never adds: the prediction bias (cls.predictions.bias) is a
    # parameter nothing reads (GA302 says so too); the original adds it to the logits
    "bert": [("GA640", "cls.predictions.decoder")],
    **{
        pair: []
        for pair in ("gpt2", "llama", "t5", "bart", "distilbert", "roberta", "vit", "opt", "gpt_neox")
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("pair", sorted(DUMPED))
def test_a_real_port_with_its_originals_weights_computes_what_the_original_computed(mindone_shims, pair):
    model = ports.build(pair)
    dump = ports.reference_file(pair, "weights").parent / "dump"
    report = graphaudit.audit(
        model, inputs=ports.inputs(pair, model), reference=str(dump), select=["GA63", "GA64"]
    )
    assert "GA640" in report.checks_run, report.skipped
    assert [(f.check_id, f.subject) for f in report.findings] == DUMPED[pair], str(report)


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["bert", "t5"])
def test_without_inputs_a_keyword_dumps_batch_is_given_to_the_port_by_name(mindone_shims, pair):
    """The dump's input_ids, attention_mask (and T5's decoder_input_ids) go to construct's parameters of those names."""
    report = graphaudit.audit(
        ports.build(pair),
        reference=str(ports.reference_file(pair, "weights").parent / "dump"),
        select=["GA63", "GA64"],
    )
    assert "GA640" in report.checks_run, report.skipped
    assert [(f.check_id, f.subject) for f in report.findings] == DUMPED[pair], str(report)


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["bert", "gpt2"])
def test_a_real_ports_msprobe_dump_gives_the_same_findings_as_graphaudits_dump(mindone_shims, pair):
    """msprobe's real L0 dump (``tests/references/<pair>/msprobe/``, scripts/references/make_msprobe.py).

    Its weights are the modules' parameters (GPT-2's tied lm_head and wte told by their equal values).
    """
    model = ports.build(pair)
    folder = ports.reference_file(pair, "weights").parent / "msprobe"
    report = graphaudit.audit(
        model, inputs=ports.inputs(pair, model), reference=str(folder), select=["GA63", "GA64"]
    )
    assert "GA640" in report.checks_run, report.skipped
    assert [(f.check_id, f.subject) for f in report.findings] == DUMPED[pair], str(report)


#: ``pair -> findings`` with the original given as its ONNX export, run in onnxruntime on the batch.
ONNX_RUN = {
    "bert": [("GA640", "cls.predictions.decoder")],  # the same bug as from the dump (DUMPED)
    "vit": [],
    # the head's bias (GA640 cannot load one to one), and the stem's max pool 'same' (ATTRIBUTE_DIFFERENCES)
    "shufflenet_v2_x0_5": [("GA630", "classifier"), ("GA638", "max_pool")],
}


@pytest.mark.slow
@pytest.mark.parametrize("pair", sorted(ONNX_RUN))
def test_a_real_ports_onnx_original_run_in_onnxruntime_gives_the_same_findings(mindone_shims, pair):
    model = ports.build(pair)
    reference = str(ports.reference_file(pair, "onnx"))
    report = graphaudit.audit(
        model, inputs=ports.inputs(pair, model), reference=reference, select=["GA63", "GA64"]
    )
    assert [(f.check_id, f.subject) for f in report.findings] == ONNX_RUN[pair], str(report)
    assert ("GA640" in report.checks_run) == (pair != "shufflenet_v2_x0_5"), report.skipped


#: ``pair -> findings of the attribute checks`` that are real differences, with their cause.
ATTRIBUTE_DIFFERENCES = {
    # mindcv's ShuffleNetV2: nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same"); torchvision's
    # nn.MaxPool2d(3, 2, padding=1): on an even feature map (112 after the stem on 224 inputs)
    # MindSpore's 'same' pads 0 before and 1 after, torchvision 1 on each side: windows shifted by one
    "shufflenet_v2_x0_5": [("GA638", "max_pool", "warning")],
}
#: The references that record attributes: every dump (``<pair>/dump/``) and ONNX export.
ATTRIBUTED = [
    (pair, kind)
    for pair in PAIRS
    for kind in ("dump", "onnx")
    if (kind == "dump" and (ports.FOLDER / pair / "dump").is_dir())
    or (kind == "onnx" and "model.onnx" in ports.manifest(pair)["files"])
]


@pytest.mark.parametrize(("pair", "kind"), ATTRIBUTED, ids=lambda v: str(v))
def test_a_real_ports_layer_attributes_are_the_originals(mindone_shims, pair, kind):
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference_attributes import ReferenceAttributes

    model = ports.build(pair)
    reference = str(ports.FOLDER / pair / "dump" if kind == "dump" else ports.reference_file(pair, "onnx"))
    checks = ["GA635", "GA636", "GA637", "GA638", "GA639"]
    report = graphaudit.audit(model, reference=reference, select=checks)
    assert set(checks) <= set(report.checks_run), report.skipped
    found = sorted((f.check_id, f.subject, f.severity) for f in report.findings)
    assert found == ATTRIBUTE_DIFFERENCES.get(pair, []), str(report)
    compared = (
        EvidenceSet(AuditRequest(model, options={"reference": reference})).need(ReferenceAttributes).compared
    )
    # LayerNorms, dropouts, activations, convs and pools paired and compared (Llama's RMSNorm and
    # its SiLU as a function have none of the known kinds)
    assert compared >= (0 if pair == "llama" else 5), compared

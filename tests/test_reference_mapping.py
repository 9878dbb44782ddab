"""The port's parameters paired with the original's weights: by name (MindSpore's spellings read as
PyTorch's), by a prefix that differs, by module order and shape; and what is left, reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn

import graphaudit
from graphaudit.capture.reference import read_reference
from graphaudit.capture.reference.mapping import map_parameters

ROOT = Path(__file__).resolve().parent.parent
PORT_CHECKS = ["GA630", "GA631", "GA632", "GA633", "GA634"]


def test_a_prefix_that_differs_is_found_by_the_names_it_explains():
    port = {"model.encoder.0.weight": (4, 4), "model.encoder.0.bias": (4,), "model.head.weight": (2, 4)}
    ref = {"bert.encoder.0.weight": (4, 4), "bert.encoder.0.bias": (4,), "bert.head.weight": (2, 4)}
    mapping = map_parameters(port, ref)
    assert [(p.reference, p.how) for p in mapping.pairs] == [
        ("bert.encoder.0.weight", "prefix"),
        ("bert.encoder.0.bias", "prefix"),
        ("bert.head.weight", "prefix"),
    ]


def test_renamed_layers_pair_by_their_lone_shapes_and_the_user_can_say_the_rest():
    port = {"blocks.0.w": (8, 4), "blocks.0.b": (8,), "blocks.1.w": (2, 8), "blocks.1.b": (2,)}
    ref = {"fc1.weight": (8, 4), "fc1.bias": (8,), "fc2.weight": (2, 8), "fc2.bias": (2,)}
    mapping = map_parameters(port, ref)
    assert [(p.port, p.reference, p.how) for p in mapping.pairs] == [
        ("blocks.0.w", "fc1.weight", "signature"),
        ("blocks.0.b", "fc1.bias", "signature"),
        ("blocks.1.w", "fc2.weight", "signature"),
        ("blocks.1.b", "fc2.bias", "signature"),
    ]
    swapped = map_parameters(port, ref, {"blocks.1.b": "fc1.bias"})
    assert swapped.pairs[-1] == type(swapped.pairs[0])("blocks.1.b", "fc1.bias", "given", "shape")


def test_unordered_files_are_paired_in_natural_order():
    port = {f"layers.{i}.w": (3, 3) for i in range(12)}
    ref = {f"h.{i}.weight": (3, 3) for i in range(12)}
    mapping = map_parameters(port, ref, reference_ordered=False)
    assert [(p.port, p.reference) for p in mapping.pairs][10:] == [
        ("layers.10.w", "h.10.weight"),
        ("layers.11.w", "h.11.weight"),
    ]


def test_a_transposed_weight_pairs_and_says_so_unless_the_file_cannot_tell():
    mapping = map_parameters({"fc.weight": (8, 4)}, {"fc.weight": (4, 8)})
    assert mapping.pairs[0].layout == "transposed"
    onnx = map_parameters(
        {"fc.weight": (8, 4)}, {"fc.weight": (4, 8)}, stored_transposed=frozenset({"fc.weight"})
    )
    assert onnx.pairs[0].layout == "same"


class Lm(nn.Cell):
    def __init__(self, tie: bool) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 8)
        self.hidden = nn.Dense(8, 8, activation="tanh")
        self.head = nn.Dense(8, 32, has_bias=False)
        if tie:
            self.head.weight = self.embed.embedding_table
        self.rotary = Parameter(Tensor(np.ones(4, np.float32)), requires_grad=False)  # computed, never saved

    def construct(self, ids):
        return self.head(self.hidden(self.embed(ids)))


IDS = Tensor(np.zeros((2, 5), np.int32))


@pytest.mark.parametrize("tie", [True, False])
def test_ties_against_a_state_dict_that_ties_and_a_safetensors_file_that_drops_the_copy(tie):
    pth = ROOT / "samples" / "GA633" / "original.pth"
    report = graphaudit.audit(Lm(tie), inputs=IDS, reference=str(pth), select=PORT_CHECKS)
    assert [f.check_id for f in report.findings] == ([] if tie else ["GA633"])
    tensors = read_reference(pth).tensors
    saved = {
        name: array for name, array in tensors.items() if name != "head.weight"
    }  # as save_pretrained does
    report = graphaudit.audit(Lm(tie), inputs=IDS, reference=saved, select=PORT_CHECKS)
    found = [(f.check_id, f.subject) for f in report.findings]
    assert found == ([] if tie else [("GA631", "head.weight")])
    if not tie:
        assert "The original's embed.weight has the same shape" in report.findings[0].message


def test_integer_buffers_and_frozen_computed_parameters_are_never_missing_or_added():
    tensors = dict(read_reference(ROOT / "samples" / "GA633" / "original.pth").tensors)
    tensors["head.weight"] = tensors["embed.weight"]  # tied in a dict: one object under two names
    tensors["position_ids"] = np.arange(5)[None]
    report = graphaudit.audit(Lm(True), inputs=IDS, reference=tensors, select=PORT_CHECKS)
    assert report.ok and not report.findings
    assert set(PORT_CHECKS) <= set(report.checks_run)


def test_a_reference_map_file_corrects_the_mapping(tmp_path):
    import json

    class Renamed(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Dense(4, 4)
            self.b = nn.Dense(4, 4)

        def construct(self, x):
            return self.b(self.a(x))

    ref = {
        "first.weight": np.zeros((4, 4)),
        "first.bias": np.zeros(4),
        "second.weight": np.zeros((4, 4)),
        "second.bias": np.zeros(4),
    }
    x = Tensor(np.ones((1, 4), np.float32))
    plain = graphaudit.audit(Renamed(), inputs=x, reference=ref, select=PORT_CHECKS)
    assert not plain.findings  # by order
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"a.weight": "second.weight", "a.bias": "second.bias"}))
    mapped = graphaudit.audit(Renamed(), inputs=x, reference=ref, reference_map=str(path), select=PORT_CHECKS)
    assert not mapped.findings
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference import ReferenceWeights

    request = AuditRequest(Renamed(), options={"reference": ref, "reference_map": str(path)})
    pairs = EvidenceSet(request).need(ReferenceWeights).mapping.to_dict()["pairs"]
    assert pairs[0] == {"port": "a.weight", "reference": "second.weight", "how": "given", "layout": "same"}


def test_a_batchnorm_paired_by_order_pairs_each_statistic_with_its_own():
    # MindSpore lists moving_mean, moving_variance, gamma, beta; PyTorch weight, bias, running_*;
    # a .safetensors file sorts bias before weight: all four of one shape, so order alone would swap them
    port = {
        "features.0.weight": (8, 3, 3, 3),
        "features.1.moving_mean": (8,),
        "features.1.moving_variance": (8,),
        "features.1.gamma": (8,),
        "features.1.beta": (8,),
    }
    ref = ["features.0.0.weight", "features.0.1.bias", "features.0.1.running_mean"]
    ref += ["features.0.1.running_var", "features.0.1.weight"]
    shapes = {name: (8, 3, 3, 3) if name.endswith("0.weight") else (8,) for name in ref}
    mapping = map_parameters(port, shapes, reference_ordered=False)
    assert {p.port: p.reference for p in mapping.pairs} == {
        "features.0.weight": "features.0.0.weight",
        "features.1.moving_mean": "features.0.1.running_mean",
        "features.1.moving_variance": "features.0.1.running_var",
        "features.1.gamma": "features.0.1.weight",
        "features.1.beta": "features.0.1.bias",
    }


def test_a_prefix_is_not_taken_from_a_few_names_that_share_only_a_tail():
    # mindcv's features.5.layers.{0,1,3,4} are torchvision's features.3.conv.{0.0,0.1,1.0,1.1}: the
    # BatchNorm "1" of both shares the tail "1.running_mean" with the wrong one, conv.1.1
    port = {"features.5.layers.0.weight": (48, 8, 1, 1), "features.5.layers.1.moving_mean": (48,)}
    port |= {"features.5.layers.1.moving_variance": (48,), "features.5.layers.3.weight": (48, 1, 3, 3)}
    port |= {"features.5.layers.4.moving_mean": (48,), "features.5.layers.4.moving_variance": (48,)}
    ref = {"features.3.conv.0.0.weight": (48, 8, 1, 1), "features.3.conv.0.1.running_mean": (48,)}
    ref |= {"features.3.conv.0.1.running_var": (48,), "features.3.conv.1.0.weight": (48, 1, 3, 3)}
    ref |= {"features.3.conv.1.1.running_mean": (48,), "features.3.conv.1.1.running_var": (48,)}
    mapping = map_parameters(port, ref)
    pairs = {p.port: (p.reference, p.how) for p in mapping.pairs}
    assert pairs["features.5.layers.1.moving_mean"] == ("features.3.conv.0.1.running_mean", "order")
    assert pairs["features.5.layers.4.moving_variance"] == ("features.3.conv.1.1.running_var", "order")
    assert all(p.layout == "same" for p in mapping.pairs)


def test_a_tied_head_met_first_pairs_through_the_name_the_file_keeps():
    # save_pretrained keeps the embedding's name of a tie; the port's walk meets lm_head first
    port = {"lm_head.weight": (32, 8), "body.weight": (8, 8)}
    ref = {"embed.weight": (32, 8), "body.weight": (8, 8)}
    mapping = map_parameters(
        port, ref, aliases={"lm_head.weight": ("lm_head.weight", "embed.embedding_table")}
    )
    assert [(p.port, p.reference, p.how) for p in mapping.pairs] == [
        ("lm_head.weight", "embed.weight", "alias"),
        ("body.weight", "body.weight", "name"),
    ]
    assert mapping.port_only == mapping.reference_only == ()


def test_parameters_are_in_module_order_and_a_ports_buffers_are_no_missing_weights():
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference import ReferenceWeights

    class Head(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.block = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 4)])
            self.out = nn.Dense(4, 2)
            self.register_buffer("logits_bias", Tensor(np.zeros((1, 2), np.float32)))

        def construct(self, x):
            return self.out(self.block(x)) + self.logits_bias

    ref = {
        "block.0.weight": np.zeros((4, 4)),
        "block.0.bias": np.zeros(4),
        "block.1.weight": np.zeros((4, 4)),
    }
    ref |= {"block.1.bias": np.zeros(4), "out.weight": np.zeros((2, 4)), "out.bias": np.zeros(2)}
    ref["logits_bias"] = np.zeros((1, 2), np.float32)  # a float buffer (BART's final_logits_bias)
    weights = EvidenceSet(AuditRequest(Head(), options={"reference": ref})).need(ReferenceWeights)
    order = ["block.0.weight", "block.0.bias", "block.1.weight", "block.1.bias", "out.weight", "out.bias"]
    assert list(weights.port_shapes) == order  # depth first, as PyTorch lists them; the walk is breadth first
    assert "logits_bias" in weights.buffers
    report = graphaudit.audit(Head(), reference=ref, select=PORT_CHECKS)
    assert not report.findings


class _Renamed(nn.Cell):
    """Two Dense cells whose original names are first and second, listed the other way round."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Dense(4, 4)
        self.b = nn.Dense(4, 4)

    def construct(self, x):
        return self.b(self.a(x))


_SWAPPED = {
    "first.weight": np.zeros((4, 4)),
    "first.bias": np.zeros(4),
    "second.weight": np.zeros((4, 4)),
    "second.bias": np.zeros(4),
}


@pytest.mark.parametrize(
    "text",
    [
        '[reference_map]\n"a.weight" = "second.weight"\n"a.bias" = "second.bias"\n',
        '[[pairs]]\nport = "a.weight"\nreference = "second.weight"\n'
        '[[pairs]]\nport = "a.bias"\nreference = "second.bias"\nhow = "given"\n',
        '"a.weight" = "second.weight"\n[reference_map]\n"a.bias" = "second.bias"\n',
    ],
    ids=["table", "pairs", "top-level-and-table"],
)
def test_a_toml_reference_map_pairs_as_the_json_one_does(tmp_path, text):
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference import ReferenceWeights

    path = tmp_path / "pairs.toml"
    path.write_text(text)
    request = AuditRequest(_Renamed(), options={"reference": _SWAPPED, "reference_map": str(path)})
    pairs = EvidenceSet(request).need(ReferenceWeights).mapping.to_dict()["pairs"]
    assert [(p["port"], p["reference"], p["how"]) for p in pairs[:2]] == [
        ("a.weight", "second.weight", "given"),
        ("a.bias", "second.bias", "given"),
    ]
    x = Tensor(np.ones((1, 4), np.float32))
    report = graphaudit.audit(
        _Renamed(), inputs=x, reference=_SWAPPED, reference_map=path, select=PORT_CHECKS
    )
    assert report.ok and not report.findings, str(report)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[reference_map\n", r"is not a readable TOML file"),
        ('[reference_map]\n"a.weight" = 3\n', r"\[reference_map\] pairs 'a.weight' with a int"),
        ('[[pairs]]\nport = "a.weight"\n', r"pair 1 of \"pairs\" is \{'port': 'a.weight'\}"),
    ],
    ids=["syntax", "not-a-name", "pair-without-reference"],
)
def test_a_malformed_toml_reference_map_is_refused_saying_what(tmp_path, text, message):
    path = tmp_path / "pairs.toml"
    path.write_text(text)
    with pytest.raises(graphaudit.errors.ArgumentTypeError, match=message):
        graphaudit.audit(_Renamed(), reference=_SWAPPED, reference_map=str(path), select=PORT_CHECKS)


def test_a_json_pairs_entry_without_its_reference_is_refused(tmp_path):
    path = tmp_path / "pairs.json"
    path.write_text('{"pairs": [{"port": "a.weight"}]}')
    with pytest.raises(graphaudit.errors.ArgumentTypeError, match=r"each names a port parameter"):
        graphaudit.audit(_Renamed(), reference=_SWAPPED, reference_map=str(path), select=PORT_CHECKS)

"""GA301 on cells left out of a pass by design: LayerDrop and routed experts are info, a forgotten cell a warning.

A decoder that skips a layer at random in training (LayerDrop, as NLLB-MoE's) and a mixture of
experts that calls only the experts its tokens are routed to (as Switch Transformers') leave
cells out of the one traced pass with nothing wrong; the sweep of mindone's transformers drew
four false GA301 warnings from them (issue 41). A cell a config flag leaves out, or one that
no code calls, is still a warning: it is trained and saved and never used.
"""

from __future__ import annotations

import numpy as np
from mindspore import Tensor, nn, ops

import graphaudit

X = Tensor(np.ones((4, 2), np.float32))


class LayerDrop(nn.Cell):
    def __init__(self, layerdrop: float) -> None:
        super().__init__()
        self.layers = nn.CellList([nn.Dense(2, 2) for _ in range(3)])
        self.layerdrop = layerdrop

    def construct(self, x):
        for layer in self.layers:
            dropout_probability = ops.rand(())
            skip_the_layer = self.training and dropout_probability < self.layerdrop
            if not skip_the_layer:
                x = layer(x)
        return x


class Routed(nn.Cell):
    """Top-1 routing over 3 experts; the router's bias sends every token to expert 0."""

    def __init__(self) -> None:
        super().__init__()
        self.router = nn.Dense(2, 3)
        self.router.bias.set_data(Tensor(np.array([100.0, 0.0, 0.0], np.float32)))
        self.experts = nn.CellDict({f"expert_{i}": nn.Dense(2, 2) for i in range(3)})

    def construct(self, x):
        chosen = ops.argmax(self.router(x), -1)
        out = x
        for idx in ops.unique(chosen)[0].tolist():
            out = out + getattr(self.experts, f"expert_{idx}")(x)
        return out


class Flagged(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.CellList([nn.Dense(2, 2) for _ in range(2)])
        self.use_second = False

    def construct(self, x):
        for i, layer in enumerate(self.layers):
            if i == 0 or self.use_second:
                x = layer(x)
        return x


def ga301(net: nn.Cell) -> list[tuple[str, str]]:
    report = graphaudit.audit(net, inputs=X, select=["GA301"])
    return [(f.severity, f.subject) for f in report.findings]


def test_layers_layerdrop_skipped_are_info_naming_the_draw():
    net = LayerDrop(layerdrop=1.0)  # every layer skipped in training: the pass calls none
    net.set_train(True)
    report = graphaudit.audit(net, inputs=X, select=["GA301"])
    assert [(f.severity, f.subject) for f in report.findings] == [("info", "layers")]
    assert "a random draw skips it (LayerDrop)" in report.findings[0].message


def test_experts_no_token_was_routed_to_are_info():
    found = ga301(Routed())
    assert found == [("info", "experts")], found


def test_a_layer_a_config_flag_leaves_out_is_still_a_warning():
    assert ga301(Flagged()) == [("warning", "layers.1")]

"""The dependency probe with several batched inputs, and through ``@jit`` code.

Every batched input is changed with the primary one, sample by sample: a model that mixes
samples through its ``position_ids`` (not its token ids) is found, and a sound model with
token ids, token types, position ids and an attention mask is not reported by any probe.
What the user compiles with ``mindspore.jit`` runs as Python for the probe (``MS_JIT=0``),
so the hooks see inside it and the finding names the cell inside.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import Tensor, jit, nn, ops

from graphaudit.evidence import EvidenceSet
from graphaudit.evidence.dependency import DependencyProbe

B, T, VOCAB = 2, 8, 16


def probe(net: nn.Cell, inputs: tuple, **options) -> DependencyProbe:
    from graphaudit.runner.request import build_request

    return EvidenceSet(build_request(net, inputs=inputs, options=options)).need(DependencyProbe)


class Tagger(nn.Cell):
    """Token, token-type and position embeddings, a causal running mean over the real tokens."""

    def __init__(self, swap_positions: bool = False) -> None:
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, 8)
        self.types = nn.Embedding(2, 8)
        self.positions = nn.Embedding(2 * T, 8)
        self.head = nn.Dense(8, VOCAB)
        self.swap_positions = swap_positions

    def construct(self, input_ids, token_type_ids, position_ids, attention_mask):
        if self.swap_positions:  # the bug: a reshape where a transpose was meant, on position_ids only
            position_ids = position_ids.reshape(position_ids.shape[1], position_ids.shape[0]).T
        # tanh binds each token to its position: a plain sum's running mean would be a bag of words
        h = ops.tanh(self.tokens(input_ids) + self.types(token_type_ids) + self.positions(position_ids))
        weight = attention_mask.astype(h.dtype).expand_dims(-1)
        mean = ops.cumsum(h * weight, 1) / ops.maximum(ops.cumsum(weight, 1), 1.0)
        return self.head(mean)


def tagger_inputs() -> tuple[Tensor, ...]:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, (B, T)).astype(np.int32)
    types = np.array([[0] * 5 + [1] * 3, [0] * 3 + [1] * 5], np.int32)
    positions = (np.arange(T)[None, :] + np.array([[0], [3]])).astype(np.int32)
    mask = np.ones((B, T), np.int32)
    return tuple(Tensor(a) for a in (ids, types, positions, mask))


def test_a_sound_model_with_four_batched_inputs_moves_by_exactly_zero():
    ms.set_seed(0)  # the pass count depends on how far the reordered prefix moves: fixed weights
    result = probe(Tagger(), tagger_inputs(), causal=True, mask_input="attention_mask").result
    assert {k: r.found for k, r in result.results.items()} == {
        "batch": False,
        "future": False,
        "padding": False,
        "positions": False,
    }
    assert all(result.results[k].change == 0.0 for k in ("batch", "future", "padding"))
    # the reordered prefix moves the running mean by 2e-6 of its scale, within what the reversed
    # combined pass may move by: the order is read again on a pass as given (docs/dependencies.md)
    assert result.passes == 3


def test_samples_mixed_through_a_side_input_alone_are_found():
    """The token ids are untouched by the bug: only changing position_ids with them shows it."""
    result = probe(Tagger(swap_positions=True), tagger_inputs()).result
    batch = result.results["batch"]
    # The reshape is in the network's own construct: the embedding is handed ids already mixed.
    assert batch.found and batch.entry == "", batch


def test_a_constant_side_input_is_left_as_it_is():
    """Token types of zeros have no other valid value (a second type may not exist)."""
    from graphaudit.capture.dependency.plan import Change, Plan

    ids, types, positions, mask = (t.asnumpy() for t in tagger_inputs())
    types[:] = 0
    plan = Plan.of([ids, types, positions, mask], sequence=True, mask=3)
    assert plan.batched == (2, 3)
    changed = plan.variant([Change(1, "all"), Change(0, "future"), Change(0, "pads")])
    assert (changed[1] == 0).all()
    assert changed[3][1].tolist() == [0, 0, 1, 1, 1, 1, 1, 1]  # a quarter of the last sample flipped
    assert changed[3][0].tolist() == [0, 0, 1, 1, 1, 1, 1, 1]  # sample 0's mask: as the probe padded it
    # position_ids of sample 0: changed at its pads (0, 1) and its future (5, 6), kept elsewhere
    assert (changed[2][0] != positions[0]).tolist() == [True, True, False, False, False, True, True, False]


class Mixer(nn.Cell):
    def construct(self, x):
        return x - x.mean(axis=0, keep_dims=True)


class Compiled(nn.Cell):
    """The user compiled the whole forward pass with ``@jit``; the mixing is in a child inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.mix = Mixer()
        self.out = nn.Dense(4, 2)

    @jit
    def construct(self, x):
        return self.out(self.mix(self.fc(x)))


def test_the_entry_is_named_inside_a_jit_construct():
    x = Tensor(np.random.default_rng(0).normal(size=(B, 4)).astype(np.float32))
    net = Compiled()
    before = ms.get_context("mode")
    result = probe(net, (x,)).result
    assert result.results["batch"].found and result.results["batch"].entry == "mix"
    assert ms.get_context("mode") == before and not net._forward_hook


def test_an_encoder_family_causal_lm_configured_as_an_encoder_is_told_so():
    """BERT-like ``*ForCausalLM`` attend both ways unless ``config.is_decoder``: the reason says so."""
    from types import SimpleNamespace

    from graphaudit.evidence.dependency import recognised_causal

    class EncoderForCausalLM(nn.Dense):  # this module's code reads config.is_decoder, as BERT's does
        pass

    net = EncoderForCausalLM(2, 2)
    net.config = SimpleNamespace(is_decoder=False)
    assert "whose config says is_decoder=False" in str(recognised_causal({"": net}))
    net.config = SimpleNamespace(is_decoder=True)
    assert recognised_causal({"": net}) == "it holds a EncoderForCausalLM"

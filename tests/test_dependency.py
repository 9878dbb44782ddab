"""The dependency probe (GA340-GA343): what it runs, that it finds and names, that it changes nothing.

The decoder and the CNN are the samples' (``samples/GA34x``); float16 copies of them show the
tolerance holds in half precision. The probe's cost is counted in passes here (a count, not
a timing: benchmarks/ measures the time).
"""

from __future__ import annotations

import argparse
import importlib.util
from types import ModuleType

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from sample_audits import SAMPLES

import graphaudit
from graphaudit.capture.dependency.probe import probe_dependencies
from graphaudit.errors import ArgumentError
from graphaudit.evidence import EvidenceSet
from graphaudit.evidence.dependency import DependencyProbe

IDS = ("GA340", "GA341", "GA342", "GA343")


def sample(check_id: str, which: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"dependency_{check_id}_{which}", SAMPLES / check_id / f"{which}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def found(report: graphaudit.Report) -> list[tuple[str, str]]:
    return [(f.check_id, f.subject) for f in report.findings if f.check_id in IDS]


def probe(net: nn.Cell, inputs: tuple, **options) -> DependencyProbe:
    from graphaudit.runner.request import build_request

    return EvidenceSet(build_request(net, inputs=inputs, options=options)).need(DependencyProbe)


@pytest.mark.parametrize("check_id", ["GA341", "GA342", "GA343"])
def test_float16_decoder_keeps_the_findings_and_the_silence(check_id):
    """In float16 the bound is 8 float16 ulps (7.8e-3): the sound decoder still moves by exactly 0."""
    for which, expected in (("bad", True), ("good", False)):
        kwargs = sample(check_id, which).build()
        net = kwargs.pop("net").to_float(ms.float16)
        result = probe(net, kwargs.pop("inputs"), **kwargs).result
        kind = {"GA341": "future", "GA342": "positions", "GA343": "padding"}[check_id]
        assert result.results[kind].found is expected, (which, result.results[kind])
        assert result.results[kind].tolerance == pytest.approx(8 * 2.0**-10)
        assert not result.results["batch"].found


def test_a_sound_model_costs_two_passes_and_moves_by_exactly_zero():
    kwargs = sample("GA341", "good").build()
    result = probe(kwargs.pop("net"), kwargs.pop("inputs"), **kwargs).result
    assert result.passes == 2 and result.noise is None  # the baseline and one combined variant
    assert all(result.results[k].change == 0.0 for k in ("batch", "future", "padding"))
    assert result.results["positions"].change > 0.01 and not result.results["positions"].found
    assert result.padded_by_probe and result.pads == (0, 1, 2, 3)


def test_a_finding_measures_the_noise_of_the_same_pass_first():
    kwargs = sample("GA341", "bad").build()
    result = probe(kwargs.pop("net"), kwargs.pop("inputs"), **kwargs).result
    assert result.noise == 0.0  # measured: the baseline run again
    future = result.results["future"]
    assert future.found and future.change > 1000 * future.tolerance and future.entry == "blocks.0.attn"


class Pooled(nn.Cell):
    """Normalises over the batch in inference too: every sample's output depends on the others."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.out = nn.Dense(3, 2)

    def construct(self, x):
        h = self.fc(x)
        return self.out(h - h.mean(axis=0, keep_dims=True))


class _Mixer(nn.Cell):
    """A stem, then a body that normalises over the batch (the samples mix there)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 4)
        self.body = Pooled()

    def construct(self, x):
        return self.body(self.stem(x))


def test_the_entry_is_the_cell_whose_output_mixes_while_its_inputs_do_not():
    report = graphaudit.audit(
        _Mixer(), inputs=Tensor(np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))
    )
    assert found(report) == [("GA340", "body")]


class WithDropoutAndBatchNorm(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(p=0.5)
        self.fc = nn.Dense(4 * 6 * 6, 2)

    def construct(self, x):
        h = self.drop(self.bn(self.conv(x)))
        return self.fc(h.reshape(-1, h.shape[0]).T)  # the samples mix


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
def test_the_probe_changes_nothing(mode):
    net = WithDropoutAndBatchNorm()
    net.set_train(True)
    x = Tensor(np.random.default_rng(1).normal(size=(2, 3, 6, 6)).astype(np.float32))
    ms.set_seed(3)
    values = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    flags = {name: cell.training for name, cell in net.cells_and_names()}
    attributes = {name: set(vars(cell)) for name, cell in net.cells_and_names()}
    rng, np_rng = ms.get_rng_state().asnumpy().copy(), np.random.get_state()[1].copy()
    previous = ms.get_context("mode")
    ms.set_context(mode=mode)
    try:
        report = graphaudit.audit(net, inputs=x)
        assert ms.get_context("mode") == mode
    finally:
        ms.set_context(mode=previous)
    assert found(report) == [("GA340", "(root)")]
    assert {p.name: p.asnumpy().tobytes() for p in net.get_parameters()} == {
        k: v.tobytes() for k, v in values.items()
    }
    assert {name: cell.training for name, cell in net.cells_and_names()} == flags
    assert {name: set(vars(cell)) for name, cell in net.cells_and_names()} == attributes
    assert all(not cell._forward_hook for _, cell in net.cells_and_names())
    assert (ms.get_rng_state().asnumpy() == rng).all() and (np.random.get_state()[1] == np_rng).all()


def test_a_pass_that_fails_half_way_is_not_run_and_puts_everything_back():
    class FailsLater(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Dense(3, 2)
            self.bn = nn.BatchNorm1d(2)
            self.calls = 0

        def construct(self, x):
            self.calls += 1
            if self.calls > 2:  # the traced pass and the probe's baseline run; the variant fails
                raise RuntimeError("third call")
            return self.bn(self.fc(x))

    net = FailsLater()
    net.set_train(True)
    before = {p.name: p.asnumpy().tobytes() for p in net.get_parameters()}
    report = graphaudit.audit(net, inputs=np.ones((2, 3), np.float32))
    assert "GA340" not in report.checks_run
    assert "a probe pass raised RuntimeError: third call" in str(report.skipped["GA340"])
    assert {p.name: p.asnumpy().tobytes() for p in net.get_parameters()} == before
    assert net.training and net.bn.training and not net._forward_hook


def test_a_batch_of_one_says_why_the_checks_did_not_run():
    report = graphaudit.audit(Pooled(), inputs=np.ones((1, 4), np.float32))
    assert "the batch holds 1 sample: the probe needs 2 or more" in str(report.skipped["GA340"])


def test_the_sequence_and_padding_probes_run_only_when_asked_or_recognised():
    kwargs = sample("GA341", "bad").build()
    net, inputs = kwargs["net"], kwargs["inputs"]
    plain = graphaudit.audit(net, inputs=inputs)
    assert "GA340" in plain.checks_run and "GA341" not in plain.checks_run
    assert "pass causal=True" in str(plain.skipped["GA341"])
    assert 'pass mask_input="attention_mask"' in str(plain.skipped["GA343"])
    declared = graphaudit.audit(net, inputs=inputs, spec=graphaudit.Spec(causal=True))
    assert found(declared) == [("GA341", "blocks.0.attn")]

    class TinyForCausalLM(type(net)):  # a name of the HF convention: recognised as a causal LM
        pass

    recognised = TinyForCausalLM()
    assert probe(recognised, inputs).causal == "it holds a TinyForCausalLM"
    assert probe(recognised, inputs, causal=False).causal is None


def test_a_mask_keyword_that_is_no_argument_gets_a_graphaudit_error():
    kwargs = sample("GA343", "good").build()
    with pytest.raises(ArgumentError, match=r"mask_input='attn_mask' names no argument of Encoder.construct"):
        graphaudit.audit(kwargs["net"], inputs=kwargs["inputs"], mask_input="attn_mask")
    with pytest.raises(ArgumentError, match="inputs= gives 1 value"):
        graphaudit.audit(kwargs["net"], inputs=kwargs["inputs"][0], mask_input="attention_mask")


def test_a_short_sequence_runs_the_batch_probe_and_says_why_not_the_others():
    kwargs = sample("GA341", "good").build()
    ids = kwargs["inputs"][0][:, :4]
    report = graphaudit.audit(kwargs["net"], inputs=ids, causal=True)
    assert "GA340" in report.checks_run
    assert "the sequence is 4 positions long: the probes need 6 or more" in str(report.skipped["GA341"])


def test_a_pairwise_output_is_not_read_as_mixing():
    """A (B, B) similarity matrix pairs the samples on purpose (contrastive models)."""

    class Similarity(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Dense(4, 3)

        def construct(self, x):
            h = self.fc(x)
            return h @ h.T

    result = probe_dependencies(
        net := Similarity(),
        (Tensor((np.ones((3, 4)) * np.arange(3)[:, None]).astype(np.float32)),),
        {"": net, "fc": net.fc},
    )
    assert not isinstance(result, str) and not result.results["batch"].found


def test_the_command_line_has_the_flags():
    from graphaudit.cli.audit import add_evidence_options, evidence_keywords

    parser = argparse.ArgumentParser()
    options = add_evidence_options(parser)
    args = parser.parse_args(["--causal", "--mask-input", "attention_mask"])
    keywords = evidence_keywords(args, options)
    assert keywords["causal"] is True and keywords["mask_input"] == "attention_mask"


def test_a_time_major_recurrent_network_is_not_probed_and_says_why():
    """Axis 0 of a (time, batch, features) input is time: a bidirectional LSTM mixes it legitimately."""

    class Tagger(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = nn.LSTM(4, 4, bidirectional=True)
            self.out = nn.Dense(8, 2)

        def construct(self, x):
            return self.out(self.rnn(x)[0])

    report = graphaudit.audit(Tagger(), inputs=np.ones((5, 3, 4), np.float32))
    assert "GA340" not in report.checks_run
    assert "'rnn' is a time-major recurrent layer" in str(report.skipped["GA340"])


def test_a_batchnorm_kept_in_a_plain_list_mixes_samples_in_inference_and_is_put_back():
    """set_train(False) does not reach an unregistered BatchNorm: in inference it still uses batch statistics."""

    class Hidden(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Dense(4, 4)
            self.norms = [nn.BatchNorm1d(4)]  # not registered (GA303)

        def construct(self, x):
            return self.norms[0](self.fc(x))

    net = Hidden()
    net.set_train(True)
    net.norms[0].set_train(True)
    moving = net.norms[0].moving_mean.asnumpy().copy()
    report = graphaudit.audit(net, inputs=np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))
    assert found(report) == [("GA340", "(root)")]
    assert (net.norms[0].moving_mean.asnumpy() == moving).all() and net.norms[0].training and net.training


def _with_loss(net: nn.Cell) -> tuple[nn.Cell, tuple[Tensor, Tensor]]:
    rng = np.random.default_rng(0)
    x = Tensor(rng.normal(size=(3, 4)).astype(np.float32))
    return nn.WithLossCell(net, nn.CrossEntropyLoss()), (x, Tensor(np.array([0, 1, 0], np.int32)))


def test_the_clean_path_keeps_no_cell_output_but_the_judged_one():
    """Every cell's tensors kept alive would be the whole pass's activations, twice (gigabytes on a big ViT)."""
    from graphaudit.capture.dependency.passes import Runner, hooked
    from graphaudit.capture.dependency.plan import Plan

    class Sound(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.stem, self.head = nn.Dense(4, 4), nn.SequentialCell([nn.ReLU(), nn.Dense(4, 2)])

        def construct(self, x):
            return self.head(self.stem(x))

    net, inputs = _with_loss(Sound())  # the loss is no tensor per sample: the backbone is judged
    arrays = [x.asnumpy() for x in inputs]
    cells = dict(net.cells_and_names())
    with hooked(cells) as recorder:
        runner = Runner(net, inputs, recorder, Plan.of(arrays, sequence=False))
        _, first = runner.run(arrays, "candidate")
        _, second = runner.run(arrays, "judged")
        _, whole = runner.run(arrays)
    assert runner.judged_path == "_backbone"
    for calls in (first, second):
        assert [c.path for c in calls if c.outputs] == ["_backbone"] and not any(c.inputs for c in calls)
    assert all(c.outputs for c in whole) and [c.path for c in whole] == [c.path for c in first]
    result = probe_dependencies(net, inputs, cells)
    assert result.passes == 2 and not result.results["batch"].found


def test_a_wrapped_network_that_mixes_samples_is_found_where_they_mix():
    net, inputs = _with_loss(_Mixer())
    result = probe_dependencies(net, inputs, dict(net.cells_and_names()))
    batch = result.results["batch"]
    assert batch.found and batch.judged == "_backbone" and batch.entry == "_backbone.body"
    assert result.passes == 5  # baseline, combined, the baseline recorded whole, the batch variant, the noise


def test_when_the_samples_mix_only_ga340_speaks_for_the_sequence_checks():
    """GA341-GA343 read what moves inside one sample: once samples mix (GA340), what moved cannot be
    told apart, and each declares it defers to GA340 (GA342 did not: it reported on top of GA340)."""
    module = sample("GA342", "bad")

    class Mixing(module.Decoder):
        def construct(self, ids, attention_mask=None, position_ids=None):
            x = self.tokens(ids) + self.positions(ops.zeros_like(ids))  # no position (GA342's mistake)
            for block in self.blocks:
                x = block(x, attention_mask)
            x = x + x.mean(axis=0, keep_dims=True)  # and every sample sees the batch's mean
            return self.head(self.norm(x))

    kwargs = module.build()
    kwargs["net"] = Mixing()
    report = graphaudit.audit(kwargs.pop("net"), **kwargs)
    assert found(report) == [("GA340", "(root)")], report  # GA342 ('blocks.0.attn') was reported too
    for check_id in ("GA341", "GA342", "GA343"):
        assert "GA340" in dict(graphaudit.checks.find_check(check_id).defers_to)

"""Every bad input tried on graphaudit, and what it gets: one table, tested and documented.

``CASES`` is the single source of ``docs/bad-inputs.md``: each row is run here, and the table
in the doc is generated from the same rows (``test_doc_table_is_current``; regenerate it with
``PYTHONPATH=. python tests/test_bad_inputs.py``). A row expects either a
``graphaudit.GraphAuditError`` subclass whose message starts with a given text and says what to
do, a documented finding, or a clean run (inputs that look bad but are fine).

Complements tests/test_isolation_and_errors.py and tests/test_audit.py, which check the
``to_networkx`` side of some of these in more detail (chained causes, failing cell path).
"""

from __future__ import annotations

import pickle
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn
from nets import Raises, tensor

import graphaudit
import graphaudit.errors
from graphaudit import Spec
from graphaudit.testing import assert_clean, assert_matches_spec

SAMPLES_DUMP = Path(__file__).resolve().parent.parent / "samples" / "GA640" / "original"


def _ga640_port() -> nn.Cell:
    """The faithful port of GA640's sample, whose original was dumped on a batch of its own."""
    from sample_audits import load

    return load(SAMPLES_DUMP.parent / "good.py").build()["net"]


DOC = Path(__file__).resolve().parent.parent / "docs" / "bad-inputs.md"
BEGIN, END = "<!-- table:begin (generated from tests/test_bad_inputs.py) -->", "<!-- table:end -->"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


class PyNativeOnly(nn.Cell):
    """``try``/``except`` in construct: graph mode refuses to compile it, PyNative runs it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        try:
            y = self.fc(x)
        except ValueError:
            y = x
        return y


def _x() -> Tensor:
    return tensor(2, 4)


def _spec_file(tmp: Path, text: str | bytes) -> Path:
    path = tmp / "design.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class Case:
    """One bad input: *call(tmp_path)* and what it must give.

    *error* is a GraphAuditError subclass (then *message* is the start of its text, with
    ``{tmp}`` standing for the temporary folder, and *hint* a phrase saying what to do), or
    ``None``: then *finding* is ``"GA202"``-style (a check ID that must be among the findings,
    with *message* the start of its message), or ``""`` for a run with no error finding.
    """

    id: str
    input: str  # for the doc table, Markdown
    call: Callable[[Path], Any]
    error: type[Exception] | None
    message: str
    hint: str = ""
    finding: str = ""
    note: str = ""


NA = graphaudit.NotACellError
IE = graphaudit.InputError
FE = graphaudit.ForwardError
SE = graphaudit.SpecError
GE = graphaudit.GraphAuditError
AT = graphaudit.errors.ArgumentTypeError
AE = graphaudit.errors.ArgumentError


def _lazy() -> nn.Cell:
    with nn.utils.no_init_parameters():
        return Net()


def test_a_network_of_uninitialised_parameters_is_left_uninitialised() -> None:
    """Run by the audit, the first forward pass made their values (garbage, ~1e-45, before stop 33)."""
    net = _lazy()
    with pytest.raises(graphaudit.InputError, match="init_parameters_data"):
        graphaudit.audit(net, inputs=_x())
    assert all(p.has_init for p in net.get_parameters())
    assert graphaudit.audit(net).ok  # the structure alone is audited as before


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


MSPROBE = Path(__file__).resolve().parent / "references" / "planted" / "msprobe"
KEYWORDS_DUMP = MSPROBE.parent / "keywords"


def _msprobe(tmp: Path, name: str = "mlp") -> Path:
    """A copy of msprobe's real dump of the planted *name* (one rank's folder), to break."""
    import shutil

    (rank,) = (MSPROBE / name).glob("step0/*/dump.json")
    return Path(shutil.copytree(rank.parent, tmp / "dump"))


def _msprobe_broken(tmp: Path, how: str) -> str:
    folder = _msprobe(tmp)
    data = folder / "dump_tensor_data"
    if how == "json":
        (folder / "dump.json").write_text('{"task": "tensor", "data": {', encoding="utf-8")
    elif how == "missing":
        (data / "Module.fc1.Linear.forward.0.parameters.weight.pt").unlink()
    elif how == "code":  # a .pt whose pickle asks for os.system, as torch.save's zip lays it out
        import zipfile

        with zipfile.ZipFile(data / "Module.fc1.Linear.forward.0.parameters.weight.pt", "w") as z:
            z.writestr("archive/data.pkl", b"cos\nsystem\n(S'echo owned'\ntR.")
            z.writestr("archive/byteorder", b"little")
    return str(folder)


def _msprobe_without_weights(tmp: Path) -> str:
    folder = _msprobe(tmp, "cnn")
    (folder / "original.safetensors").unlink()
    return str(folder)


def _msprobe_two_ranks(tmp: Path) -> str:
    import shutil

    (rank,) = (MSPROBE / "mlp").glob("step0/*/dump.json")
    for step in ("step0", "step1"):
        shutil.copytree(rank.parent, tmp / "out" / step / "rank0")
    return str(tmp / "out")


def _original() -> dict[str, np.ndarray]:
    """The state dict of the PyTorch model Net was ported from: ``backbone`` and ``fc`` Linears."""
    return {
        "backbone.weight": np.zeros((8, 4), np.float32),
        "backbone.bias": np.zeros(8, np.float32),
        "fc.weight": np.zeros((2, 8), np.float32),
        "fc.bias": np.zeros(2, np.float32),
    }


def _pipeline() -> Any:
    import mindspore.dataset as ds

    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    return ds.NumpySlicesDataset({"x": x, "label": np.arange(8) % 2}, shuffle=False).batch(4)


CASES: list[Case] = [
    # ---------------------------------------------------------------- not a network
    Case(
        "list",
        "`audit([1, 2])`",
        lambda t: graphaudit.audit([1, 2]),
        NA,
        "audit() expects a mindspore.nn.Cell as `net`, got list",
        "build your network",
    ),
    Case(
        "list-of-cells",
        "`audit([nn.Dense(2, 2)])`",
        lambda t: graphaudit.audit([nn.Dense(2, 2)]),
        NA,
        "audit() expects a mindspore.nn.Cell as `net`, got list",
        "nn.SequentialCell(cells)",
    ),
    Case(
        "str",
        '`audit("net")`',
        lambda t: graphaudit.audit("net"),
        NA,
        "audit() expects a mindspore.nn.Cell as `net`, got str",
        "build your network",
    ),
    Case(
        "none",
        "`audit(None)`",
        lambda t: graphaudit.audit(None),
        NA,
        "audit() expects a mindspore.nn.Cell as `net`, got NoneType",
        "build your network",
    ),
    Case(
        "class",
        "`audit(Net)` (the class)",
        lambda t: graphaudit.audit(Net),
        NA,
        "audit() expects a mindspore.nn.Cell as `net`, got type",
        "pass an instance, e.g. Net(...)",
    ),
    Case(
        "bound-method",
        "`audit(net.construct)`",
        lambda t: graphaudit.audit(Net().construct),
        NA,
        "audit() expects a mindspore.nn.Cell as `net`, got method",
        "not its method",
    ),
    Case(
        "model-to-networkx",
        "`to_networkx(Model(net))`",
        lambda t: graphaudit.to_networkx(ms.train.Model(Net())),
        NA,
        "to_networkx() expects a mindspore.nn.Cell as `net`, got Model",
        "model.predict_network",
    ),
    Case(
        "model-audit",
        "`audit(Model(net))`",
        lambda t: graphaudit.audit(ms.train.Model(Net())),
        None,
        "",
        note="not an error: audit() unwraps a Model (and its loss and optimizer)",
    ),
    # ---------------------------------------------------------------- optimizer
    Case(
        "optimizer-str",
        '`audit(net, "sgd")`',
        lambda t: graphaudit.audit(Net(), "sgd"),
        GE,
        "audit() expects a mindspore.nn.Optimizer (or None) as `optimizer`, got str",
        "or None",
    ),
    Case(
        "optimizer-params",
        "`audit(net, net.trainable_params())`",
        lambda t: graphaudit.audit(Net(), Net().trainable_params()),
        GE,
        "audit() expects a mindspore.nn.Optimizer (or None) as `optimizer`, got list",
        "Pass the optimizer built from these parameters",
    ),
    Case(
        "optimizer-class",
        "`audit(net, nn.Momentum)` (the class)",
        lambda t: graphaudit.audit(Net(), nn.Momentum),
        GE,
        "audit() expects a mindspore.nn.Optimizer (or None) as `optimizer`, got type",
        "Pass an instance",
    ),
    Case(
        "optimizer-none",
        "`audit(net, None)`",
        lambda t: graphaudit.audit(Net(), None),
        None,
        "",
        note="not an error: the optimizer checks (GA2xx) have nothing to compare and stay silent",
    ),
    Case(
        "optimizer-other-net",
        "`audit(net, nn.SGD(Net().trainable_params()))` (another instance)",
        lambda t: graphaudit.audit(Net(), nn.SGD(Net().trainable_params())),
        None,
        "the optimizer updates 4 Parameters (backbone.weight, backbone.bias, head.weight and head.bias) "
        "whose names the network's own parameters have, but they are other Parameter objects",
        finding="GA202",
        note="a finding, not an exception: one GA202 naming every optimizer parameter; GA201 (the network's "
        "parameters of the same names are not in the optimizer) is the same cause and folds into it",
    ),
    Case(
        "empty-optimizer",
        "`nn.SGD([])` for a network without parameters",
        lambda t: nn.SGD([]),
        ValueError,
        "For 'Optimizer', the argument parameters must not be empty",
        note="MindSpore refuses it before graphaudit is called: pass `optimizer=None`",
    ),
    Case(
        "loss-not-cell",
        '`audit(net, loss_fn="mse")`',
        lambda t: graphaudit.audit(Net(), loss_fn="mse"),
        GE,
        "audit() expects a loss Cell (e.g. nn.BCEWithLogitsLoss()) as `loss_fn`, got str",
        "Wrap a loss function",
    ),
    Case(
        "mode",
        '`audit(net, mode="training")`',
        lambda t: graphaudit.audit(Net(), mode="training"),
        GE,
        'audit() expects mode="train" or mode="eval", got \'training\'',
        'mode="train"',
    ),
    # ---------------------------------------------------------------- inputs
    Case(
        "uninitialised",
        "`inputs` for a network built under `no_init_parameters()`",
        lambda t: graphaudit.audit(_lazy(), inputs=tensor(2, 4)),
        IE,
        "4 parameters of Net (backbone.weight, backbone.bias, head.weight and 1 more) are not initialised yet",
        "net.init_parameters_data()",
        note="the parameters stay uninitialised: a forward pass would have made their values inside the audit",
    ),
    Case(
        "shape",
        "`inputs` of shape (2, 5) for `Dense(4, 8)`",
        lambda t: graphaudit.audit(Net(), inputs=tensor(2, 5)),
        FE,
        "the forward pass of Net raised ValueError in the cell at 'backbone'",
        "Check that `inputs` match",
    ),
    Case(
        "dtype-int",
        "`inputs` of dtype int32",
        lambda t: graphaudit.audit(Net(), inputs=Tensor(np.ones((2, 4), np.int32))),
        FE,
        "the forward pass of Net raised TypeError in the cell at 'backbone'",
        "Check that `inputs` match",
    ),
    Case(
        "dtype-float64",
        "`inputs` of dtype float64",
        lambda t: graphaudit.audit(Net(), inputs=Tensor(np.ones((2, 4), np.float64))),
        FE,
        "the forward pass of Net raised TypeError in the cell at 'backbone'",
        "Check that `inputs` match",
    ),
    Case(
        "too-many",
        "`inputs=(x, x)` for `construct(self, x)`",
        lambda t: graphaudit.audit(Net(), inputs=(_x(), _x())),
        IE,
        "Net.construct(x) cannot take the 2 input(s) given",
        "Pass one value per construct() parameter",
    ),
    Case(
        "none-given",
        "`inputs=()`",
        lambda t: graphaudit.audit(Net(), inputs=()),
        IE,
        "Net.construct(x) cannot take the 0 input(s) given",
        "Pass one value per construct() parameter",
    ),
    Case(
        "third-positional",
        "`audit(net, optimizer, x)` (inputs given positionally)",
        lambda t: graphaudit.audit(Net(), None, _x()),
        AT,
        "audit() takes 2 positional arguments (net, optimizer) but 3 were given",
        "e.g. audit(net, optimizer, inputs=..., label=...)",
    ),
    Case(
        "misspelt-keyword",
        "`audit_dataset(ds, num_class=10)`",
        lambda t: graphaudit.audit_dataset(_pipeline(), num_class=10),
        AT,
        "audit_dataset() got an unexpected keyword argument 'num_class'",
        "did you mean 'num_classes'?",
    ),
    Case(
        "spec-positional",
        '`Spec(["backbone.*"])` (fields given positionally)',
        lambda t: Spec(["backbone.*"]),
        AT,
        "Spec() takes its fields by keyword, got 1 positional argument(s)",
        "write e.g. Spec(frozen=[...])",
    ),
    Case(
        "spec-field-type",
        '`Spec(frozen="backbone.*")` (a string, not a list)',
        lambda t: Spec(frozen="backbone.*"),
        SE,
        "<spec>: parameters.frozen must be a list of parameter names or globs, got a string",
        'write frozen = ["backbone.*"]',
    ),
    Case(
        "dict",
        '`inputs={"x": x}`',
        lambda t: graphaudit.audit(Net(), inputs={"x": _x()}),
        IE,
        "inputs is a dict; graphaudit passes inputs positionally",
        "Pass a tuple",
    ),
    Case(
        "object",
        "`inputs=object()`",
        lambda t: graphaudit.audit(Net(), inputs=object()),
        IE,
        "inputs[0] is a builtins.object",
        "Convert it, e.g. mindspore.Tensor(numpy_array)",
    ),
    Case(
        "str-input",
        '`inputs="abc"`',
        lambda t: graphaudit.audit(Net(), inputs="abc"),
        FE,
        "the forward pass of Net raised TypeError in the cell at 'backbone'",
        "Check that `inputs` match",
        note="a str is a valid Python argument: it reaches construct, which fails",
    ),
    Case(
        "label-missing",
        "`audit(nn.WithLossCell(net, loss), inputs=x)` (no label)",
        lambda t: graphaudit.audit(nn.WithLossCell(Net(), nn.MSELoss()), inputs=_x()),
        IE,
        "the network given takes a label",
        "inputs=(x, y)",
    ),
    # ---------------------------------------------------------------- networks
    Case(
        "construct-raises",
        "a `construct` that raises",
        lambda t: graphaudit.audit(Raises(), inputs=tensor(1, 4)),
        FE,
        "the forward pass of Raises raised RuntimeError in Raises.construct",
        "The original error is chained",
    ),
    Case(
        "pynative-only",
        "a network graph mode cannot compile (`try`/`except` in construct), context in GRAPH_MODE",
        lambda t: _in_graph_mode(lambda: graphaudit.audit(PyNativeOnly(), inputs=tensor(1, 4))),
        None,
        "",
        note="captured fine: the pass runs in PyNative, and the context is put back to GRAPH_MODE",
    ),
    Case(
        "cell-without-construct",
        "`nn.Cell()` (no construct), no inputs",
        lambda t: graphaudit.audit(nn.Cell()),
        None,
        "",
        note="structure only: one cell node, no finding",
    ),
    Case(
        "cell-without-construct-traced",
        "`nn.Cell()` with inputs",
        lambda t: graphaudit.audit(nn.Cell(), inputs=_x()),
        FE,
        "the forward pass of Cell raised AttributeError in Cell.construct",
        "Check that `inputs` match",
    ),
    Case(
        "empty-sequential",
        "`nn.SequentialCell([])` with inputs",
        lambda t: graphaudit.audit(nn.SequentialCell([]), inputs=_x()),
        None,
        "",
        note="passes the input through; no finding",
    ),
    Case(
        "no-parameters",
        "`nn.ReLU()` with inputs",
        lambda t: graphaudit.audit(nn.ReLU(), inputs=_x()),
        None,
        "",
        note="no parameter: nothing to report",
    ),
    # ---------------------------------------------------------------- spec files
    Case(
        "spec-syntax",
        "a spec file with a TOML syntax error",
        lambda t: Spec.load(_spec_file(t, "[parameters\nfrozen = [\n")),
        SE,
        "{tmp}/design.toml:1: TOML syntax error at column 12",
        "Expected ']'",
    ),
    Case(
        "spec-unknown-key",
        "a spec file with an unknown key (`frozn`)",
        lambda t: Spec.load(_spec_file(t, "[parameters]\nfrozn = []\n")),
        SE,
        "{tmp}/design.toml:2: unknown key 'frozn' in [parameters]",
        "did you mean 'frozen'?",
    ),
    Case(
        "spec-unknown-section",
        "a spec file with an unknown section (`[parameter]`)",
        lambda t: Spec.load(_spec_file(t, "[parameter]\nfrozen = []\n")),
        SE,
        "{tmp}/design.toml:1: unknown key 'parameter' at the top level",
        "did you mean 'parameters'?",
    ),
    Case(
        "spec-wrong-type",
        'a spec file with `frozen = "backbone.*"` (not a list)',
        lambda t: Spec.load(_spec_file(t, '[parameters]\nfrozen = "backbone.*"\n')),
        SE,
        "{tmp}/design.toml:2: parameters.frozen must be a list of parameter names or globs, got a string",
        'write frozen = ["backbone.*"]',
    ),
    Case(
        "spec-exhaustive-type",
        'a spec file with `exhaustive = "yes"`',
        lambda t: Spec.load(_spec_file(t, '[connections]\nexhaustive = "yes"\n')),
        SE,
        "{tmp}/design.toml:2: connections.exhaustive must be true or false, got a string",
        "true or false",
    ),
    Case(
        "spec-pair",
        'a spec file with `expected = [["a"]]`',
        lambda t: Spec.load(_spec_file(t, '[connections]\nexpected = [["a"]]\n')),
        SE,
        "{tmp}/design.toml:2: connections.expected[0] must be a pair [source, target] of cell paths",
        "[source, target]",
    ),
    Case(
        "spec-negative-calls",
        'a spec file with `"head" = -1` in `[calls]`',
        lambda t: Spec.load(_spec_file(t, '[calls]\n"head" = -1\n')),
        SE,
        "{tmp}/design.toml:2: the call count of 'head' must be a non-negative integer",
        "non-negative integer",
    ),
    Case(
        "spec-unquoted-path",
        "a spec file with `layers.0 = 1` (unquoted) in `[calls]`",
        lambda t: Spec.load(_spec_file(t, "[calls]\nlayers.0 = 1\n")),
        SE,
        "{tmp}/design.toml:2: calls.layers is a table",
        'must be quoted, e.g. "layers.0" = 1',
    ),
    Case(
        "spec-bad-glob",
        'a spec file with the glob `"layers.[0.weight"`',
        lambda t: Spec.load(_spec_file(t, '[parameters]\nfrozen = ["layers.[0.weight"]\n')),
        SE,
        "{tmp}/design.toml:2: the pattern 'layers.[0.weight' in parameters.frozen has an unbalanced '['",
        "write '[[]' to match a literal '['",
    ),
    Case(
        "spec-missing-file",
        "`Spec.load` of a file that does not exist",
        lambda t: Spec.load(t / "missing.toml"),
        SE,
        "{tmp}/missing.toml: cannot read the spec file",
        "No such file",
    ),
    Case(
        "spec-not-utf8",
        "`Spec.load` of a file that is not UTF-8",
        lambda t: Spec.load(_spec_file(t, b"\xff\xfe")),
        SE,
        "{tmp}/design.toml: cannot read the spec file",
        "utf-8",
    ),
    Case(
        "spec-dict",
        '`audit(net, spec={"frozen": []})`',
        lambda t: graphaudit.audit(Net(), spec={"frozen": []}),
        GE,
        "audit() expects a graphaudit.Spec as `spec`, got dict",
        "Spec.load(path)",
    ),
    Case(
        "spec-needs-inputs",
        '`assert_matches_spec(net, Spec(calls={"head": 1}))` without inputs',
        lambda t: assert_matches_spec(Net(), Spec(calls={"head": 1})),
        GE,
        "the spec declares call counts, which need a traced forward pass",
        "pass inputs=...",
    ),
    Case(
        "from-net-depth",
        "`Spec.from_net(net, depth=0)`",
        lambda t: Spec.from_net(Net(), depth=0),
        SE,
        "<spec>: from_net() needs depth >= 1",
        "depth >= 1",
    ),
    # ---------------------------------------------------------------- paths and globs naming nothing
    Case(
        "missing-connection-path",
        '`Spec(expected_connections=[("backbon", "head")])` (misspelt path)',
        lambda t: graphaudit.audit(Net(), inputs=_x(), spec=Spec(expected_connections=[("backbon", "head")])),
        None,
        "Spec.expected_connections ('backbon', 'head') names 'backbon', which matches no cell path",
        finding="GA300",
        note="finding GA300 (error), naming the close matches: `Close matches: backbone.`",
    ),
    Case(
        "missing-connection-glob",
        '`Spec(expected_connections=[("layers.*", "head")])` (glob matching nothing)',
        lambda t: graphaudit.audit(
            Net(), inputs=_x(), spec=Spec(expected_connections=[("layers.*", "head")])
        ),
        None,
        "Spec.expected_connections ('layers.*', 'head') names 'layers.*', which matches no cell path",
        finding="GA300",
    ),
    Case(
        "forbidden-path",
        '`Spec(forbidden_connections=[("hed", "backbone")])`',
        lambda t: graphaudit.audit(
            Net(), inputs=_x(), spec=Spec(forbidden_connections=[("hed", "backbone")])
        ),
        None,
        "Spec.forbidden_connections ('hed', 'backbone') names 'hed'",
        finding="GA300",
    ),
    Case(
        "calls-path",
        '`Spec(calls={"hed": 1})`',
        lambda t: graphaudit.audit(Net(), inputs=_x(), spec=Spec(calls={"hed": 1})),
        None,
        "Spec.calls['hed'] names 'hed', which matches no cell path",
        finding="GA300",
    ),
    Case(
        "shared-cells-path",
        '`Spec(shared_cells=[["backbone", "hed"]])`',
        lambda t: graphaudit.audit(Net(), spec=Spec(shared_cells=[["backbone", "hed"]])),
        None,
        "the shared cell group ['backbone', 'hed'] names 'hed', which matches no cell path",
        finding="GA300",
    ),
    Case(
        "shared-parameters-name",
        '`Spec(shared_parameters=[["backbone.weight", "hed.weight"]])`',
        lambda t: graphaudit.audit(Net(), spec=Spec(shared_parameters=[["backbone.weight", "hed.weight"]])),
        None,
        "the shared parameter group ['backbone.weight', 'hed.weight'] names 'hed.weight', which matches no "
        "parameter of the network",
        finding="GA300",
    ),
    Case(
        "allow-bad-glob",
        '`assert_clean(net, allow=["GA201:[x"])`',
        lambda t: assert_clean(Net(), allow=["GA201:[x"]),
        GE,
        "allow='GA201:[x': the subject pattern '[x' has an unbalanced '['",
        "write '[[]'",
    ),
    Case(
        "allow-unknown-check",
        '`assert_clean(net, allow=["GA999"])`',
        lambda t: assert_clean(Net(), allow=["GA999"]),
        GE,
        "allow='GA999': there is no check 'GA999'",
        "did you mean",
    ),
    # ---------------------------------------------------------------- arguments of other entry points
    Case(
        "audit-dataset-none",
        "`audit_dataset(None)`",
        lambda t: graphaudit.audit_dataset(None),
        AT,
        "train_ds= expects a mindspore.dataset pipeline",
        "mindspore.dataset.Dataset",
    ),
    Case(
        "dataset-list",
        "`audit(net, dataset=[1, 2])`",
        lambda t: graphaudit.audit(Net(), dataset=[1, 2]),
        AT,
        "dataset= expects a mindspore.dataset pipeline",
        "ds.NumpySlicesDataset",
    ),
    Case(
        "spec-keyword-misspelt",
        '`Spec(frozn=["backbone.*"])`',
        lambda t: Spec(frozn=["backbone.*"]),
        AT,
        "Spec() got an unexpected keyword argument 'frozn'",
        "did you mean 'frozen'?",
    ),
    Case(
        "graph-mode-str",
        '`audit(net, inputs=x, graph_mode="no")`',
        lambda t: graphaudit.audit(Net(), inputs=_x(), graph_mode="no"),
        AT,
        "graph_mode= takes True or False, got 'no' (str)",
    ),
    Case(
        "strict-load-str",
        '`audit(net, checkpoint=..., strict_load="no")`',
        lambda t: graphaudit.audit(Net(), checkpoint={}, strict_load="no"),
        AT,
        "strict_load= takes True or False, got 'no' (str)",
    ),
    Case(
        "imbalanced-str",
        '`audit_dataset(train_ds, imbalanced="maybe")`',
        lambda t: graphaudit.audit_dataset(_pipeline(), imbalanced="maybe"),
        AT,
        "imbalanced= takes True or False, got 'maybe' (str)",
    ),
    # ---------------------------------------------------------------- the original of a port (reference=)
    Case(
        "reference-missing-file",
        '`audit(net, reference="original.safetensors")`, no such file',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=str(t / "original.safetensors")),
        AE,
        "reference= '{tmp}/original.safetensors' is not a file",
        "pass the original's weights",
    ),
    Case(
        "reference-int",
        "`audit(net, reference=3)`",
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=3),
        AT,
        "reference= takes the original's weights: a .safetensors, .pth/.bin or .onnx file, or a dict",
    ),
    Case(
        "reference-unknown-suffix",
        '`audit(net, reference="model.weights")`',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=str(_file(t / "model.weights", b"x"))),
        AE,
        "reference= '{tmp}/model.weights': graphaudit reads .safetensors, .pth/.pt/.bin",
        "name the file by what it holds",
    ),
    Case(
        "reference-legacy-pickle",
        '`audit(net, reference="old.pth")`, a plain pickle, not torch.save\'s zip',
        lambda t: graphaudit.audit(
            Net(), inputs=_x(), reference=str(_file(t / "old.pth", pickle.dumps({"w": [1.0]})))
        ),
        AE,
        "reference= '{tmp}/old.pth' is not a zip file as torch.save writes them",
    ),
    Case(
        "reference-dict-of-strings",
        '`audit(net, reference={"head.weight": "abc"})`',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference={"head.weight": "abc"}),
        AT,
        "reference= as a dict takes name -> array, got 'head.weight': str",
    ),
    Case(
        "reference-folder-no-dump",
        '`audit(net, reference="some_folder/")`, not a dump',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=str(t)),
        AE,
        "reference= '{tmp}' is a folder without the manifest.json graphaudit.reference.dump writes",
        "python -m graphaudit.reference",
    ),
    Case(
        "reference-dump-of-another-batch",
        '`audit(net, inputs=x, reference="dump/")`, the original dumped on another batch',
        lambda t: graphaudit.audit(_ga640_port(), inputs=tensor(2, 3, 8, 8), reference=str(SAMPLES_DUMP)),
        IE,
        "inputs= ([(2, 3, 8, 8)]) is not the batch the original was dumped on",
        "Leave inputs= out",
    ),
    Case(
        "reference-msprobe-json-unreadable",
        '`audit(net, reference="msprobe_dump/")`, its dump.json cut short',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=_msprobe_broken(t, "json")),
        AE,
        "reference= '{tmp}/dump/dump.json' cannot be read as msprobe's dump.json",
        "pass the folder PrecisionDebugger wrote",
    ),
    Case(
        "reference-msprobe-tensor-missing",
        '`audit(net, reference="msprobe_dump/")`, a file of dump_tensor_data/ missing',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=_msprobe_broken(t, "missing")),
        AE,
        "reference= '{tmp}/dump/dump.json' names 'Module.fc1.Linear.forward.0.parameters.weight.pt', which is not in",
        "copy the whole folder msprobe wrote",
    ),
    Case(
        "reference-msprobe-pt-runs-code",
        '`audit(net, reference="msprobe_dump/")`, a `.pt` whose pickle asks for `os.system`',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=_msprobe_broken(t, "code")),
        AE,
        "reference= '{tmp}/dump/dump_tensor_data/Module.fc1.Linear.forward.0.parameters.weight.pt' asks to run "
        "os.system",
        "never runs a pickle's code",
    ),
    Case(
        "reference-msprobe-several-steps",
        '`audit(net, reference="msprobe_out/")`, dumps of two steps',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=_msprobe_two_ranks(t)),
        AE,
        "reference= '{tmp}/out' holds several msprobe dumps (step0/rank0, step1/rank0)",
        "pass the folder of the one to compare",
    ),
    Case(
        "reference-msprobe-batchnorm-no-weights",
        '`audit(net, reference="msprobe_dump/")`, a CNN\'s dump without the state dict beside it',
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference=_msprobe_without_weights(t)),
        AE,
        "reference= '{tmp}/dump/dump.json': the original's weights are not all in this msprobe dump (its "
        "BatchNorm2d read running statistics msprobe does not record)",
        "Save its state dict beside dump.json",
    ),
    Case(
        "reference-map-typo",
        '`audit(net, reference=..., reference_map={"head.weigth": "fc.weight"})`',
        lambda t: graphaudit.audit(
            Net(), inputs=_x(), reference=_original(), reference_map={"head.weigth": "fc.weight"}
        ),
        AE,
        "reference_map= pairs 'head.weigth', which is not a parameter of the network",
        "did you mean 'head.weight'?",
    ),
    Case(
        "reference-map-original-typo",
        '`audit(net, reference=..., reference_map={"head.weight": "fc.wieght"})`',
        lambda t: graphaudit.audit(
            Net(), inputs=_x(), reference=_original(), reference_map={"head.weight": "fc.wieght"}
        ),
        AE,
        "reference_map= pairs 'head.weight' with 'fc.wieght', which the dict given does not have",
        "did you mean 'fc.weight'?",
    ),
    Case(
        "reference-map-toml-malformed",
        '`audit(net, reference=..., reference_map="pairs.toml")`, a value that is not a name',
        lambda t: graphaudit.audit(
            Net(),
            inputs=_x(),
            reference=_original(),
            reference_map=str(_file(t / "pairs.toml", b'[reference_map]\n"head.weight" = 3\n')),
        ),
        AT,
        "reference_map= '{tmp}/pairs.toml': [reference_map] pairs 'head.weight' with a int, not an original's weight name",
        '[reference_map] of "port.name" = "original.name"',
    ),
    Case(
        "reference-dump-keyword-not-taken",
        '`audit(net, reference="dump/")`, the original called with `attention_mask=`, the port\'s construct without it',
        lambda t: graphaudit.audit(Net(), reference=str(KEYWORDS_DUMP)),
        IE,
        "the original was run with 'input_ids', 'attention_mask' (by keyword, in keywords), which Net.construct(x) "
        "does not take",
        "name the port's argument as the original's",
    ),
    Case(
        "reference-map-alone",
        "`audit(net, reference_map={...})`, no `reference=`",
        lambda t: graphaudit.audit(Net(), inputs=_x(), reference_map={"head.weight": "fc.weight"}),
        AE,
        "reference_map= pairs the port's parameters with the original's, but no reference= was given",
        "pass the original's weights too",
    ),
    # ---------------------------------------------------------------- every public entry point's arguments
    Case(
        "label-str",
        '`audit(net, inputs=x, label="y", loss_fn=...)`',
        lambda t: graphaudit.audit(Net(), inputs=_x(), label="y", loss_fn=nn.MSELoss()),
        IE,
        "label is the str 'y'; a label holds the batch's target values",
        "label=Tensor(y)",
    ),
    Case(
        "render-path-none",
        "`render(net, None)`",
        lambda t: graphaudit.render(Net(), None),
        AT,
        "render() expects path= to be a file path (a str or pathlib.Path), got NoneType None",
    ),
    Case(
        "render-option-misspelt",
        '`render(net, "net.svg", dpeth=2)`',
        lambda t: graphaudit.render(Net(), t / "net.svg", dpeth=2),
        AT,
        "render() got an unknown drawing option 'dpeth'; did you mean 'depth'?",
    ),
    Case(
        "summarize-net",
        "`summarize(net)`",
        lambda t: graphaudit.summarize(Net()),
        AT,
        "summarize() expects a graph captured by graphaudit, got Net",
        "summarize(graphaudit.to_networkx(net))",
    ),
    Case(
        "watch-checks-int",
        "`Watch(checks=950)`",
        lambda t: graphaudit.Watch(checks=950),
        AT,
        "watch() expects checks= to be a list of watchpoint IDs or names, got int 950",
    ),
    Case(
        "watch-layers-str",
        '`Watch(layers="backbone")`',
        lambda t: graphaudit.Watch(layers="backbone"),
        AT,
        "watch() expects layers= to be a list of cell paths, got the str 'backbone'",
        "layers=['backbone']",
    ),
    Case(
        "watch-on-finding",
        '`Watch(on_finding="print")`',
        lambda t: graphaudit.Watch(on_finding="print"),
        AT,
        "watch() expects on_finding= to be a function taking a Finding (or None), got str 'print'",
    ),
    Case(
        "watch-out-int",
        "`Watch(out=3)`",
        lambda t: graphaudit.Watch(out=3),
        AT,
        "watch() expects out= to be a file path (a str or pathlib.Path), got int 3",
    ),
    Case(
        "watch-batch-size",
        "`watch(net, optimizer, batch_size=0)`",
        lambda t: graphaudit.watch(Net(), nn.SGD(Net().trainable_params()), batch_size=0).__enter__(),
        graphaudit.errors.ArgumentError,
        "watch() expects batch_size= to be at least 1, got 0",
    ),
    Case(
        "watch-baseline-missing",
        '`Watch(baseline="good_run/samples.jsonl")` (no such file)',
        lambda t: graphaudit.Watch(baseline=t / "good_run" / "samples.jsonl"),
        graphaudit.errors.BaselineError,
        "baseline= {tmp}/good_run/samples.jsonl does not exist",
        "Watch(out=folder)",
    ),
    Case(
        "watch-baseline-not-samples",
        "`Watch(baseline=...)`, a file that is not a watch's samples.jsonl (a pickle)",
        lambda t: graphaudit.Watch(baseline=_file(t / "samples.jsonl", b"cos\nsystem\n(S'echo owned'\ntR.")),
        graphaudit.errors.BaselineError,
        "baseline= {tmp}/samples.jsonl is not a graphaudit watch's samples.jsonl: line 1 is not JSON",
        "Watch(out=folder)",
    ),
    Case(
        "watch-baseline-other-network",
        "`watch(net, optimizer, baseline=...)`, the samples of a network with other parameters",
        lambda t: graphaudit.watch(
            Net(),
            nn.SGD(Net().trainable_params()),
            baseline=_file(
                t / "samples.jsonl",
                b'{"kind": "run", "parameters": ["fc9.weight"]}\n{"kind": "step", "step": 1, "loss": 1.0}',
            ),
        ).__enter__(),
        graphaudit.errors.BaselineError,
        "baseline= {tmp}/samples.jsonl was recorded for another network: 1 of its parameters are not in this "
        "network (fc9.weight)",
        "a run of this same network",
    ),
    Case(
        "watch-baseline-int",
        "`Watch(baseline=3)`",
        lambda t: graphaudit.Watch(baseline=3),
        AT,
        "baseline= takes the path of a watch's samples.jsonl (or its out= folder), or a watch's .record, got int",
    ),
    Case(
        "callback-keyword-misspelt",
        "`AuditCallback(spce=spec)`",
        lambda t: graphaudit.AuditCallback(spce=Spec()),
        AT,
        "AuditCallback() got an unexpected keyword argument 'spce'; did you mean 'spec'?",
    ),
    Case(
        "callback-inputs",
        "`AuditCallback(inputs=x)`",
        lambda t: graphaudit.AuditCallback(inputs=_x()),
        AT,
        "AuditCallback() got inputs=, which it takes from Model.train itself",
        "leave it out",
    ),
    Case(
        "callback-probe-str",
        '`AuditCallback(probe="yes")`',
        lambda t: graphaudit.AuditCallback(probe="yes"),
        AT,
        "AuditCallback(probe=...) takes True, False or a number of steps >= 0, got 'yes'",
    ),
    Case(
        "spec-from-toml-bytes",
        '`Spec.from_toml(b"...")`',
        lambda t: Spec.from_toml(b"[calls]\n"),
        AT,
        "Spec.from_toml() expects the TOML text as a str, got bytes (decode it first",
        "Spec.load(path)",
    ),
    Case(
        "spec-load-none",
        "`Spec.load(None)`",
        lambda t: Spec.load(None),
        AT,
        "Spec.load() expects path= to be a file path (a str or pathlib.Path), got NoneType None",
    ),
    Case(
        "fingerprint-rank-str",
        '`fingerprint(net, rank="0")`',
        lambda t: _fingerprint(Net(), rank="0"),
        AT,
        "fingerprint() expects rank= to be a whole number >= 0, got str '0'",
    ),
    Case(
        "fingerprint-rank-too-big",
        "`fingerprint(net, rank=2, world_size=2)`",
        lambda t: _fingerprint(Net(), rank=2, world_size=2),
        graphaudit.errors.ArgumentError,
        "fingerprint() got rank=2 with world_size=2: ranks count from 0",
    ),
    Case(
        "compare-paths",
        '`compare(["rank0.json", "rank1.json"])`',
        lambda t: _compare(["rank0.json", "rank1.json"]),
        AT,
        "compare() expects Fingerprint objects (from fingerprint(net) or Fingerprint.load(path)), got a str",
    ),
    Case(
        "compare-empty",
        "`compare([])`",
        lambda t: _compare([]),
        graphaudit.errors.ArgumentError,
        "compare() got no fingerprint",
        "save one per rank",
    ),
    Case(
        "mask-input-names-nothing",
        '`audit(net, inputs=x, mask_input="mask")` (no such argument)',
        lambda t: graphaudit.audit(Net(), inputs=tensor(2, 4), mask_input="mask"),
        graphaudit.errors.ArgumentError,
        "mask_input='mask' names no argument of Net.construct (its arguments are x)",
        'mask_input="attention_mask"',
    ),
    Case(
        "causal-input-names-nothing",
        '`audit(net, inputs=x, causal_input="decoder_input_ids")` (no such argument)',
        lambda t: graphaudit.audit(Net(), inputs=tensor(2, 4), causal_input="decoder_input_ids"),
        graphaudit.errors.ArgumentError,
        "causal_input='decoder_input_ids' names no argument of Net.construct (its arguments are x)",
        'causal_input="decoder_input_ids"',
    ),
    Case(
        "assert-clean-allow-int",
        "`assert_clean(net, allow=101)`",
        lambda t: assert_clean(Net(), allow=101),
        AT,
        "allow= holds check IDs, check names or 'ID:subject-glob' strings, got int 101",
        "allow=['GA101']",
    ),
    Case(
        "assert-matches-spec-int",
        "`assert_matches_spec(net, 3)`",
        lambda t: assert_matches_spec(Net(), 3),
        AT,
        "Spec.load() expects path= to be a file path (a str or pathlib.Path), got int 3",
    ),
    Case(
        "snapshot-path-none",
        "`assert_matches_snapshot(net, None)`",
        lambda t: _snapshot(Net(), None),
        AT,
        "assert_matches_snapshot() expects path= to be a file path (a str or pathlib.Path), got NoneType None",
    ),
]


def _fingerprint(net: nn.Cell, **kwargs: Any) -> Any:
    from graphaudit.fingerprint import fingerprint

    return fingerprint(net, **kwargs)


def _compare(fingerprints: Any) -> Any:
    from graphaudit.fingerprint import compare

    return compare(fingerprints)


def _snapshot(net: nn.Cell, path: Any) -> Any:
    from graphaudit.testing import assert_matches_snapshot

    return assert_matches_snapshot(net, path)


def _in_graph_mode(fn: Callable[[], Any]) -> Any:
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        result = fn()
        assert ms.get_context("mode") == ms.GRAPH_MODE
        return result
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    message = case.message.replace("{tmp}", str(tmp_path))
    if case.error is not None:
        with pytest.raises(case.error) as info:
            case.call(tmp_path)
        text = str(info.value)
        assert text.startswith(message), text
        assert case.hint in text, text
        if issubclass(case.error, graphaudit.GraphAuditError):
            assert type(info.value).__module__.startswith("graphaudit"), type(info.value)
        return
    report = case.call(tmp_path)
    if case.finding:
        found = report.by_check(case.finding)
        assert found, str(report)
        assert any(f.message.startswith(message) for f in found), [f.message for f in found]
        assert all(f.fix for f in found)
    else:
        assert report.ok, str(report)


def test_pynative_only_network_really_fails_in_graph_mode() -> None:
    """The row `pynative-only` is meaningful: MindSpore itself cannot run it in graph mode."""
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(RuntimeError, match="Unsupported statement 'Try'"):
            PyNativeOnly()(tensor(1, 4))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_optimizer_of_another_instance_names_every_parameter() -> None:
    net, other = Net(), Net()
    report = graphaudit.audit(net, nn.SGD(other.trainable_params()))
    names = sorted(p.name for p in net.trainable_params())
    assert sorted(s for f in report.by_check("GA202") for s in f.subjects) == names
    # one cause, one finding: GA201 (the network's parameters of those names are left out) folds into it
    assert [f.check_id for f in report.findings if f.severity == "error"] == ["GA202"]
    assert report.by_check("GA201") == report.by_check("GA202")


def test_misspelt_path_finding_names_the_close_match() -> None:
    report = graphaudit.audit(Net(), inputs=_x(), spec=Spec(expected_connections=[("backbon", "head")]))
    (finding,) = report.by_check("GA300")
    assert finding.severity == "error" and finding.subject == "backbon"
    assert "Close matches: backbone." in finding.message


# ---------------------------------------------------------------------------- specs written in Python


def test_audit_rejects_a_malformed_python_spec() -> None:
    """``Spec(frozen="backbone.*")`` (a str, not a list) is iterated character by character:
    the pattern ``"*"`` then declares every parameter frozen, and audit() reports four false
    GA205 errors instead of the SpecError that the same spec gets from a file,
    ``to_toml()`` or ``assert_matches_spec``."""
    net = Net()
    with pytest.raises(graphaudit.SpecError, match="must be a list"):
        graphaudit.audit(net, nn.SGD(net.trainable_params()), spec=Spec(frozen="backbone.*"))


def test_frozen_glob_matching_nothing_is_reported() -> None:
    """A misspelt ``frozen``/``trainable`` glob checks nothing: GA300 says so, as for every other
    field of the design (connections, calls, shared groups)."""
    net = Net()
    for spec in (Spec(frozen=["backbon.*"]), Spec(trainable=["hed.*"])):
        report = graphaudit.audit(net, nn.SGD(net.trainable_params()), spec=spec)
        (finding,) = [f for f in report.findings if f.check_id in ("GA205", "GA206", "GA300")]
        assert finding.check_id == "GA300", finding
        assert finding.severity == "error" and "matches no parameter" in finding.message, spec


# ---------------------------------------------------------------------------- the doc


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table() -> str:
    rows = ["| # | bad input | result | message starts with / what to do |", "| --- | --- | --- | --- |"]
    for case in CASES:
        message = case.message.replace("{tmp}/", "")
        if case.error is not None:
            result = f"`{case.error.__name__}`"
            if not issubclass(case.error, graphaudit.GraphAuditError):
                result += " (MindSpore's)"
            text = _code(message) + (f" … {case.hint}" if case.hint and case.hint not in message else "")
        elif case.finding:
            result = f"finding {case.finding}"
            text = _code(message) if message else ""
        else:
            result = "no error"
            text = ""
        if case.note:
            text = f"{text}; {case.note}" if text else case.note
        rows.append(f"| `{case.id}` | {_cell(case.input)} | {_cell(result)} | {_cell(text)} |")
    return "\n".join(rows) + "\n"


def render_doc(current: str) -> str:
    start, end = current.index(BEGIN) + len(BEGIN), current.index(END)
    return current[:start] + "\n" + markdown_table() + current[end:]


def test_doc_table_is_current() -> None:
    current = DOC.read_text(encoding="utf-8")
    assert render_doc(current) == current, "regenerate: PYTHONPATH=. python tests/test_bad_inputs.py"
    for case in CASES:
        assert re.search(rf"^\| `{re.escape(case.id)}` \|", current, re.M), case.id


if __name__ == "__main__":
    DOC.write_text(render_doc(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    sys.exit(0)

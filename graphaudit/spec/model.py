"""The :class:`Spec` dataclass: a network's declared design, and what each field means.

Reading and writing TOML (:mod:`graphaudit.spec.toml_read`, :mod:`graphaudit.spec.toml_write`),
snapshots of a captured graph (:mod:`graphaudit.spec.snapshot`) and the comparison of two
designs (:mod:`graphaudit.spec.diff`) live in their own modules; this one ties them to the
class.

Example:
    >>> spec = Spec(frozen=["backbone.*"], shared_cells=[["layers.0", "layers.1"]])
    >>> spec.is_frozen("backbone.conv.weight"), spec.declares_shared_cell("layers.2")
    (True, False)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import TYPE_CHECKING, Any, Union

from graphaudit.errors import ArgumentTypeError, SpecError
from graphaudit.errors.arguments import check_path, checked_call
from graphaudit.spec.diff import diff_designs
from graphaudit.spec.patterns import matches_any
from graphaudit.spec.toml_read import Reader, read_toml
from graphaudit.spec.toml_write import pair_list, quote, string_list, toml_data
from graphaudit.suggest import did_you_mean

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["PathLike", "Spec"]

PathLike = Union[str, "os.PathLike[str]"]

HEADER = "# graphaudit design spec (see docs/spec.md)"


def _check_depth(depth: Any, function: str, allow_none: bool = False) -> None:
    if depth is None and allow_none:
        return
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise SpecError(f"{function}() needs depth >= 1 (1: the network's children), got {depth!r}")


@dataclass(kw_only=True)
class Spec:
    """A network's declared design.

    - ``frozen`` / ``trainable``: glob patterns on parameter names that must not / must train.
    - ``shared_parameters``: groups of parameter names (or attribute paths) that must be one
      Parameter object (tied weights).
    - ``shared_cells``: groups of cell paths that must be one Cell object.
    - ``expected_connections`` / ``forbidden_connections``: ``(source, target)`` cell paths or
      globs; a connection is a data flow from the source cell into the target cell, directly
      or through functional operations only.
    - ``exhaustive_connections``: when true, every connection between the cells named in
      ``expected_connections`` that is not declared is reported.
    - ``calls``: how many times each cell path is called in one forward pass.
    - ``linear_connections``: ``(source, target)`` pairs of weight layers (cell paths or
      globs) meant to compose into one linear map, with nothing non-linear between them (a
      low-rank factorisation, a projection); GA308 does not report them.
    - ``causal``: the model is causal (a decoder): the output at a position may depend only on
      the positions before it; the dependency probe's sequence probes run (GA341, GA342).
    - ``source``: the file the spec was loaded from, for messages (not compared by ``==``).

    Example:
        >>> spec = Spec(frozen=["backbone.*"], source="a.toml")
        >>> spec == Spec(frozen=["backbone.*"]), spec == Spec(frozen=["head.*"])
        (True, False)
    """

    frozen: list[str] = field(default_factory=list)
    trainable: list[str] = field(default_factory=list)
    shared_parameters: list[list[str]] = field(default_factory=list)
    shared_cells: list[list[str]] = field(default_factory=list)
    expected_connections: list[tuple[str, str]] = field(default_factory=list)
    forbidden_connections: list[tuple[str, str]] = field(default_factory=list)
    exhaustive_connections: bool = False
    calls: dict[str, int] = field(default_factory=dict)
    linear_connections: list[tuple[str, str]] = field(default_factory=list)
    causal: bool = False
    source: str | None = field(default=None, compare=False)

    def __new__(cls, *args: Any, **kwargs: Any) -> Spec:
        # The keywords are checked before the generated __init__ sees them, so that a
        # misspelt one gets the "did you mean" a misspelt key of a spec file gets.
        fields = [f.name for f in dataclass_fields(cls)]
        if args:  # Spec(["backbone.*"]) would be ambiguous to a reader: frozen? trainable?
            raise ArgumentTypeError(
                f"Spec() takes its fields by keyword, got {len(args)} positional argument(s) ({args[0]!r:.60}): "
                f"write e.g. Spec(frozen=[...]) (its fields are {', '.join(fields)})"
            )
        unknown = [name for name in kwargs if name not in fields]
        if unknown:
            name = unknown[0]
            raise ArgumentTypeError(
                f"Spec() got an unexpected keyword argument {name!r}{did_you_mean(name, fields)} "
                f"(its fields are {', '.join(fields)})"
            )
        return super().__new__(cls)

    def __post_init__(self) -> None:
        self.validate()  # at the line that wrote it, not at the audit that first reads it

    def is_frozen(self, name: str) -> bool:
        """Whether the design declares parameter *name* frozen.

        Example:
            >>> Spec(frozen=["backbone.*"]).is_frozen("backbone.0.weight")
            True
            >>> Spec(frozen=["backbone.*"]).is_frozen("head.weight")
            False
        """
        return matches_any(self.frozen, name)

    def is_trainable(self, name: str) -> bool:
        """Whether the design explicitly declares parameter *name* trainable.

        Example:
            >>> spec = Spec(trainable=["head.*"])
            >>> spec.is_trainable("head.bias"), spec.is_trainable("backbone.0.bias")
            (True, False)
        """
        return matches_any(self.trainable, name)

    def declares_shared_parameter(self, name: str) -> bool:
        """Whether *name* belongs to a declared group of tied parameters.

        Example:
            >>> spec = Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])
            >>> spec.declares_shared_parameter("decoder.weight"), spec.declares_shared_parameter("decoder.bias")
            (True, False)
        """
        return any(matches_any(group, name) for group in self.shared_parameters)

    def declares_linear(self, source: str, target: str) -> bool:
        """Whether the design declares that weight layer *source* feeds *target* with no non-linearity on purpose.

        Example:
            >>> spec = Spec(linear_connections=[("head.down", "head.up")])
            >>> spec.declares_linear("head.down", "head.up"), spec.declares_linear("fc1", "fc2")
            (True, False)
        """
        return any(matches_any([a], source) and matches_any([b], target) for a, b in self.linear_connections)

    def declares_shared_cell(self, path: str) -> bool:
        """Whether cell *path* belongs to a declared group of shared cells.

        Example:
            >>> spec = Spec(shared_cells=[["layers.*"]])
            >>> spec.declares_shared_cell("layers.3"), spec.declares_shared_cell("head")
            (True, False)
        """
        return any(matches_any(group, path) for group in self.shared_cells)

    # ----------------------------------------------------------------------- TOML

    @classmethod
    @checked_call
    def from_toml(cls, text: str, source: str | None = None) -> Spec:
        """Parse the TOML form of a spec (see ``docs/spec.md``).

        Raises:
            SpecError: the text is not TOML, or not a spec; the message reads
                ``source:line: problem`` and chains the original error.

        Example:
            >>> spec = Spec.from_toml('[calls]\\n"layers.0" = 3\\n')
            >>> spec.calls
            {'layers.0': 3}
            >>> Spec.from_toml("[parameter]\\nfrozen = []\\n", source="design.toml")
            Traceback (most recent call last):
            ...
            graphaudit.errors.SpecError: design.toml:1: unknown key 'parameter' at the top level; did you mean 'parameters'? (the keys allowed there are 'parameters', 'shared', 'connections', 'calls', 'model')
        """
        if not isinstance(text, str):
            hint = " (decode it first: text.decode('utf-8'))" if isinstance(text, bytes) else ""
            raise ArgumentTypeError(
                f"Spec.from_toml() expects the TOML text as a str, got {type(text).__name__}{hint}; "
                "to read a file, use Spec.load(path)"
            )
        return cls(**read_toml(text, source), source=source)

    def validate(self) -> None:
        """Raise a :class:`SpecError` when a field has the wrong type or a malformed glob.

        A spec is validated when it is made; the audit validates it again, since its fields can
        be changed afterwards.

        Example:
            >>> spec = Spec()
            >>> spec.frozen = "backbone.*"
            >>> spec.validate()
            Traceback (most recent call last):
            ...
            graphaudit.errors.SpecError: <spec>: parameters.frozen must be a list of parameter names or globs, got a string (write frozen = ["backbone.*"])
        """
        Reader(lambda path: None, self.source).read(toml_data(self))

    def to_toml(self) -> str:
        """The TOML form of the spec; ``Spec.from_toml(spec.to_toml()) == spec``.

        Raises:
            SpecError: the spec fails :meth:`validate`.

        Example:
            >>> print(Spec(frozen=["backbone.*"], calls={"layers.0": 3}).to_toml())
            # graphaudit design spec (see docs/spec.md)
            <BLANKLINE>
            [parameters]
            frozen = ["backbone.*"]
            trainable = []
            <BLANKLINE>
            [connections]
            expected = []
            forbidden = []
            exhaustive = false
            <BLANKLINE>
            [calls]
            "layers.0" = 3
            <BLANKLINE>
        """
        self.validate()
        out = [HEADER, ""]
        out += ["[parameters]", f"frozen = {string_list(self.frozen)}"]
        out += [f"trainable = {string_list(self.trainable)}", ""]
        for table, key, groups in (
            ("shared.parameters", "names", self.shared_parameters),
            ("shared.cells", "paths", self.shared_cells),
        ):
            for group in groups:
                out += [f"[[{table}]]", f"{key} = {string_list(group)}", ""]
        out += ["[connections]", f"expected = {pair_list(self.expected_connections)}"]
        out += [f"forbidden = {pair_list(self.forbidden_connections)}"]
        out += [f"exhaustive = {'true' if self.exhaustive_connections else 'false'}"]
        if self.linear_connections:  # written only when declared: older files stay byte for byte
            out += [f"linear = {pair_list(self.linear_connections)}"]
        out += [""]
        out += ["[calls]"]
        out += [f"{quote(path)} = {count}" for path, count in self.calls.items()]
        if self.causal:  # written only when declared: older files stay byte for byte
            out += ["", "[model]", "causal = true"]
        return "\n".join(out) + "\n"

    @classmethod
    @checked_call
    def load(cls, path: PathLike) -> Spec:
        """Read a spec from a TOML file (UTF-8); ``source`` is set to *path*.

        Raises:
            SpecError: the file cannot be read, or is not a valid spec (``file:line: problem``).

        Example:
            >>> import os, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "design.toml")
            >>> with open(path, "w", encoding="utf-8") as file:
            ...     _ = file.write('[parameters]\\nfrozen = ["backbone.*"]\\n')
            >>> spec = Spec.load(path)
            >>> spec.frozen, spec.source == path
            (['backbone.*'], True)
        """
        source = os.fspath(check_path(path, "path", "Spec.load()"))
        try:
            with open(source, encoding="utf-8") as file:
                text = file.read()
        except (OSError, UnicodeDecodeError) as err:
            raise SpecError(f"cannot read the spec file: {err}", source=source) from err
        return cls.from_toml(text, source=source)

    @checked_call
    def save(self, path: PathLike) -> None:
        """Write the spec to *path* as TOML (UTF-8), creating the parent folders.

        Raises:
            SpecError: the spec fails :meth:`validate` (nothing is written).

        Example:
            >>> import os, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "designs", "net.toml")
            >>> Spec(calls={"head": 1}).save(path)
            >>> Spec.load(path).calls
            {'head': 1}
        """
        target = os.fspath(path)
        text = self.to_toml()
        parent = os.path.dirname(target)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)

    # ----------------------------------------------------------------------- snapshots

    @classmethod
    @checked_call
    def from_net(cls, net: Any, inputs: Any = None, *, depth: int = 1) -> Spec:
        """Snapshot the design of a network known to be right.

        - ``frozen``: the exact names of the parameters with ``requires_grad=False``;
        - ``shared_parameters``: every path of each parameter held by more than one cell;
        - ``shared_cells``: every path of each cell (holding parameters) reachable under
          more than one path;
        - with *inputs* (one forward pass is traced): the direct connections among the cells
          *depth* levels down (``depth=1``: the network's children), declared exhaustive,
          and the call counts of those cells and of every cell called more than once.

        Names are stored as exact-match patterns (see :func:`~graphaudit.spec.escape`). This
        captures *net* (:func:`graphaudit.to_networkx`) then calls :meth:`from_graph`.

        Raises:
            SpecError: *depth* is not an integer >= 1.
            NotACellError: *net* is not a ``mindspore.nn.Cell``.

        Example:
            >>> import numpy as np
            >>> from mindspore import nn, Tensor
            >>> block = nn.Dense(4, 4)
            >>> spec = Spec.from_net(nn.SequentialCell([block] * 3), Tensor(np.ones((1, 4), np.float32)))
            >>> spec.shared_cells, spec.calls
            ([['0', '1', '2']], {'0': 3})
        """
        from graphaudit.capture import capture

        _check_depth(depth, "from_net")
        return cls.from_graph(capture(net, inputs)[0], depth=depth)

    @classmethod
    @checked_call
    def from_graph(
        cls,
        graph: nx.MultiDiGraph,
        *,
        depth: int | None = 1,
        connection_paths: Sequence[str] = (),
        call_paths: Sequence[str] = (),
    ) -> Spec:
        """The design an already captured *graph* (:func:`graphaudit.to_networkx`) shows.

        As :meth:`from_net`, plus: *depth* ``None`` records no level of cells, only the
        connections among *connection_paths* (exact cell paths), and *call_paths* adds the
        call count of each of those paths (see :func:`graphaudit.spec.snapshot.observed_design`).

        Example:
            >>> import numpy as np, graphaudit
            >>> from mindspore import nn, Tensor
            >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU(), nn.Dense(4, 2)])
            >>> graph = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
            >>> Spec.from_graph(graph).expected_connections
            [('0', '1'), ('1', '2')]
            >>> Spec.from_graph(graph, depth=None, connection_paths=["0", "2"]).expected_connections
            []
        """
        from graphaudit.spec.snapshot import observed_design  # imports NetworkX: on first use

        _check_depth(depth, "from_graph", allow_none=True)
        return cls(
            **observed_design(graph, depth=depth, connection_paths=connection_paths, call_paths=call_paths)
        )

    @checked_call
    def diff(self, other: Spec, *, trainable: Iterable[str] = ()) -> list[str]:
        """How the observed design *other* (usually ``Spec.from_net(...)``) departs from this one.

        ``self`` is the declared design (patterns allowed); *other* holds exact names, as a
        snapshot does. *trainable* names the parameters observed trainable, so that one this
        design declares frozen is reported too (a snapshot lists the frozen ones only).
        Returns one readable line per difference, empty when they agree.

        Example:
            >>> declared = Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])
            >>> declared.diff(Spec())
            ["shared parameters: ['embed.embedding_table', 'decoder.weight'] are declared shared, but in the network they are separate objects (the tie is broken)"]
            >>> Spec(frozen=["backbone.*"]).diff(Spec(frozen=["backbone.0.weight"]))
            []
        """
        return diff_designs(self, other, trainable)

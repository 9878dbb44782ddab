"""GA306 undeclared-connection."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder, pattern
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.graph.connectivity import direct_connections, resolve
from graphaudit.text import listing


@dataclass(frozen=True)
class UndeclaredConnection(Cause):
    """Direct connections between cells of an exhaustive design that the design does not declare."""

    names_subjects = True
    pairs: tuple[
        tuple[str, str], ...
    ]  # (source, target) cell paths, the same connection of blocks built alike

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for s, _ in self.pairs))

    def message(self) -> str:
        a, b = self.pairs[0]
        if len(self.pairs) == 1:
            flow = f"data flows from {a} into {b}"
        else:
            targets = tuple(dict.fromkeys(t for _, t in self.pairs))
            flow = (
                f"data flows from {listing(self.sources)} into {listing(targets)} ({len(self.pairs)} pairs, "
                f"the first {a} -> {b})"
            )
        return (
            f"{flow} in the traced forward pass, but the exhaustive design does not declare "
            f"{'this connection' if len(self.pairs) == 1 else 'these connections'}."
        )

    def fix(self) -> str:
        a, b = self.pairs[0]
        one = len(self.pairs) == 1
        declare = f"add ({a!r}, {b!r})" if one else f"add ({pattern(a)!r}, {pattern(b)!r})"
        return (
            f"Remove the connection{'' if one else 's'} from construct if it is a mistake, or declare "
            f"{'it' if one else 'them'}: {declare} to Spec.expected_connections."
        )


@register(
    "GA306",
    "undeclared-connection",
    severity="warning",
    needs=(
        TracedPass,
        DeclaredDesign,
    ),
    causes=(UndeclaredConnection,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A data flow between the cells of an exhaustive design that the design does not list.

    What it does:
        When ``Spec.exhaustive_connections`` is true, takes every cell named (or matched by a
        glob) in ``Spec.expected_connections`` and reports each direct connection between two
        of them, in the traced forward pass, that no expected (or forbidden) pair declares.
        A direct connection is a tensor made inside one cell reaching another directly or
        through functional operations only. The same connection in every block built alike
        (``blocks.0.a -> blocks.0.c``, ``blocks.1.a -> blocks.1.c``...) is one finding.

    Why is this bad:
        An exhaustive design is a wiring diagram: an extra wire is as much a bug as a missing
        one. A stray skip connection, a feature map reused one stage too late or a branch fed
        from the wrong place all leave a network that trains, but not the one designed.

    Example:
        ```python
        # Spec(expected_connections=[("encoder", "decoder"), ("decoder", "head")],
        #      exhaustive_connections=True)
        def construct(self, x):
            z = self.encoder(x)
            return self.head(self.decoder(z) + z)   # encoder -> head is not in the design
        ```

    Use instead:
        ```python
        def construct(self, x):
            return self.head(self.decoder(self.encoder(x)))
        ```

        or, if the skip is meant, add ``("encoder", "head")`` to the expected connections.
    """
    spec = ctx.spec
    if not spec.exhaustive_connections:
        return
    names: list[str] = []
    for source, target in spec.expected_connections:
        names.extend(resolve(ctx.graph, source))
        names.extend(resolve(ctx.graph, target))
    declared = [*spec.expected_connections, *spec.forbidden_connections]
    by_path = ctx.cell_nodes_by_path()
    order = {path: index for index, path in enumerate(dict.fromkeys(names))}
    causes: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, b in sorted(
        direct_connections(ctx.graph, order), key=lambda pair: (order[pair[0]], order[pair[1]])
    ):
        if any(fnmatchcase(a, s) and fnmatchcase(b, t) for s, t in declared):
            continue
        # One construct wiring the same two cells of every block built alike: one cause.
        causes.setdefault((pattern(a), pattern(b)), []).append((a, b))
    for pairs in causes.values():
        cause = UndeclaredConnection(tuple(pairs))
        sources = cause.sources
        yield ctx.finding(
            "warning",
            pairs[0][0] if len(sources) == 1 else holder(list(sources)),
            cause,
            list(dict.fromkeys(by_path[p] for pair in pairs for p in pair)),
            subjects=sources,
        )

"""Which parameter of the port is which weight of the original.

Four passes, each on what the ones before left unmatched (the ``how`` of a :class:`Pair`):

1. ``"name"``: the same name once MindSpore's spellings are read as PyTorch's (the last part
   of a name: ``gamma``/``beta`` -> ``weight``/``bias``, ``moving_mean``/``moving_variance`` ->
   ``running_mean``/``running_var``, ``embedding_table`` -> ``weight``), or as the user gave it;
2. ``"prefix"``: the same name below a prefix that differs (``model.`` against ``bert.``): the
   prefix pair that explains most names is applied, and the next, as ``load_param_into_net``
   does with a checkpoint's prefix;
3. ``"signature"``: a module renamed whole, alone on both sides in holding the same leaves of
   the same shapes (``conv_1`` for ``conv``), then a lone weight whose shape no other has;
4. ``"order"``: the rest in module order, paired where their shapes agree (the longest runs
   first, :class:`difflib.SequenceMatcher`); a weight stored transposed pairs too.

A name pair whose shapes differ is kept, with its ``layout``: ``"transposed"`` (one is the
other's transpose) or ``"shape"``. Names left over on either side are returned as they are:
the checks say what they mean. Integer tensors of the original (``position_ids``,
``num_batches_tracked``) are buffers, not weights, and port parameters that are not trainable
have no entry in the original when it computes them (rotary frequencies): neither is ever
"missing".

Example:
    >>> port = {"fc.weight": (3, 2), "fc.bias": (3,), "norm.gamma": (3,)}
    >>> ref = {"fc.weight": (3, 2), "norm.weight": (3,), "head.weight": (1, 3)}
    >>> m = map_parameters(port, ref)
    >>> [(p.port, p.reference, p.how) for p in m.pairs]
    [('fc.weight', 'fc.weight', 'name'), ('norm.gamma', 'norm.weight', 'name')]
    >>> m.port_only, m.reference_only
    (('fc.bias',), ('head.weight',))
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping as MappingABC
from dataclasses import dataclass

__all__ = ["Pair", "ParameterMapping", "canonical", "map_parameters"]

Shape = tuple[int, ...]

_MINDSPORE_LEAVES = {
    "gamma": "weight",
    "beta": "bias",
    "moving_mean": "running_mean",
    "moving_variance": "running_var",
    "embedding_table": "weight",
}


@dataclass(frozen=True)
class Pair:
    """A port parameter and the original's weight it stands for."""

    port: str
    reference: str
    how: str  # "given", "name", "alias", "prefix", "signature" or "order"
    layout: str = "same"  # "same", "transposed" (a 2-D weight stored the other way) or "shape"


@dataclass(frozen=True)
class ParameterMapping:
    """The pairs found, and the names of each side left without a counterpart."""

    pairs: tuple[Pair, ...]
    port_only: tuple[str, ...]
    reference_only: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """The mapping as JSON-ready data (what ``--reference`` shows and a user can edit)."""
        return {
            "pairs": [
                {"port": p.port, "reference": p.reference, "how": p.how, "layout": p.layout}
                for p in self.pairs
            ],
            "port_only": list(self.port_only),
            "reference_only": list(self.reference_only),
        }


def canonical(name: str) -> str:
    """*name* in PyTorch's spelling: ``bn.gamma`` -> ``bn.weight`` (only the last part changes)."""
    head, _, leaf = name.rpartition(".")
    leaf = _MINDSPORE_LEAVES.get(leaf, leaf)
    return f"{head}.{leaf}" if head else leaf


def _layout(port: Shape, reference: Shape) -> str:
    if _squeezed(port) == _squeezed(reference):
        return "same"
    if len(port) == len(reference) == 2 and port == reference[::-1] and port[0] != port[1]:
        return "transposed"
    return "shape"


def _squeezed(shape: Shape) -> Shape:
    """*shape* without trailing 1s (MindSpore loads a (n, 1) entry into an (n,) parameter)."""
    end = len(shape)
    while end > 1 and shape[end - 1] == 1:
        end -= 1
    return tuple(shape[:end])


def map_parameters(
    port: MappingABC[str, Shape],
    reference: MappingABC[str, Shape],
    given: MappingABC[str, str] | None = None,
    *,
    reference_ordered: bool = True,
    stored_transposed: frozenset[str] = frozenset(),
    aliases: MappingABC[str, tuple[str, ...]] | None = None,
) -> ParameterMapping:
    """Pair *port*'s parameters (name -> shape, in module order) with *reference*'s weights.

    *given* pairs port names with reference names first (the user's corrections); *aliases*
    gives every path of a parameter reached by several (a tied weight: ``how="alias"``);
    *stored_transposed* names reference weights whose layout says nothing (an ONNX ``MatMul``'s
    operand is ``(in, out)`` whether the layer stored it so or the exporter folded a transpose).
    """
    pairs: list[Pair] = []
    shapes_of = dict(port)
    ports = dict(port)
    refs = dict(reference)

    def take(port_name: str, ref_name: str, how: str) -> None:
        ref_shape = refs.pop(ref_name)
        shape = ports.pop(port_name)
        layout = _layout(shape, ref_shape)
        if ref_name in stored_transposed and layout == "transposed":
            layout = "same"  # a MatMul's operand: (in, out) whatever the layer stores; the outputs tell
        pairs.append(Pair(port_name, ref_name, how, layout))

    for port_name, ref_name in (given or {}).items():
        if port_name in ports and ref_name in refs:
            take(port_name, ref_name, "given")
    by_canonical = {canonical(name): name for name in refs}
    for name in list(ports):
        ref_name = by_canonical.get(canonical(name))
        if ref_name is not None and ref_name in refs:
            take(name, ref_name, "name")
    for primary, paths in (aliases or {}).items():  # one Parameter reached by several paths: all its names
        for path in paths[1:]:
            ref_name = by_canonical.get(canonical(path))
            if ref_name is not None and ref_name in refs and primary in shapes_of:
                refs.pop(ref_name)
                # the primary path may have no counterpart of its own (a head tied to the embedding,
                # first met as lm_head.weight, in a file that keeps only the embedding's name)
                ports.pop(primary, None)
                pairs.append(
                    Pair(primary, ref_name, "alias", _layout(shapes_of[primary], reference[ref_name]))
                )
    for port_prefix, ref_prefix in _prefixes(ports, refs):
        by_canonical = {canonical(name): name for name in refs}
        for name in list(ports):
            if name.startswith(port_prefix):
                ref_name = by_canonical.get(ref_prefix + canonical(name)[len(port_prefix) :])
                if ref_name is not None:
                    take(name, ref_name, "prefix")
    for port_name, ref_name in _by_signature(ports, refs):
        take(port_name, ref_name, "signature")
    ref_order = list(refs) if reference_ordered else sorted(refs, key=_natural)
    for port_name, ref_name in _by_order(list(ports), ref_order, ports, refs):
        take(port_name, ref_name, "order")
    position = {name: k for k, name in enumerate(port)}
    pairs.sort(key=lambda p: position[p.port])
    return ParameterMapping(tuple(pairs), tuple(ports), tuple(refs))


def _prefixes(ports: dict[str, Shape], refs: dict[str, Shape]) -> list[tuple[str, str]]:
    """The prefix rewrites ``(port prefix, reference prefix)`` that explain two names or more, best first.

    A name votes when the two shapes agree, and a rewrite must explain most of the port's names
    below its prefix: a prefix that is really there renames all of them (``model.`` for
    ``bert.``), while two layouts that only share a tail such as ``1.running_mean`` do not
    (mindcv's ``features.5.layers.1`` is torchvision's ``features.3.conv.0.1``, not ``conv.1.1``).
    """
    by_tail: dict[str, list[tuple[str, str]]] = {}
    for ref in refs:
        by_tail.setdefault(".".join(canonical(ref).split(".")[-2:]), []).append((canonical(ref), ref))
    votes: Counter[tuple[str, str]] = Counter()
    for name, shape in ports.items():
        mine = canonical(name)
        for ref, ref_name in by_tail.get(".".join(mine.split(".")[-2:]), ()):
            common = _common_tail(mine.split("."), ref.split("."))
            if common < 2 or _layout(shape, refs[ref_name]) != "same":
                continue
            port_prefix = ".".join(mine.split(".")[:-common])
            ref_prefix = ".".join(ref.split(".")[:-common])
            votes[(port_prefix + "." if port_prefix else "", ref_prefix + "." if ref_prefix else "")] += 1
    below = Counter(prefix for prefix, _ in votes)
    for prefix in below:
        below[prefix] = sum(1 for name in ports if canonical(name).startswith(prefix))
    return [rewrite for rewrite, count in votes.most_common() if count >= 2 and 2 * count > below[rewrite[0]]]


def _common_tail(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _natural(name: str) -> list[object]:
    """A sort key that puts ``layer.2`` before ``layer.10`` (module order, for most models)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


_LEAF_RANK = {"weight": 0, "bias": 1, "running_mean": 2, "running_var": 3}


def _module_order(names: list[str]) -> list[str]:
    """*names* with each module's own parameters in PyTorch's order: weight, bias, running statistics.

    MindSpore's BatchNorm holds ``moving_mean, moving_variance, gamma, beta`` where PyTorch's holds
    ``weight, bias, running_mean, running_var``, and a sorted file ``bias`` before ``weight``: all
    of one shape, so pairing them in the order found would swap them silently.
    """
    ordered: list[str] = []
    k = 0
    while k < len(names):
        head = names[k].rpartition(".")[0]
        end = k
        while end < len(names) and names[end].rpartition(".")[0] == head:
            end += 1
        group = names[k:end]
        ordered += sorted(
            group, key=lambda n: _LEAF_RANK.get(canonical(n).rpartition(".")[2], len(_LEAF_RANK))
        )
        k = end
    return ordered


def _by_order(
    port_names: list[str],
    ref_names: list[str],
    ports: dict[str, Shape],
    refs: dict[str, Shape],
) -> list[tuple[str, str]]:
    """Port and reference names paired along the longest runs of equal shapes, in order."""
    if not port_names or not ref_names:
        return []
    port_names, ref_names = _module_order(port_names), _module_order(ref_names)

    def signature(shape: Shape) -> Shape:
        shape = _squeezed(shape)
        return tuple(sorted(shape)) if len(shape) == 2 else shape  # a transposed 2-D weight pairs too

    ref_keys = [signature(refs[n]) for n in ref_names]
    matcher = difflib.SequenceMatcher(
        None, [signature(ports[n]) for n in port_names], ref_keys, autojunk=False
    )
    found = []
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            found.append((port_names[block.a + k], ref_names[block.b + k]))
    return found


def _by_signature(ports: dict[str, Shape], refs: dict[str, Shape]) -> list[tuple[str, str]]:
    """Modules renamed whole: one port module and one original module alone in having the same leaves and shapes.

    A port that names its layers its own way (``conv_1`` for ``conv``, ``proj`` for ``fc``)
    keeps what each layer holds; where that is unique on both sides, the names do not matter.
    Then a lone weight whose shape no other unpaired weight has, on either side, pairs too.
    """

    def modules(shapes: dict[str, Shape]) -> dict[str, dict[str, str]]:
        found: dict[str, dict[str, str]] = {}
        for name in shapes:
            module, _, leaf = canonical(name).rpartition(".")
            found.setdefault(module, {})[leaf] = name
        return found

    def signature(group: dict[str, str], shapes: dict[str, Shape]) -> frozenset[tuple[str, Shape]]:
        return frozenset((leaf, _squeezed(shapes[name])) for leaf, name in group.items())

    port_modules, ref_modules = modules(ports), modules(refs)
    port_signatures = Counter(signature(g, ports) for g in port_modules.values())
    ref_by_signature: dict[frozenset[tuple[str, Shape]], list[dict[str, str]]] = {}
    for group in ref_modules.values():
        ref_by_signature.setdefault(signature(group, refs), []).append(group)
    found = []
    for group in port_modules.values():
        mine = signature(group, ports)
        theirs = ref_by_signature.get(mine, [])
        if port_signatures[mine] == 1 and len(theirs) == 1:
            found += [(name, theirs[0][leaf]) for leaf, name in group.items()]
    paired_ports, paired_refs = {p for p, _ in found}, {r for _, r in found}
    port_shapes = Counter(_squeezed(s) for n, s in ports.items() if n not in paired_ports)
    ref_shapes = Counter(_squeezed(s) for n, s in refs.items() if n not in paired_refs)
    lone_refs = {_squeezed(s): n for n, s in refs.items() if n not in paired_refs}
    for name, shape in ports.items():
        key = _squeezed(shape)
        if name not in paired_ports and port_shapes[key] == 1 and ref_shapes[key] == 1:
            found.append((name, lone_refs[key]))
    return found

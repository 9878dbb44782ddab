"""GA601 zero-initialized-weight."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

import mindspore as ms
import numpy as np
from mindspore import Parameter

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding

# Names of weight matrices, whatever cell holds them.
WEIGHT_NAMES = frozenset({"weight", "embedding_table", "kernel", "w", "weights"})
# Cells whose matrix parameters are weights (Dense, Conv2d, Conv1dTranspose, Embedding, Linear...).
LAYER_CLASS = re.compile(r"Dense|Linear|Conv|Embedding|Projection|MatMul", re.IGNORECASE)
# Parameters legitimately zero or constant at initialisation, by name.
EXEMPT_NAME = re.compile(
    r"cls_token|class_token|dist_token|mask_token|reg_token|register_token|pos_embed|position"
    r"|layer_scale|gamma|beta|bias|moving_|running_|norm",
    re.IGNORECASE,
)
_CACHE_KEY = "ga6xx.weights"


# How many leading elements are compared before a weight is scanned in full: a random
# weight differs within them, so only a (nearly) constant one pays for the full comparison.
_PROBE = 64


@dataclass(frozen=True, eq=False)
class WeightValues:
    """What the GA6xx checks need to know about one weight matrix's values.

    ``digest`` (a BLAKE2b hash of the bytes) is computed on first use and cached: hashing
    every weight of a large model costs more than the rest of a structure-only audit, and
    GA603 only needs the digests of weights whose ``sample`` (the bytes of a few elements,
    equal for equal weights) collides with another's.
    """

    node: str
    parameter: Parameter
    owner: str
    constant: float | None  # the one value of a weight whose elements are all equal
    sample: bytes = b""

    @property
    def digest(self) -> bytes:
        cached = self.__dict__.get("_digest")
        if cached is None:
            values = np.ascontiguousarray(parameter_values(self.parameter))
            cached = hashlib.blake2b(values.tobytes(), digest_size=16).digest()
            object.__setattr__(self, "_digest", cached)
        return cached


def _sample(values: np.ndarray) -> bytes:
    """The bytes of up to 3 x 64 elements of *values* (its start, middle and end)."""
    flat = values.reshape(-1)
    if flat.size <= 3 * _PROBE:
        return flat.tobytes()
    middle = flat.size // 2 - _PROBE // 2
    return flat[:_PROBE].tobytes() + flat[middle : middle + _PROBE].tobytes() + flat[-_PROBE:].tobytes()


def _constant(values: np.ndarray) -> float | None:
    """The one value of *values* if all its elements are equal (a NaN never is), else None."""
    flat = values.reshape(-1)
    first = flat[0]
    if not bool(np.all(flat[:_PROBE] == first)):
        return None  # the common case, decided without touching the rest
    return float(first) if bool(np.all(values == first)) else None


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def is_weight_matrix(ctx: AuditContext, node: str, param: Parameter) -> str | None:
    """The owner's class name when *param* is a trainable float weight matrix, else None."""
    if len(param.shape) < 2 or not param.requires_grad or param.dtype not in ms.common.dtype.float_type:
        return None
    name = param.name  # a property that does work on every access
    if EXEMPT_NAME.search(name) or any(EXEMPT_NAME.search(p) for p in g.node_paths(ctx.graph, node)):
        return None
    classes: list[str] = []  # of the owners, as g.owners_of lists them
    attribute_names: set[str] = set()
    for owner, _, d in ctx.graph.in_edges(node, data=True):  # one pass for both
        if d["kind"] == g.OWNS:
            classes.append(ctx.graph.nodes[owner]["class_name"])
            attribute_names.add(d["name"])
    named = _leaf(name) in WEIGHT_NAMES or bool(attribute_names & WEIGHT_NAMES)
    layer = next((c for c in classes if LAYER_CLASS.search(c)), None)
    if layer is None and not named:
        return None
    return layer or (classes[0] if classes else "?")


def parameter_values(param: Parameter) -> np.ndarray:
    # Reading the data does not change it; bfloat16 has no NumPy type and is read as float32.
    if param.dtype == ms.bfloat16:
        return param.astype(ms.float32).asnumpy()
    return param.asnumpy()


def weight_values(ctx: AuditContext) -> list[WeightValues]:
    """Every weight matrix of the network with its values summarised, computed once per audit.

    A parameter not yet materialised (``has_init``: lazy initialisation) is skipped, since
    reading it would initialise it.
    """
    cached = ctx.extra.get(_CACHE_KEY)
    if cached is not None:
        return cached
    found: list[WeightValues] = []
    for node, param in ctx.parameters():
        owner = is_weight_matrix(ctx, node, param)
        if owner is None or getattr(param, "has_init", False):
            continue
        try:
            values = parameter_values(param)
        except (RuntimeError, TypeError, ValueError):
            continue
        if values.size == 0:
            continue
        found.append(WeightValues(node, param, owner, _constant(values), _sample(values)))
    ctx.extra[_CACHE_KEY] = found
    return found


@register("GA601", "zero-initialized-weight")
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A weight matrix whose values are all zero.

    What it does:
        Reads the values of every trainable weight matrix (a parameter with two or more
        dimensions named ``weight``/``embedding_table``..., or held by a Dense, Conv,
        Embedding or Linear-like cell) and reports one that is entirely zero. Biases,
        normalisation parameters, layer-scale gammas (1-D) and zero-initialised class
        tokens or position embeddings (names with ``cls_token``, ``pos_embed``,
        ``position``...) are never reported. Values are only read.

    Why is this bad:
        With an all-zero weight a layer's output does not depend on its input and no
        gradient flows back through it to the layers before it; every unit of the layer gets
        the same update, so the symmetry between them is never broken properly. Training
        starts from a degenerate point, slowly or not at all (MindSpore's accuracy-tuning
        guide lists "weights initialised to all zeros" among the common initialisation bugs).

    Example:
        ```python
        self.fc = nn.Dense(256, 128, weight_init="zeros")
        ```

    Use instead:
        ```python
        self.fc = nn.Dense(256, 128)  # or weight_init=HeUniform(), XavierUniform()...
        ```
    """
    for item in weight_values(ctx):
        if item.constant != 0.0:
            continue
        name = item.parameter.name
        yield ctx.finding(
            "error",
            name,
            f"{name} (shape {tuple(item.parameter.shape)}, in a {item.owner}) is all zeros: no gradient "
            "reaches the layers before it and its units start identical.",
            f"Initialise {name} randomly (e.g. weight_init='HeUniform' or 'XavierUniform', or the layer's "
            "default) instead of zeros.",
            [item.node],
        )

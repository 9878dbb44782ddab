"""Fixed colours, SVG-safe ids, and user text made literal for Graphviz.

The DOT itself is written by the ``graphviz`` package (:mod:`graphaudit.draw.dot`), which
quotes IDs and attribute values and escapes their double quotes. It leaves the rest of a
DOT *escString* to the caller, on purpose: a backslash keeps its meaning (``\\n``, ``\\l``,
``\\N``...), a string written ``<...>`` becomes an HTML-like label, a newline stays a raw
newline, and Graphviz decodes ``&amp;``-style entities when it draws a label. Text from the
network goes through :func:`text` (labels) or :func:`tooltip` first, so none of that ever
happens to it.

Example:
    >>> import graphviz
    >>> svg_id("cell:layers.0")
    'ga-cell_3a_layers_2e_0'
    >>> print(graphviz.quoting.quote(label('say "hi"\\n&', "<b>")))
    "say \\"hi\\"\\\\n&amp;\\n<b>"
"""

from __future__ import annotations

import re
from typing import Final

import graphviz

__all__ = [
    "EDGE_STYLES",
    "KIND_COLORS",
    "MAX_LABEL",
    "PLAIN_BORDER",
    "SEVERITY_COLORS",
    "SEVERITY_FILLS",
    "SEVERITY_WIDTHS",
    "clip",
    "dot_text",
    "human_count",
    "label",
    "svg_id",
    "text",
    "tooltip",
]

#: Fill colour of each kind of drawn node (graph node kinds plus the renderer's own boxes).
#: Neutral greys and white: kinds differ by shape, and colour is kept for findings alone.
KIND_COLORS: Final = {
    "cell": "#ffffff",
    "call": "#ffffff",
    "op": "#eeeeee",
    "parameter": "#f7f7f7",
    "input": "#e6e6e6",
    "output": "#e6e6e6",
    "loss": "#e6e6e6",
    "collapsed": "#e9e9e9",
    "rollup": "#dddddd",
    "cluster": "#fafafa",
}
#: Border of every node and cluster that no finding concerns.
PLAIN_BORDER: Final = "#9aa5b1"
NODE_BORDER: Final = "#5f6b7a"
# Okabe & Ito's colour-blind-safe palette (vermillion, orange, blue): the three stay apart
# under every common colour-vision deficiency, unlike the red/green of most defaults.
#: Border colour of a node or cluster concerned by a finding, by severity.
SEVERITY_COLORS: Final = {"error": "#d55e00", "warning": "#e69f00", "info": "#0072b2"}
# The same hues at 55 % strength: the neutral kind colours and these fills are at least 20
# CIELAB units apart (tests/test_render.py), so a flagged node never passes for a plain one.
#: Fill colour of a node concerned by a finding, by severity.
SEVERITY_FILLS: Final = {"error": "#e8a673", "warning": "#f1ca73", "info": "#73b1d5"}
#: Border width of a node concerned by a finding, by severity (a second cue beside the hue).
SEVERITY_WIDTHS: Final = {"error": "3", "warning": "2.5", "info": "2"}
#: DOT attributes of each edge kind. None sets ``constraint=false``: Graphviz 16 (the
#: explorer's WebAssembly build) can abort on such edges next to a cluster.
EDGE_STYLES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "flows": (("color", "#444444"),),
    "reads": (("color", "#8a8a8a"), ("style", "dashed"), ("arrowhead", "empty")),
    "owns": (("color", "#8a8a8a"), ("style", "dashed"), ("arrowhead", "empty")),
    "contains": (("color", "#8a8a8a"), ("style", "dotted"), ("arrowhead", "odiamond")),
    "loss": (("color", "#444444"), ("style", "bold")),
    "order": (("style", "invis"),),
}
MAX_LABEL: Final = 60
_CONTROL_NAMES: Final = {"\n": "n", "\r": "r", "\t": "t"}


def svg_id(node: str) -> str:
    """An id safe in DOT, SVG, HTML and CSS, derived one-to-one from a graph node id.

    Letters, digits and ``-`` are kept; every other character becomes ``_<hex>_``. No
    ``:`` survives, so the ``graphviz`` package never reads a port into an edge's end.

    Example:
        >>> svg_id('param:a"<b>')
        'ga-param_3a_a_22__3c_b_3e_'
    """
    return "ga-" + _UNSAFE.sub(_escaped, node)


_UNSAFE = re.compile("[^A-Za-z0-9-]")


def _escaped(match: re.Match[str]) -> str:
    return f"_{ord(match.group()):x}_"


#: What :func:`text` replaces: ``&`` and the control characters (C0, DEL, C1, the line and paragraph separators).
_SPECIAL = re.compile("[&\x00-\x1f\x7f-\x9f\u2028\u2029]")


def text(value: object) -> str:
    """User text as one line of an escString that Graphviz shows exactly as written.

    A control character (a newline in a cell name) is shown as its escape (``\\n``) rather
    than acted on; ``&`` becomes ``&amp;`` so that Graphviz never decodes an entity the user
    wrote; every backslash is doubled (:func:`graphviz.escape`) so none starts an escape;
    and the result is marked :func:`graphviz.nohtml`, so ``<...>`` is never an HTML label.
    Double quotes are left to the ``graphviz`` package's quoting.

    Example:
        >>> print(text('a\\nb "c" &lt; \\\\N'))
        a\\\\nb "c" &amp;lt; \\\\N
        >>> type(text("<b>")).__name__
        'NoHtml'
    """
    value = str(value)
    if not _SPECIAL.search(value):  # nearly every label: nothing to replace (a drawing asks ~1,000 times)
        return graphviz.escape(value)
    out = []
    for char in value:
        if char == "&":
            out.append("&amp;")
        elif ord(char) < 32 or 0x7F <= ord(char) < 0xA0 or char in "\u2028\u2029":
            out.append("\\" + _CONTROL_NAMES.get(char, f"x{ord(char):02x}"))
        else:
            out.append(char)
    return graphviz.escape("".join(out))


def label(*lines: object) -> str:
    """*lines* (each made literal with :func:`text`) shown one under the other, for a label or tooltip.

    Example:
        >>> print(label("a", "b\\\\"))
        a\\nb\\\\
    """
    return graphviz.nohtml("\\n".join(text(line) for line in lines))


def tooltip(*lines: object) -> str:
    """Like :func:`label`, for a tooltip: Graphviz reads a tooltip's backslashes twice.

    Graphviz 2.43 unescapes a tooltip once more than a label before writing it to the SVG
    (``\\\\N`` in a tooltip shows the node's name, not ``\\N``), so every backslash of the
    user's text is doubled once more; the line breaks between *lines* stay single.

    Example:
        >>> print(tooltip("a\\\\N", "b"))
        a\\\\\\\\N\\nb
    """
    return graphviz.nohtml("\\n".join(text(line).replace("\\", "\\\\") for line in lines))


def dot_text(*lines: object) -> str:
    """*lines* as the inside of one quoted DOT string: :func:`label`, with its quotes escaped.

    What the ``graphviz`` package writes between the quotes of a label made by :func:`label`;
    the explorer's script joins such pieces itself (edge labels), so both write the same DOT.

    Example:
        >>> print(dot_text('say "hi"', "[1, 2]"))
        say \\"hi\\"\\n[1, 2]
    """
    return label(*lines).replace('"', '\\"')


def clip(value: object, limit: int = MAX_LABEL) -> str:
    """*value* as text, cut to *limit* characters with an ellipsis.

    Example:
        >>> clip("abcdef", 4)
        'abc…'
    """
    value = str(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def human_count(count: int) -> str:
    """A parameter count in short form.

    Example:
        >>> human_count(20), human_count(25_557_032), human_count(4_500)
        ('20', '25.6M', '4.5k')
    """
    for size, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if count >= size:
            return f"{count / size:.1f}{suffix}"
    return str(count)

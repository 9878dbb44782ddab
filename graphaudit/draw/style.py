"""Fixed colours, SVG-safe ids and DOT string escaping shared by the renderers.

Example:
    >>> svg_id("cell:layers.0")
    'ga-cell_3a_layers_2e_0'
    >>> quote('say "hi"\\n&')
    '"say \\\\"hi\\\\"\\\\\\\\n&amp;"'
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "EDGE_STYLES",
    "KIND_COLORS",
    "MAX_LABEL",
    "SEVERITY_COLORS",
    "SEVERITY_FILLS",
    "clip",
    "human_count",
    "quote",
    "svg_id",
    "text",
]

#: Fill colour of each kind of drawn node (graph node kinds plus the renderer's own boxes).
KIND_COLORS: Final = {
    "cell": "#dfe9f5",
    "call": "#dfe9f5",
    "weights": "#d5e3f3",
    "op": "#f2f2f2",
    "parameter": "#fff1c9",
    "input": "#dff2dc",
    "output": "#dff2dc",
    "collapsed": "#e4e4e4",
    "rollup": "#eadff5",
    "cluster": "#f8fafc",
}
#: Border colour of a node or cluster concerned by a finding, by severity.
SEVERITY_COLORS: Final = {"error": "#d62728", "warning": "#ff7f0e", "info": "#1f77b4"}
#: Fill colour of a node concerned by a finding, by severity.
SEVERITY_FILLS: Final = {"error": "#fbdcdc", "warning": "#ffe8cc", "info": "#dcebf7"}
#: DOT attributes of each edge kind.
EDGE_STYLES: Final = {
    "flows": 'color="#444444"',
    "reads": 'color="#b8860b", style=dashed, arrowhead=empty, constraint=false',
    "owns": 'color="#b8860b", style=dashed, arrowhead=empty',
    "invokes": 'color="#4a6fa5", style=dotted, arrowhead=odot, constraint=false',
    "contains": 'color="#4a6fa5", style=dotted, arrowhead=odiamond',
    "order": "style=invis",
}
MAX_LABEL: Final = 60


def svg_id(node: str) -> str:
    """An id safe in DOT, SVG, HTML and CSS, derived one-to-one from a graph node id.

    Letters, digits and ``-`` are kept; every other character becomes ``_<hex>_``.

    Example:
        >>> svg_id('param:a"<b>')
        'ga-param_3a_a_22__3c_b_3e_'
    """
    out = ["ga-"]
    for char in node:
        if char.isascii() and (char.isalnum() or char == "-"):
            out.append(char)
        else:
            out.append(f"_{ord(char):x}_")
    return "".join(out)


def text(value: object) -> str:
    """User text made safe for a DOT escString: ``\\``, ``"``, ``&`` and control characters.

    A control character (a newline in a cell name) is shown as its escape (``\\n``) rather
    than acted on; ``&`` becomes ``&amp;`` so that Graphviz never decodes an entity the user
    wrote.

    Example:
        >>> print(text('a\\nb "c" &lt;'))
        a\\\\nb \\"c\\" &amp;lt;
    """
    out = []
    for char in str(value):
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif char == "&":
            out.append("&amp;")
        elif ord(char) < 32 or 0x7F <= ord(char) < 0xA0 or char in "\u2028\u2029":
            out.append("\\\\" + {"\n": "n", "\r": "r", "\t": "t"}.get(char, f"x{ord(char):02x}"))
        else:
            out.append(char)
    return "".join(out)


def clip(value: object, limit: int = MAX_LABEL) -> str:
    """*value* as text, cut to *limit* characters with an ellipsis.

    Example:
        >>> clip("abcdef", 4)
        'abc…'
    """
    value = str(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def quote(*lines: object) -> str:
    """A quoted DOT string showing *lines* one under the other (each escaped with :func:`text`).

    Example:
        >>> quote("a", "b")
        '"a\\\\nb"'
    """
    return '"' + "\\n".join(text(line) for line in lines) + '"'


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

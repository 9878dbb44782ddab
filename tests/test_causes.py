"""A finding carries its cause as data, and is worded by one text layer (issue 39's targets, held).

- every check declares the causes its findings carry (the bad samples show each one's cause is
  of a declared class: tests/test_samples.py);
- nothing in the package searches a finding's own message or fix for structure (no regex, no
  ``in``, no ``startswith``): what decides on a finding reads its cause's fields;
- no check cuts a listing by hand (a slice joined into text) or writes ``(s)`` plurals: the text
  layer (``graphaudit.text``) does both, one way;
- no early ``return``/``continue`` in a check names another check: what one check knows of
  another is declared (``confirms=``, ``defers_to=``).
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphaudit.checks import all_checks, register
from graphaudit.findings import Cause, Finding

PACKAGE = Path(__file__).resolve().parent.parent / "graphaudit"
SOURCES = sorted(PACKAGE.rglob("*.py"))
CHECK_SOURCES = sorted((PACKAGE / "checks").glob("ga*.py")) + sorted(
    (PACKAGE / "checks" / "_shared").glob("*.py")
)


def _is_words(node: ast.AST) -> bool:
    """Whether *node* reads a finding's words: ``x.message`` or ``x.fix`` (an attribute, not a call)."""
    return isinstance(node, ast.Attribute) and node.attr in ("message", "fix")


def searches_of_words(path: Path) -> list[str]:
    """Where the source at *path* searches a finding's message or fix: ``in``, a str method, ``re``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            if any(_is_words(side) for side in node.comparators):
                found.append(f"{path.name}:{node.lineno} 'in' over a finding's words")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if _is_words(node.func.value) and node.func.attr in (
                "startswith",
                "endswith",
                "find",
                "index",
                "split",
                "count",
                "partition",
            ):
                found.append(f"{path.name}:{node.lineno} str.{node.func.attr} over a finding's words")
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "re" and any(_is_words(a) for a in node.args):
                found.append(f"{path.name}:{node.lineno} re.{node.func.attr} over a finding's words")
    return found


def test_nothing_searches_a_findings_words_for_structure():
    assert [hit for path in SOURCES for hit in searches_of_words(path)] == []


LISTING_SEPARATORS = (", ", "; ", " and ", " or ", " / ", ",")


def hand_made_listings(path: Path) -> list[str]:
    """A listing joined by hand (``", ".join(names)``, ``" and ".join(...)``) or a ``(s)`` plural, at *path*.

    A check lists through :func:`graphaudit.text.listing` (``a, b and c``, cut at a limit or not);
    a value written as code writes it goes through ``bracketed`` or ``shape_text``.

    Docstrings are documentation, not a finding's words: their ``(s)`` is left alone.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            separator = node.func.value
            if isinstance(separator, ast.Constant) and separator.value in LISTING_SEPARATORS:
                found.append(f"{path.name}:{node.lineno} a listing joined by {separator.value!r} by hand")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and re.search(r"\w\(s\)", node.value)
        ):
            found.append(f"{path.name}:{node.lineno} {node.value!r}")
    return found


def test_listings_and_plurals_go_through_the_text_layer():
    assert [hit for path in CHECK_SOURCES for hit in hand_made_listings(path)] == []


def early_returns_naming_checks(path: Path) -> list[str]:
    """``return`` / ``continue`` statements whose comment names another check (``return  # GA340's``)."""
    found = []
    tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline))
    for index, token in enumerate(tokens):
        if token.type == tokenize.COMMENT and re.search(r"\bGA\d{3}\b", token.string):
            line = [t for t in tokens[:index] if t.start[0] == token.start[0] and t.type == tokenize.NAME]
            if line and line[0].string in ("return", "continue"):
                found.append(f"{path.name}:{token.start[0]} {token.string}")
    return found


def test_no_early_return_names_another_check():
    assert [hit for path in CHECK_SOURCES for hit in early_returns_naming_checks(path)] == []


def test_every_check_declares_its_causes_and_every_cause_renders_plain_facts():
    for check in all_checks().values():
        assert check.causes, f"{check.check_id} declares no causes= (register(..., causes=(...)))"
        for cause in check.causes:
            assert cause.__doc__ and cause.__doc__ != Cause.__doc__, f"{cause.__name__} has no docstring"
    names = [cause.__name__ for check in all_checks().values() for cause in check.causes]
    assert len(names) == len(set(names)), "two checks declare causes of one name"


@dataclass(frozen=True)
class _Twice(Cause):
    """A cause whose field collides with JSON's ``kind``."""

    kind: str

    def message(self) -> str:
        return self.kind

    def fix(self) -> str:
        return "-"


def test_a_cause_is_declared_whole_or_refused():
    def run(ctx):
        """x.

        What it does: x. Why is this bad: x. Example: x. Use instead: x.
        """
        return []

    with pytest.raises(ValueError, match="causes= takes frozen dataclasses"):
        register("GA798", "not-a-cause", severity="info", causes=(str,))(run)
    with pytest.raises(ValueError, match="has a field 'kind'"):
        register("GA798", "field-named-kind", severity="info", causes=(_Twice,))(run)


def test_the_fields_are_json_and_a_finding_without_a_cause_names_no_subjects():
    @dataclass(frozen=True)
    class Odd(Cause):
        """Facts JSON lacks numbers for."""

        rate: float
        shape: tuple[int, ...]

        def message(self) -> str:
            return f"rate {self.rate}"

        def fix(self) -> str:
            return "-"

    fields = Odd(float("nan"), (2, 3)).fields()
    assert json.loads(json.dumps(fields, allow_nan=False)) == {"kind": "Odd", "rate": "nan", "shape": [2, 3]}
    bare = Finding(
        "GA201", "n", "error", "fc", "fc.weight and fc.bias", "f", subjects=("fc.weight", "fc.bias")
    )
    assert not bare.names_its_subjects() and bare.to_dict().get("cause") is None


def test_the_scans_find_what_they_look_for(tmp_path):
    """The scans above are not vacuous: each finds its pattern in a file written to have it."""
    code = tmp_path / "ga799_x.py"
    code.write_text(
        "import re\n"
        "def check(ctx, finding, names):\n"
        "    if 'above' in finding.message:\n"
        "        return  # GA721's\n"
        "    side = re.search('x', finding.message)\n"
        "    shown = ', '.join(names[:4])\n"
        "    everyone = ' and '.join(names)\n"
        "    path = '.'.join(names)\n"
        "    return f'{len(names)} parameter(s)'\n",
        encoding="utf-8",
    )
    assert len(searches_of_words(code)) == 2
    assert len(hand_made_listings(code)) == 3
    assert len(early_returns_naming_checks(code)) == 1

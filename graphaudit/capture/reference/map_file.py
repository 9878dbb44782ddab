"""A ``reference_map=`` file: pairs of port parameter -> original weight names, in JSON or TOML.

JSON: ``{"port.name": "original.name", ...}``, or the mapping as graphaudit shows it,
``{"pairs": [{"port": ..., "reference": ...}, ...]}``. TOML, as a spec is written::

    [reference_map]
    "head.dense.weight" = "classifier.weight"

    [[pairs]]                      # or the shown form, an array of tables
    port = "head.dense.bias"
    reference = "classifier.bias"

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.toml")
    >>> _ = open(path, "w").write('[reference_map]\\n"head.weight" = "fc.weight"\\n')
    >>> read_map_file("reference_map", path)
    {'head.weight': 'fc.weight'}
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from graphaudit.errors import ArgumentTypeError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["MAP_SUFFIXES", "read_map_file"]

MAP_SUFFIXES = (".json", ".toml")
_FORMS = (
    'a table [reference_map] of "port.name" = "original.name", or [[pairs]] tables of port = ... and '
    "reference = ..."
)


def read_map_file(name: str, path: str | os.PathLike[str]) -> dict[str, str]:
    """The pairs the ``.json`` or ``.toml`` file at *path* gives, checked; *name* is the option's."""
    where = os.fspath(path)
    toml = where.lower().endswith(".toml")
    kind = "TOML" if toml else "JSON"
    try:
        if toml:
            with open(where, "rb") as f:
                data = tomllib.load(f)
        else:
            with open(where, encoding="utf-8") as f:
                data = json.load(f)
    except (OSError, ValueError) as err:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ArgumentTypeError(f"{name}= {where!r} is not a readable {kind} file: {err}") from err
    if not isinstance(data, dict):
        raise ArgumentTypeError(
            f"{name}= {where!r} holds a {type(data).__name__}; it takes an object of port name -> original name"
        )
    pairs: dict[str, str] = {}
    for key, value in data.items():
        if key == "pairs" and isinstance(value, list):
            pairs.update(_listed(name, where, value))
        elif toml and key == "reference_map" and isinstance(value, dict):
            pairs.update(_table(name, where, value, "[reference_map]"))
        else:
            pairs.update(_table(name, where, {key: value}, "the top level"))
    return pairs


def _table(name: str, where: str, table: dict[str, Any], place: str) -> dict[str, str]:
    for port, original in table.items():
        if not isinstance(original, str):
            form = _FORMS if where.lower().endswith(".toml") else '{"port.name": "original.name"}'
            raise ArgumentTypeError(
                f"{name}= {where!r}: {place} pairs {port!r} with a {type(original).__name__}, not an original's "
                f"weight name; write {form}."
            )
    return dict(table)


def _listed(name: str, where: str, listed: list[Any]) -> dict[str, str]:
    pairs = {}
    for index, pair in enumerate(listed, start=1):
        if not (
            isinstance(pair, dict)
            and isinstance(pair.get("port"), str)
            and isinstance(pair.get("reference"), str)
        ):
            raise ArgumentTypeError(
                f'{name}= {where!r}: pair {index} of "pairs" is {pair!r}; each names a port parameter and an '
                'original weight: port = "head.weight", reference = "fc.weight".'
            )
        pairs[pair["port"]] = pair["reference"]
    return pairs

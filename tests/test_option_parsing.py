"""Every declared ``audit()`` option is parsed at the door by its declaration, in Python and on the CLI.

A wrong type and an out-of-range value each give an ``ArgumentError`` (``OptionError``)
naming the option: ``name=`` for ``audit()``, its ``--flag`` on the command line. The audit
stops before anything runs (no capture, no training step).
"""

from __future__ import annotations

import sys

import pytest
from mindspore import nn

import graphaudit
from graphaudit.cli import main
from graphaudit.errors import ArgumentError, OptionError
from graphaudit.evidence import all_options

OPTIONS = {name: option for name, (_, option) in all_options().items()}
NUMERIC = [name for name, option in OPTIONS.items() if option.type in (int, float)]
BOUNDED = [
    name
    for name, option in OPTIONS.items()
    if option.minimum is not None or option.above is not None or option.maximum is not None
]


#: Options whose declaration has no bounds, and a value of the right type each refuses at the door.
REFUSED = {
    "checkpoint": "/no/such.ckpt",
    "peers": ["/no/such/rank1.json"],
    "reference": "/no/such/original.safetensors",
    "reference_map": "/no/such/pairs.json",
}
#: Options that take every value of their type, and why (a new option must be in one of the tables).
UNRANGED = {
    "new_parameters": "any glob patterns: a pattern naming nothing is GA300's finding, not an error",
    "dataset": "any mindspore.dataset pipeline",
    "eval_dataset": "any mindspore.dataset pipeline",
    "label_column": "any column name: the pipeline, read later, says which it has",
    "mask_input": "any construct() argument name: the network's signature says which it has",
    "causal_input": "any construct() argument name: the network's signature says which it has",
    "missing_value": "any number can mark a missing entry",
    "grad_weights": "any list of Parameters: GA207 compares it with the optimizer's",
    "watched": "any watch's RunRecord",
    "baseline": "any path or watch record: what is not a watch's samples is a BaselineError (test_watch_baseline.py)",
}


def _wrong_type(name: str):
    option = OPTIONS[name]
    return "abc" if option.type in (int, float) else 5 if option.type is str else object()


def _out_of_range(name: str):
    option = OPTIONS[name]
    if option.minimum is not None:
        return option.type(option.minimum) - 1
    if option.above is not None:
        return option.type(option.above)
    return option.type(option.maximum) + 1


def test_every_option_says_how_its_value_is_parsed():
    """A type, a switch or a parse: no option takes any value it is given."""
    loose = [n for n, o in OPTIONS.items() if o.type is None and o.parse is None and o.cli_value != "flag"]
    assert not loose, f"options that accept anything: {loose}"
    assert "total_steps" in BOUNDED and "dataset_seconds" in BOUNDED


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_a_wrong_type_is_refused_naming_the_option(name):
    with pytest.raises(ArgumentError) as err:
        graphaudit.audit(nn.Dense(2, 2), **{name: _wrong_type(name)})
    assert isinstance(err.value, OptionError)
    assert str(err.value).startswith(f"{name}=")
    flag = OPTIONS[name].flag
    if flag is not None:
        assert err.value.text("cli").startswith(flag)


@pytest.mark.parametrize("name", BOUNDED)
def test_an_out_of_range_value_is_refused_naming_the_option(name):
    with pytest.raises(ArgumentError, match=f"^{name}= takes {OPTIONS[name].describe()}"):
        graphaudit.audit(nn.Dense(2, 2), **{name: _out_of_range(name)})


def test_every_option_has_a_range_or_says_why_it_has_none():
    """Deny by default: an option is bounded, has choices, is a switch, refuses a value below, or is listed."""
    unsaid = [
        name
        for name, option in OPTIONS.items()
        if name not in BOUNDED
        and option.choices is None
        and option.cli_value != "flag"
        and name not in REFUSED
        and name not in UNRANGED
    ]
    assert not unsaid, f"say what is out of range for these (REFUSED) or why nothing is (UNRANGED): {unsaid}"
    assert not set(REFUSED) & set(UNRANGED) and set(REFUSED) | set(UNRANGED) <= set(OPTIONS)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_value_its_parser_refuses_is_an_error_naming_the_option(name):
    with pytest.raises(ArgumentError) as err:
        graphaudit.audit(nn.Dense(2, 2), **{name: REFUSED[name]})
    assert str(err.value).startswith(f"{name}="), err.value
    assert err.value.text("cli").startswith(OPTIONS[name].flag)


def test_the_help_shows_the_type_of_every_flag_that_has_one(capsys):
    main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    typed = [o for o in OPTIONS.values() if o.flag and o.describe()]
    assert len(typed) >= 6, [o.name for o in typed]
    missing = [o.flag for o in typed if f"{' '.join(o.help.split())} ({o.describe()})" not in text]
    assert not missing, f"--help does not say what these take: {missing}"


def test_total_steps_is_checked_without_an_optimizer():
    """The value is checked when the request is built, not when (or if) the evidence is made."""
    with pytest.raises(ArgumentError, match="total_steps="):
        graphaudit.audit(nn.Dense(2, 2), total_steps="abc")


@pytest.mark.parametrize("name", [n for n in NUMERIC if OPTIONS[n].flag])
def test_the_flag_refuses_text_that_is_not_its_type(name, capsys):
    flag = OPTIONS[name].flag
    assert main(["audit", "no_such_module:build", flag, "abc"]) == 2  # before the target is loaded
    err = capsys.readouterr().err
    assert f"argument {flag}: takes {OPTIONS[name].describe()}, got 'abc'" in err


@pytest.mark.parametrize("name", [n for n in BOUNDED if OPTIONS[n].flag])
def test_the_flag_refuses_an_out_of_range_value(name, capsys):
    flag = OPTIONS[name].flag
    assert main(["audit", "no_such_module:build", flag, str(_out_of_range(name))]) == 2
    assert f"argument {flag}: takes {OPTIONS[name].describe()}" in capsys.readouterr().err


def test_the_help_shows_what_a_flag_takes(capsys):
    main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(a whole number >= 1)" in text and "(a number > 0)" in text


@pytest.fixture
def factories(tmp_path, monkeypatch):
    """A module with a network factory and a 'dataset' factory that returns a list."""
    (tmp_path / "option_factories.py").write_text(
        "from mindspore import nn\n\ndef build():\n    return nn.Dense(2, 2)\n\n"
        "def not_a_dataset():\n    return [1, 2, 3]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "option_factories"
    sys.modules.pop("option_factories", None)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--checkpoint", "/no/such.ckpt"], "argument --checkpoint: '/no/such.ckpt' is not a file"),
        (
            ["--dataset", "option_factories:not_a_dataset"],
            "error: --dataset expects a mindspore.dataset pipeline",
        ),
        (["--total-steps", "0"], "argument --total-steps: takes a whole number >= 1, got 0"),
        (["--peers", "/no/such/rank1.json"], "--peers cannot read the fingerprint file /no/such/rank1.json"),
    ],
)
def test_option_errors_from_the_command_line_are_in_its_words(factories, arguments, said, capsys):
    code = main(["audit", f"{factories}:build", *arguments])
    err = capsys.readouterr().err
    assert code == 2, err
    assert said in err
    assert not [word for word in ("checkpoint=", "dataset=", "total_steps=", "peers=") if word in err]

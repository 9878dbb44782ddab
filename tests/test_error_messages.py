"""What an error quotes from MindSpore: its explanation, not its stack for framework developers."""

import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.cli import EXIT_FORWARD, main


def test_a_forward_error_keeps_mindsporess_explanation_and_drops_its_cpp_stack():
    with pytest.raises(graphaudit.ForwardError) as caught:
        graphaudit.audit(nn.Dense(3, 4), inputs=Tensor(np.ones((2, 5), np.float32)))
    message = str(caught.value)
    assert "For 'MatMul' the input dimensions must be equal" in message
    assert "C++ Call Stack" not in message and "matmul.cc" not in message
    assert "C++ Call Stack" in str(caught.value.__cause__)  # kept where a framework developer looks


def test_the_cli_prints_the_explanation_without_the_stack(tmp_path, capsys):
    (tmp_path / "wide.py").write_text("from mindspore import nn\n\ndef net():\n    return nn.Dense(3, 4)\n")
    assert main(["audit", f"{tmp_path / 'wide.py'}:net", "--input", "2x5"]) == EXIT_FORWARD
    err = capsys.readouterr().err
    assert "For 'MatMul'" in err and "C++ Call Stack" not in err and "----" not in err

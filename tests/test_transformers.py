"""A dozen mindone.transformers LMs, audited as mindone's Trainer trains them (slow; the sweep's representatives).

Each model is built at a tiny size from its own config class and audited by
``scripts/audit_all_transformers.py:audit_model`` (the Trainer's AdamW groups and
``TrainOneStepWrapper``, token ids with ``labels``, the word-embedding tie declared when the
config ties). The clean ports get no error and no warning; the ports with a real bug get
exactly the checks that name it (see ``docs/transformers.md``); no audit changes a weight.
RWKV is issue 19's pattern 6: its ratio of sums of exponentials drew 16 GA703 warnings.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"

#: model -> the checks that report its real bugs (errors and warnings); empty: a clean port.
EXPECTED: dict[str, set[str]] = {
    "GPT2LMHeadModel": set(),
    "LlamaForCausalLM": set(),
    "PhiForCausalLM": set(),
    "OPTForCausalLM": set(),
    "GemmaForCausalLM": set(),
    "Starcoder2ForCausalLM": set(),
    "MptForCausalLM": set(),
    # GA703 no more: its divisor is a sum of exponentials. GA343: RWKV never reads its
    # attention_mask (HF design, a recurrence), so left padding reaches the real tokens; the
    # port's "attention_mask was passed, but it is unused" warning is inverted (`is None`).
    "RwkvForCausalLM": {"GA343"},
    # nn.Dropout(config.embd_pdrop): MindSpore's first argument is keep_prob, 90% dropped
    "GPTBigCodeForSequenceClassification": {"GA701"},
    # position_ids made a trainable Parameter that nothing reads (HF: a buffer)
    "XLMRobertaForSequenceClassification": {"GA302"},
    # the decoder's cross-attention, never called without an encoder: dead trainable weights
    "BlenderbotForCausalLM": {"GA301"},
    # the attention swapped in at the first forward is a new Cell, in eval mode (MindSpore's
    # default), so its dropout never drops (GA501; GA502's finding about that branch joins it);
    # the pooler is built and never used
    "BigBirdForSequenceClassification": {"GA302", "GA501"},
}


@pytest.fixture(scope="module")
def sweep() -> Any:
    pytest.importorskip("mindone")
    pytest.importorskip("transformers")
    spec = importlib.util.spec_from_file_location(
        "audit_all_transformers", SCRIPTS / "audit_all_transformers.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit_all_transformers"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_transformer_port_audited_as_the_trainer_trains_it(sweep, name):
    record = sweep.audit_model(name)
    assert record["status"] == "ok", record.get("reason")
    assert record["changed_by_audit"] == []
    found = {f["check_id"] for f in record["errors"] + record["warnings"]}
    assert found == EXPECTED[name], record["errors"] + record["warnings"]

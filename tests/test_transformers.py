"""A dozen mindone.transformers LMs, audited as mindone's Trainer trains them (slow; the sweep's representatives).

Each model is built at a tiny size from its own config class and audited by
``scripts/audit_all_transformers.py:audit_model`` (the Trainer's AdamW groups and
``TrainOneStepWrapper``, token ids with ``labels``, the word-embedding tie declared when the
config ties). The clean ports get no error and no warning; the ports with a real bug get
exactly the checks that name it (see ``docs/transformers.md``); no audit changes a weight.
RWKV is issue 19's pattern 6: its ratio of sums of exponentials drew 16 GA703 warnings.

Issue 41: the encoder-decoders and encoder-only models of the extended sweep
(``--kinds encoder-decoder,encoder``, ``scripts/transformer_sweep.py``), each in the recipes
that matter: ``plain`` (the model on ``input_ids``/``attention_mask``/``decoder_input_ids``),
``trainer``, ``onestep`` (``nn.TrainOneStepCell`` around a loss cell returning the model's own
loss) and ``spec`` (audited against ``Spec.from_net`` of itself). Before issue 41 every T5 audit
had a false GA341 at the encoder.
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


#: (model, recipe) -> the checks that report its real bugs; empty: clean (issue 41's extended sweep).
EXPECTED_RECIPES: dict[tuple[str, str], set[str]] = {
    # T5 in every recipe: its encoder attends both ways by design, its decoder is causal
    ("T5ForConditionalGeneration", "plain"): set(),
    ("T5ForConditionalGeneration", "trainer"): set(),
    ("T5ForConditionalGeneration", "onestep"): set(),
    ("T5ForConditionalGeneration", "spec"): set(),
    ("BartForConditionalGeneration", "trainer"): set(),
    ("BartForConditionalGeneration", "spec"): set(),
    ("MarianMTModel", "onestep"): set(),
    # the port reads its encoder's sinusoidal positions through a copy
    # (`mindspore.tensor(self.embed_positions.embedding_table)`) and leaves them trainable (HF
    # freezes them): a trained parameter that no gradient reaches, which AdamW's decay shrinks
    ("WhisperForConditionalGeneration", "trainer"): {"GA301"},
    ("DistilBertForMaskedLM", "trainer"): set(),
    ("AlbertForSequenceClassification", "trainer"): set(),
    # GA104: `decoder.bias = bias` ties the MLM head's output bias, real sharing the sweep does
    # not declare; GA302: the pooler is built but the MLM head reads the sequence output
    ("BertForMaskedLM", "trainer"): {"GA104", "GA302"},
}


@pytest.mark.parametrize(("name", "recipe"), sorted(EXPECTED_RECIPES))
def test_encoder_decoders_and_encoders_audited_in_each_recipe(sweep, name, recipe):
    record = sweep.audit_model(name, recipe)
    assert record["status"] == "ok", record.get("reason")
    assert record["changed_by_audit"] == []
    found = {f["check_id"] for f in record["errors"] + record["warnings"]}
    assert found == EXPECTED_RECIPES[(name, recipe)], record["errors"] + record["warnings"]

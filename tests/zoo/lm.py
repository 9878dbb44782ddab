"""mindone 0.5: tiny HF-style transformer LMs (GPT-2, LLaMA, BERT-MLM) trained by mindone's own Trainer.

The models are ``mindone.transformers`` classes (MindSpore ports of HF transformers 4.57)
built from ``transformers`` configs written here: a vocabulary of 128, 2 layers of width 32,
tied input/output embeddings (``lm_head.weight`` *is* ``wte.embedding_table``). Random
initialisation, nothing downloaded.

The optimizer and the training wrapper are made by ``mindone.transformers.Trainer`` itself:
``create_optimizer_and_scheduler`` (``AdamWeightDecay``, two groups: weight decay on the
weights, none on biases and LayerNorm parameters, a linear schedule) and ``_wrap_model``
(``TrainOneStepWrapper(LossWithScaleSense(ReturnLoss(model)))``: a static loss scale of 1024,
global-norm gradient clipping). The batch is what ``Trainer._prepare_inputs_ms`` makes of a
dict batch: the model's ``construct`` arguments by position. Every import of mindone and
transformers is inside a function.
"""

from __future__ import annotations

import inspect
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

VOCAB, SEQ, BATCH = 128, 16, 2


def configs() -> dict[str, tuple[Any, Any]]:
    """``name -> (model class, config)``."""
    import transformers
    from mindone.transformers import BertForMaskedLM, GPT2LMHeadModel, LlamaForCausalLM

    return {
        "gpt2": (
            GPT2LMHeadModel,
            transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2),
        ),
        "llama": (
            LlamaForCausalLM,
            transformers.LlamaConfig(
                vocab_size=VOCAB,
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=2,
                max_position_embeddings=64,
                tie_word_embeddings=True,
            ),
        ),
        "bert": (
            BertForMaskedLM,
            transformers.BertConfig(
                vocab_size=VOCAB,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
                max_position_embeddings=64,
            ),
        ),
    }


def embedding_weight(cell: Any) -> Any:
    """``mint.nn.Embedding`` calls it ``weight``, ``mindspore.nn.Embedding`` ``embedding_table``."""
    return cell.weight if "weight" in cell._params else cell.embedding_table


def tied_pair(name: str, model: Any) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """The two attribute paths (and cells) of the tied embedding: the output head and the input embedding."""
    if name == "gpt2":
        return ("lm_head", model.lm_head), ("transformer.wte", model.transformer.wte)
    if name == "llama":
        return ("lm_head", model.lm_head), ("model.embed_tokens", model.model.embed_tokens)
    return ("cls.predictions.decoder", model.cls.predictions.decoder), (
        "bert.embeddings.word_embeddings",
        model.bert.embeddings.word_embeddings,
    )


@dataclass
class LmSetup:
    name: str
    model: Any
    trainer: Any
    optimizer: Any
    train_model: Any  # TrainOneStepWrapper(LossWithScaleSense(ReturnLoss(model)), optimizer)
    inputs: tuple[Any, ...]  # construct()'s arguments by position, as the Trainer passes them


def build_model(name: str) -> Any:
    import mindspore as ms

    cls, config = configs()[name]
    ms.set_seed(0)
    return cls(config)


#: One folder for every Trainer of the session, removed when the tests' process ends.
_OUTPUT = tempfile.TemporaryDirectory(prefix="graphaudit-mindone-")


def trainer_for(model: Any) -> Any:
    """mindone's Trainer with the arguments of a fine-tuning run (lr 1e-3, weight decay 0.01, clipping 1.0)."""
    from mindone.transformers import Trainer, TrainingArguments

    args = TrainingArguments(
        output_dir=_OUTPUT.name,  # save_strategy="no": the Trainer writes nothing there
        learning_rate=1e-3,
        weight_decay=0.01,
        max_grad_norm=1.0,
        per_device_train_batch_size=BATCH,
        warmup_steps=0,
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
    )
    return Trainer(model=model, args=args)


def positional_inputs(trainer: Any, model: Any) -> tuple[Any, ...]:
    """One batch of ``input_ids``/``attention_mask``/``labels`` as the Trainer hands it to the wrapper."""
    import mindspore as ms
    from mindspore import Tensor

    ids = np.random.default_rng(0).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)
    batch = {"input_ids": ids, "attention_mask": np.ones((BATCH, SEQ), np.int32), "labels": ids}
    try:
        return tuple(trainer._prepare_inputs_ms(dict(batch)))
    except AssertionError:
        # LLaMA's construct takes **kwargs, which _prepare_inputs_ms refuses: the same tuple by hand.
        keys = [k for k in inspect.signature(model.construct).parameters if k not in ("self", "kwargs")]
        n = max(keys.index(k) for k in batch) + 1
        return tuple(Tensor(batch[k], ms.int32) if k in batch else None for k in keys[:n])


def build(name: str, model: Any = None, frozen_while_building: str | None = None) -> LmSetup:
    """What the Trainer builds before its first step; *model* replaces a fresh one (injected bugs).

    *frozen_while_building*: the parameters under this attribute path have
    ``requires_grad=False`` while the Trainer builds its optimizer (which takes only trainable
    parameters) and ``True`` again afterwards: a layer frozen for a warm-up and unfrozen by hand.
    """
    model = build_model(name) if model is None else model
    trainer = trainer_for(model)
    frozen = [
        p
        for n, p in model.parameters_and_names()
        if frozen_while_building and n.startswith(frozen_while_building)
    ]
    for param in frozen:
        param.requires_grad = False
    trainer.create_optimizer_and_scheduler(num_training_steps=10)
    for param in frozen:
        param.requires_grad = True
    _, train_model = trainer._wrap_model(trainer.model)
    train_model.set_train(True)
    return LmSetup(name, model, trainer, trainer.optimizer, train_model, positional_inputs(trainer, model))

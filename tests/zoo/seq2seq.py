"""mindone 0.5: HF-style encoder-decoders (T5, BART), built tiny on CPU from configs written here.

For the dependency probe's encoder-decoder tests (``tests/test_dependency_zoo.py``): each is
built from its ``transformers`` config at a vocabulary of 128, 2 layers of width 32 (random
initialisation, nothing downloaded). :func:`plain_inputs` is a batch as ``generate`` and an
evaluation loop run it (``input_ids``, ``attention_mask``, ``decoder_input_ids``: a source of
12 tokens, a target of 8); :func:`trainer_setup` is mindone's Trainer, its optimizer and
wrapper, and a batch of ``input_ids``, ``attention_mask`` and ``labels`` (which the model
shifts right into its decoder's input). The shims of :func:`zoo.shims.for_mindone` and
:func:`zoo.causal_lms.cpu_initialisers` are applied around building; the first also around
auditing. Every import of mindone and transformers is inside a function.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

VOCAB, SOURCE, TARGET, BATCH = 128, 12, 8, 2

#: ``name -> (mindone class, transformers config class, config keywords)``.
MODELS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "t5": (
        "T5ForConditionalGeneration",
        "T5Config",
        {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_heads": 4, "decoder_start_token_id": 0},
    ),
    "bart": (
        "BartForConditionalGeneration",
        "BartConfig",
        {
            "d_model": 32,
            "encoder_layers": 2,
            "decoder_layers": 2,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 64,
            "decoder_ffn_dim": 64,
            "max_position_embeddings": 64,
        },
    ),
}


def build(name: str) -> Any:
    """The model *name* of :data:`MODELS`, built at tiny size, in training mode."""
    import mindone.transformers as mindone_transformers
    import mindspore as ms
    import transformers

    from zoo.causal_lms import cpu_initialisers

    cls_name, config_name, extra = MODELS[name]
    config = getattr(transformers, config_name)(vocab_size=VOCAB, pad_token_id=0, **extra)
    config._attn_implementation = "eager"
    ms.set_seed(0)
    with cpu_initialisers():
        model = getattr(mindone_transformers, cls_name)(config)
    model.set_train(True)
    return model


def _tokens(length: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, VOCAB, (BATCH, length)).astype(np.int32)


def plain_inputs() -> tuple[Any, Any, Any]:
    """``(input_ids, attention_mask, decoder_input_ids)``: sources of 12 tokens, targets of 8, no padding."""
    from mindspore import Tensor

    return Tensor(_tokens(SOURCE, 0)), Tensor(np.ones((BATCH, SOURCE), np.int32)), Tensor(_tokens(TARGET, 1))


def trainer_setup(model: Any) -> tuple[Any, tuple[Any, ...]]:
    """mindone's Trainer wrapper of *model* and one batch as the Trainer hands it over (labels, no decoder input)."""
    import mindspore as ms
    from mindspore import Tensor

    from zoo.lm import trainer_for

    trainer = trainer_for(model)
    trainer.create_optimizer_and_scheduler(num_training_steps=10)
    _, train_model = trainer._wrap_model(trainer.model)
    train_model.set_train(True)
    batch = {
        "input_ids": _tokens(SOURCE, 0),
        "attention_mask": np.ones((BATCH, SOURCE), np.int32),
        "labels": _tokens(TARGET, 1),
    }
    keys = [k for k in inspect.signature(model.construct).parameters if k not in ("self", "kwargs")]
    n = max(keys.index(k) for k in batch) + 1
    return train_model, tuple(Tensor(batch[k], ms.int32) if k in batch else None for k in keys[:n])

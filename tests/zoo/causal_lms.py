"""mindone 0.5: a handful of other HF-style ``*ForCausalLM`` ports, built tiny on CPU from configs written here.

For the dependency probe's sweep (``tests/test_dependency_zoo.py``): each is built from its
``transformers`` config at a vocabulary of 128, 2 layers of width 32 (random initialisation,
nothing downloaded) and run bare, as ``model(input_ids, attention_mask)``. The shims of
:func:`zoo.shims.for_mindone` must be applied around building and auditing. Every import of
mindone and transformers is inside a function.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

VOCAB, SEQ, BATCH = 128, 16, 2

_COMMON = {
    "vocab_size": VOCAB,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 64,
}

#: ``name -> (mindone class, transformers config class, config keywords beyond the common ones)``.
#: Left out, as they do not run on CPU in MindSpore 2.10: Qwen2 (RmsNorm kernel), Qwen3
#: (its cache), CodeGen (einsum is Ascend-only), Bloom and Falcon (their forward fails on the cache).
MODELS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "mistral": ("MistralForCausalLM", "MistralConfig", {}),
    "gemma": ("GemmaForCausalLM", "GemmaConfig", {"head_dim": 8}),
    "phi": ("PhiForCausalLM", "PhiConfig", {"num_key_value_heads": 4}),
    "opt": ("OPTForCausalLM", "OPTConfig", {"ffn_dim": 64, "word_embed_proj_dim": 32}),
    "gpt_neox": ("GPTNeoXForCausalLM", "GPTNeoXConfig", {}),
    "stablelm": ("StableLmForCausalLM", "StableLmConfig", {}),
    "olmo": ("OlmoForCausalLM", "OlmoConfig", {}),
}


@contextmanager
def cpu_initialisers() -> Iterator[None]:
    """``Tensor.normal_``/``zero_``/``fill_`` written with NumPy while a model is built.

    The ports' ``_init_weights`` call these in-place ``mint`` methods, whose kernels
    (InplaceNormal, InplaceZero, InplaceFillScalar) MindSpore 2.10 lacks on CPU. Only the
    initial values are drawn differently (NumPy's generator, seeded); put back on exit.
    """
    import mindspore as ms
    from mindspore import Tensor

    from zoo.shims import Patches

    rng = np.random.default_rng(0)

    def write(tensor: Any, values: np.ndarray) -> Any:
        tensor.assign_value(Tensor(values.astype(np.float32)).astype(tensor.dtype))
        return tensor

    def normal_(self: Any, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
        return write(self, rng.normal(mean, std, self.shape))

    def zero_(self: Any) -> Any:
        return write(self, np.zeros(self.shape))

    def fill_(self: Any, value: Any) -> Any:
        return write(self, np.full(self.shape, float(value)))

    patches = Patches()
    for name, method in (("normal_", normal_), ("zero_", zero_), ("fill_", fill_)):
        patches.set(ms.Tensor, name, method)
    try:
        yield
    finally:
        patches.restore()


def build(name: str) -> Any:
    """The model *name* of :data:`MODELS`, built at tiny size, in inference mode (as loaded for serving)."""
    import mindone.transformers as mindone_transformers
    import mindspore as ms
    import transformers

    cls_name, config_name, extra = MODELS[name]
    config = getattr(transformers, config_name)(**{**_COMMON, **extra})
    config._attn_implementation = "eager"
    ms.set_seed(0)
    with cpu_initialisers():
        model = getattr(mindone_transformers, cls_name)(config)
    model.set_train(False)
    return model


def inputs() -> tuple[Any, Any]:
    """``(input_ids, attention_mask)``: a batch of 2 random sequences of 16 tokens, no padding."""
    from mindspore import Tensor

    ids = np.random.default_rng(0).integers(0, VOCAB, (BATCH, SEQ)).astype(np.int32)
    return Tensor(ids), Tensor(np.ones((BATCH, SEQ), np.int32))

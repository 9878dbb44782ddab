"""Run graphaudit.audit over every mindone.transformers LM class that builds on this CPU, and summarise.

Every ``*ForCausalLM`` class of ``mindone.transformers`` (and the ``*ForSequenceClassification``
/ ``*ForMaskedLM`` of the same families) is built at a tiny size from its own config class
(a vocabulary of 128, 2 layers of width 32, 4 heads, 2 key/value heads, 4 experts: only the
fields the config has are set), randomly initialised, nothing downloaded, and audited as
mindone's ``Trainer`` trains it: the optimizer of ``Trainer.create_optimizer_and_scheduler``
(AdamW with weight decay on the weights only), the wrapper of ``Trainer._wrap_model``
(``TrainOneStepWrapper(LossWithScaleSense(ReturnLoss(model)))``), a batch of token ids with
``labels`` (the model's own loss: the causal-LM loss on the logits, the masked-LM loss, or
cross-entropy over the classes), and, when the config ties the word embeddings and the
model does tie them, that tie declared in a ``Spec``.

Per model the record says how far it got: ``build_failed``, ``forward_failed`` (the model's
plain forward pass, without graphaudit, fails on this CPU: the reason names the missing
kernel), ``crash`` (graphaudit raised: a graphaudit bug), ``timeout``, or ``ok`` (audited:
its errors and warnings). Kernels MindSpore 2.10's CPU backend lacks are replaced by shims
that change how a value is computed, never the graph (``tests/zoo/shims.py`` and
:func:`sweep_shims` here); they are active only inside this script and the tests.

Results are appended to ``results.jsonl`` in ``--out`` as models finish (a re-run resumes);
``summary.md`` is written from them. :func:`built_models` yields the built models for other
scripts (``for name, model, config in built_models(): ...``, inside :func:`shims`).

Usage::

    GLOG_v=3 PYTHONPATH=. python scripts/audit_all_transformers.py --out /tmp/tf-audit
    python scripts/audit_all_transformers.py --out /tmp/tf-audit --models GPT2LMHeadModel,RwkvForCausalLM
    python scripts/audit_all_transformers.py --out /tmp/tf-audit --summarize-only
    python scripts/audit_all_transformers.py --out /tmp/tf-decoder --is-decoder --models BertLMHeadModel
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # zoo.shims: the MindSpore 2.10 shims of the zoo tests
sys.path.insert(0, str(ROOT / "scripts"))  # transformer_sweep: the other kinds and recipes
import transformer_sweep  # noqa: E402

VOCAB, SEQ, BATCH, CLASSES = 128, 8, 2, 3
DEFAULT_TIMEOUT = 300.0
RESTART_EVERY = 8
KINDS = ("ForCausalLM", "ForSequenceClassification", "ForMaskedLM")
IS_DECODER = "GRAPHAUDIT_SWEEP_IS_DECODER"  # set by --is-decoder, read by the workers

#: The tiny size, by the config fields' usual names (only the fields a config has are set).
TINY: dict[str, Any] = {
    "vocab_size": VOCAB,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "max_position_embeddings": 64,
    "n_positions": 64,
    "n_ctx": 64,
    "embedding_size": 32,
    "d_model": 32,
    "ffn_dim": 64,
    "decoder_ffn_dim": 64,
    "encoder_ffn_dim": 64,
    "decoder_layers": 2,
    "encoder_layers": 2,
    "decoder_attention_heads": 4,
    "encoder_attention_heads": 4,
    "num_layers": 2,
    "num_heads": 4,
    "num_experts": 4,
    "num_local_experts": 4,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32,
    "moe_num_experts": 4,
    "moe_k": 2,
    "first_k_dense_replace": 1,
    "kv_lora_rank": 16,
    "q_lora_rank": 16,
    "qk_rope_head_dim": 4,
    "qk_nope_head_dim": 4,
    "v_head_dim": 8,
    "state_size": 4,
    "time_step_rank": 4,
    "attention_hidden_size": 32,
    "attention_head_size": 8,
    "rotary_dim": 4,
    "partial_rotary_factor": 0.5,
    "sliding_window": 16,
    "num_labels": CLASSES,
    "pad_token_id": 0,
    "type_vocab_size": 2,
    "ngram_vocab_size": 16,
    "bucket_size": 8,
}

# ---------------------------------------------------------------------------- shims


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, (tuple, list)) else value


def conv2d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """``mint.nn.functional.conv2d`` (Conv2DExt) on the ``ops.conv2d`` kernel."""
    from mindspore import ops

    if isinstance(padding, str):
        return ops.conv2d(input, weight, bias, stride, padding, 0, dilation, groups)
    pad = (padding, padding) if isinstance(padding, int) else tuple(padding)
    return ops.conv2d(input, weight, bias, stride, "pad", pad, dilation, groups)


def conv1d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """``mint.nn.functional.conv1d`` (Conv2DExt): the same convolution as a 1xK ``ops.conv2d``."""
    from mindspore import ops

    if isinstance(padding, str):
        pad_mode, pad = padding, 0
    else:
        p = int(_first(padding))
        pad_mode, pad = "pad", (0, p)
    out = ops.conv2d(
        input.expand_dims(2),
        weight.expand_dims(2),
        None,
        (1, int(_first(stride))),
        pad_mode,
        pad,
        (1, int(_first(dilation))),
        groups,
    ).squeeze(2)
    return out if bias is None else out + bias.reshape(1, -1, 1)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """``mint.nn.functional.one_hot`` (OneHotExt) on the ``ops.one_hot`` kernel."""
    import mindspore as ms
    from mindspore import Tensor, ops

    depth = int(tensor.max().item()) + 1 if num_classes == -1 else int(num_classes)
    return ops.one_hot(tensor, depth, Tensor(1, ms.int64), Tensor(0, ms.int64))


def einsum(equation: str, *operands: Any) -> Any:
    """``mint.einsum`` (no CPU kernel): each operand's axes aligned by letter, multiplied, summed.

    Differentiable and exact (a broadcast product and a sum); memory grows with the product
    of every letter's size, which is small at the sweep's tiny sizes.
    """
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    lhs, _, out = equation.partition("->")
    terms = lhs.split(",")
    spare = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ellipsis = ""
    for i, (term, t) in enumerate(zip(terms, operands)):
        if "..." in term:
            width = t.ndim - (len(term) - 3)
            while len(ellipsis) < width:
                ellipsis += next(spare)
            terms[i] = term.replace("...", ellipsis[len(ellipsis) - width :])
    if not _:
        counts = {c: "".join(terms).count(c) for c in "".join(terms)}
        out = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis))
    else:
        out = out.replace("...", ellipsis)
    letters = list(dict.fromkeys("".join(terms)))
    product = None
    for term, t in zip(terms, operands):
        order = sorted(range(len(term)), key=lambda i: letters.index(term[i]))
        t = t.transpose(tuple(order)) if order != list(range(len(term))) else t
        present = [term[i] for i in order]
        shape, k = [], 0
        for letter in letters:
            if letter in present:
                shape.append(t.shape[k])
                k += 1
            else:
                shape.append(1)
        t = t.reshape(tuple(shape))
        product = t if product is None else product * t
    summed = tuple(i for i, c in enumerate(letters) if c not in out)
    if summed:
        product = product.sum(axis=summed)
    kept = [c for c in letters if c in out]
    order = tuple(kept.index(c) for c in out)
    return product.transpose(order) if order != tuple(range(len(order))) else product


@contextlib.contextmanager
def sweep_shims() -> Iterator[None]:
    """CPU kernels MindSpore 2.10 lacks that the mindone ports call, on top of ``zoo.shims.for_mindone``.

    Each replaces how a value is computed (a NumPy or ``ops`` equivalent), never the graph:
    the in-place initialisers ``Tensor.normal_``/``uniform_``/``zero_`` used while building
    (their values come from NumPy's generator, written with ``assign_value``; on this CPU
    a slice of ``.data`` is a copy, so ``weight.data[padding_idx].zero_()`` leaves the
    padding row random, as it already does without the shim), the in-place
    ``bitwise_or_``/``bitwise_and_`` of the attention masks, ``mint.rand``/``randn`` (LayerDrop,
    Mamba's initial time steps: NumPy values), and ``mint.topk`` (MoE routing: ``ops.topk``
    over the last axis, the same values and indices), ``mint.einsum`` (:func:`einsum`),
    ``one_hot`` (OneHotExt) and the ``conv1d``/``conv2d`` of ``mint`` (Conv2DExt, on the
    ``ops.conv2d`` kernel, also inside ``mint.nn.Conv1d``/``Conv2d``), ``Tensor.fill_`` (a
    NumPy write), ``mint.stack``, ``mint.nonzero``, ``mint.normal``, ``mint.bitwise_xor`` and
    ``mint.log``/``expm1`` on integer tensors (cast to float32 first, as the Ascend kernel does),
    and the encoder-decoders' (``transformer_sweep_shims.py``).
    """
    import mindspore as ms
    import numpy as np
    import transformer_sweep_shims
    from mindspore import Tensor, mint, ops
    from zoo.shims import Patches, _number

    patches = Patches()
    rng = np.random.default_rng(0)

    def _write(tensor: Tensor, values: Any) -> Tensor:
        tensor.assign_value(Tensor(np.asarray(values).astype(tensor.asnumpy().dtype)))
        return tensor

    def _inplace(name: str, compute: Any) -> None:
        # Replaced outright: the kernels fail asynchronously, after the call has returned.
        patches.set(Tensor, name, lambda self, *args, **kwargs: _write(self, compute(self, *args, **kwargs)))

    _inplace("normal_", lambda t, mean=0.0, std=1.0, **_: rng.normal(mean, std, t.shape))
    _inplace("uniform_", lambda t, a=0.0, b=1.0, **_: rng.uniform(a, b, t.shape))
    _inplace("zero_", lambda t, **_: np.zeros(t.shape))
    _inplace("bitwise_or_", lambda t, other: t.asnumpy() | other.asnumpy())
    _inplace("bitwise_and_", lambda t, other: t.asnumpy() & other.asnumpy())
    transformer_sweep_shims.more_shims(patches, _inplace)  # the kernels the encoder-decoders call

    def _shape(size: Any) -> tuple[int, ...]:
        if len(size) == 1 and not isinstance(size[0], int):
            size = tuple(size[0])
        return tuple(int(_number(s)) for s in size)

    def rand(*size: Any, generator: Any = None, dtype: Any = None) -> Tensor:
        return Tensor(rng.random(_shape(size)), dtype or ms.float32)

    def randn(*size: Any, generator: Any = None, dtype: Any = None) -> Tensor:
        return Tensor(rng.standard_normal(_shape(size)), dtype or ms.float32)

    def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        dim = dim % input.ndim
        moved = input if dim == input.ndim - 1 else input.swapaxes(dim, -1)
        values, indices = ops.topk(moved if largest else -moved, int(_number(k)), sorted=sorted)
        values = values if largest else -values
        if dim != input.ndim - 1:
            values, indices = values.swapaxes(dim, -1), indices.swapaxes(dim, -1)
        return values, indices.astype(ms.int64)

    for name, function in {
        "rand": rand,
        "randn": randn,
        "topk": topk,
        "rand_like": lambda input, **k: rand(tuple(input.shape), dtype=input.dtype),
        "randn_like": lambda input, **k: randn(tuple(input.shape), dtype=input.dtype),
    }.items():
        patches.set(mint, name, function)
    patches.set(mint, "einsum", einsum)
    _inplace("fill_", lambda t, value: np.full(t.shape, _number(value)))
    from mindspore.mint.nn.layer import conv as mint_conv
    from mindspore.ops.operations import NonZero

    def floating(function: Any) -> Any:
        def call(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
            if not ops.is_floating_point(input):  # Log/Expm1 have no integer CPU kernel
                input = input.astype(ms.float32)
            return function(input, *args, **kwargs)

        return call

    def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
        found = NonZero()(input)
        return tuple(found[:, i] for i in range(found.shape[1])) if as_tuple else found

    for name, function in {
        "stack": lambda tensors, dim=0: ops.stack(tuple(tensors), dim),
        "log": floating(ops.log),
        "expm1": floating(ops.expm1),
        "normal": lambda mean=0.0, std=1.0, size=None, *, generator=None: Tensor(
            rng.normal(_number(mean), _number(std), _shape(tuple(size) if size is not None else (1,))),
            ms.float32,
        ),
        "nonzero": nonzero,
        "bitwise_xor": lambda input, other: ops.bitwise_xor(input, other),
    }.items():
        patches.set(mint, name, function)
    patches.set(Tensor, "nonzero", lambda self, *, as_tuple=False: nonzero(self, as_tuple=as_tuple))
    for name, function in {
        "conv2d_ext_op": conv2d,
        "conv2d_padding_op": conv2d,
        "conv1d_ext_op": conv1d,
        "conv1d_padding_op": conv1d,
    }.items():
        patches.set(mint_conv, name, function)
    functional = mint.nn.functional
    for name, function in {"one_hot": one_hot, "conv1d": conv1d, "conv2d": conv2d}.items():
        patches.set(functional, name, function)
    patches.set(
        mint.nn.Conv1d,
        "construct",
        lambda self, x: conv1d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        ),
    )
    patches.set(
        mint.nn.Conv2d,
        "construct",
        lambda self, x: conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        ),
    )
    try:
        yield
    finally:
        patches.restore()


@contextlib.contextmanager
def shims() -> Iterator[None]:
    """Every shim the sweep needs: ``zoo.shims.for_mindone`` and :func:`sweep_shims`."""
    from zoo import shims as zoo_shims

    with zoo_shims.for_mindone(), sweep_shims():
        yield


# ---------------------------------------------------------------------------- building


def candidate_classes() -> list[str]:
    """Every ``*ForCausalLM``, and the ``*ForSequenceClassification``/``*ForMaskedLM`` of the same families."""
    import mindone.transformers as mt

    names = [n for n in dir(mt) if not n.startswith("Auto")]
    causal = sorted(n for n in names if n.endswith("ForCausalLM"))
    families = {n[: -len("ForCausalLM")] for n in causal} | {"GPT2"}  # GPT2's causal LM is GPT2LMHeadModel
    causal += ["GPT2LMHeadModel"] if "GPT2LMHeadModel" in names else []
    others = sorted(
        n for n in names for kind in KINDS[1:] if n.endswith(kind) and n[: -len(kind)] in families
    )
    return causal + others


def tiny_config(cls: Any, extra: dict[str, Any] | None = None) -> Any:
    """The model's own config class at the tiny size (*extra*: more fields, set when the config has them)."""
    config_class = cls.config_class
    default = config_class()
    wanted = {k: v for k, v in {**TINY, **(extra or {})}.items() if hasattr(default, k)}
    if "head_dim" in wanted and "hidden_size" in wanted:
        wanted["head_dim"] = wanted["hidden_size"] // wanted.get("num_attention_heads", 4)
    layer_types = getattr(default, "layer_types", None)
    if isinstance(layer_types, list) and layer_types:
        wanted["layer_types"] = [layer_types[i % len(layer_types)] for i in range(2)]
    try:
        config = config_class(**wanted)
    except Exception:
        config = config_class()
        for key, value in wanted.items():
            with contextlib.suppress(Exception):
                setattr(config, key, value)
    return config


def build_model(name: str) -> tuple[Any, Any]:
    import mindone.transformers as mt
    import mindspore as ms

    cls = getattr(mt, name)
    config = tiny_config(cls)
    if os.environ.get(IS_DECODER) == "1" and name.endswith("ForCausalLM"):
        # An encoder family's *ForCausalLM (BERT, RoBERTa, ...) attends both ways unless
        # is_decoder=True (the port warns): --is-decoder builds them as one trains a causal LM.
        config.is_decoder = True
    ms.set_seed(0)
    return cls(config), config


def built_models(names: list[str] | None = None) -> Iterator[tuple[str, Any, Any]]:
    """``(class name, model, config)`` of every candidate that builds (call it inside :func:`shims`)."""
    for name in names or candidate_classes():
        try:
            model, config = build_model(name)
        except Exception:
            continue
        yield name, model, config


_OUTPUT = tempfile.TemporaryDirectory(prefix="graphaudit-transformers-")


def trainer_wrap(model: Any) -> tuple[Any, Any]:
    """mindone's Trainer of *model* and its training wrapper (its optimizer inside), in training mode."""
    from mindone.transformers import Trainer, TrainingArguments

    args = TrainingArguments(
        output_dir=_OUTPUT.name,
        learning_rate=1e-3,
        weight_decay=0.01,
        max_grad_norm=1.0,
        per_device_train_batch_size=BATCH,
        warmup_steps=0,
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
    )
    trainer = Trainer(model=model, args=args)
    try:
        trainer.create_optimizer_and_scheduler(num_training_steps=10)
    except ValueError as err:
        if "must not be empty" not in str(err):
            raise
        # mindone's Trainer always makes two groups; with no bias or LayerNorm parameter the
        # no-decay group is empty and MindSpore's optimizer refuses it. The same optimizer
        # and groups, the empty one left out.
        decay = set(trainer.get_decay_parameter_names(model))
        groups = [
            {
                "params": [
                    p for n, p in model.parameters_and_names() if (n in decay) == wanted and p.requires_grad
                ],
                "weight_decay": args.weight_decay if wanted else 0.0,
            }
            for wanted in (True, False)
        ]
        optimizer_cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(args, model)
        kwargs["learning_rate"] = trainer.create_scheduler(num_training_steps=10)
        trainer.optimizer = optimizer_cls([g for g in groups if g["params"]], **kwargs)
    _, train_model = trainer._wrap_model(trainer.model)
    train_model.set_train(True)
    return trainer, train_model


def trainer_setup(name: str, model: Any) -> tuple[Any, Any, tuple[Any, ...]]:
    """mindone's Trainer: its optimizer, its wrapper, and one batch as it hands it to the wrapper."""
    import mindspore as ms
    import numpy as np
    from mindspore import Tensor

    trainer, train_model = trainer_wrap(model)
    rng = np.random.default_rng(0)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype(np.int32)
    labels = rng.integers(0, CLASSES, (BATCH,)).astype(np.int32) if name.endswith(KINDS[1]) else ids
    batch = {"input_ids": ids, "attention_mask": np.ones((BATCH, SEQ), np.int32), "labels": labels}
    keys = [k for k in inspect.signature(model.construct).parameters if k not in ("self", "kwargs")]
    n = max(keys.index(k) for k in batch if k in keys) + 1
    inputs = tuple(Tensor(batch[k], ms.int32) if k in batch else None for k in keys[:n])
    return trainer, train_model, inputs


def declared_tie(model: Any, config: Any, prefix: str = "network.model.") -> list[list[str]]:
    """The word-embedding tie, as paths in the audited network, when the config ties and the model does.

    *prefix* is the model's path in the audited network (the Trainer's wrapper: ``network.model.``).
    """
    if not getattr(config, "tie_word_embeddings", False):
        return []
    try:
        head, embed = model.get_output_embeddings(), model.get_input_embeddings()
    except Exception:
        return []
    if head is None or embed is None:
        return []
    paths = {id(cell): path for path, cell in model.cells_and_names()}
    if id(head) not in paths or id(embed) not in paths:
        return []
    head_w = head.weight
    embed_w = embed.weight if "weight" in embed._params else getattr(embed, "embedding_table", None)
    if head_w is not embed_w:
        return []  # the port does not tie: graphaudit's GA103 reports it (a real finding)
    head_name = next(n for n, p in head._params.items() if p is head_w)
    embed_name = next(n for n, p in embed._params.items() if p is embed_w)
    return [[f"{prefix}{paths[id(head)]}.{head_name}", f"{prefix}{paths[id(embed)]}.{embed_name}"]]


def first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[0] if lines else ''}"[:300]


def _finding(finding: Any) -> dict[str, str]:
    return {
        "check_id": finding.check_id,
        "name": finding.name,
        "subject": finding.subject,
        "message": finding.message[:500],
    }


def audit_model(name: str, recipe: str = "trainer") -> dict[str, Any]:
    """Build, run and audit *name* as *recipe* sets it up; a JSON-able record of how far it got.

    The causal LMs' ``trainer`` recipe is here; every other kind and recipe is in
    ``transformer_sweep.py`` (which calls :func:`audit_built` too).
    """
    import mindspore as ms

    import graphaudit

    if recipe != "trainer" or kind_of(name) != "causal":
        import transformer_sweep

        return transformer_sweep.audit_job(sys.modules[__name__], name, recipe)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    record: dict[str, Any] = {"model": name, "status": None}
    with shims():
        start = time.perf_counter()
        try:
            model, config = build_model(name)
        except Exception as err:
            record.update(
                status="build_failed", reason=first_line(err), traceback=traceback.format_exc()[-2000:]
            )
            return record
        record["build_seconds"] = round(time.perf_counter() - start, 1)
        record["parameters"] = int(sum(int(p.size) for p in model.get_parameters()))
        try:
            _trainer, train_model, inputs = trainer_setup(name, model)
        except Exception as err:
            record.update(
                status="build_failed",
                reason=f"Trainer: {first_line(err)}",
                traceback=traceback.format_exc()[-2000:],
            )
            return record
        tie = declared_tie(model, config)
        record["tie_declared"] = tie
        spec = graphaudit.Spec(shared_parameters=tie) if tie else None
        # The dependency probe (GA340-GA343) runs on the batch of 2: the causal LMs are
        # recognised by their class name, and the attention mask is named when passed.
        mask = {"mask_input": "attention_mask"} if "attention_mask" in mask_keys(model, inputs) else {}
        return audit_built(record, model, train_model, inputs, lambda: model(*inputs), spec=spec, **mask)


def kind_of(name: str) -> str:
    """``causal`` for the classes :func:`candidate_classes` sweeps, else the kind ``transformer_sweep`` gives."""
    import transformer_sweep

    return transformer_sweep.kind_of(name)


def audit_built(
    record: dict[str, Any],
    model: Any,
    audited: Any,
    inputs: tuple[Any, ...],
    forward: Any,
    **options: Any,
) -> dict[str, Any]:
    """Run *forward* (the model's own pass, without graphaudit), then audit *audited* on *inputs*.

    *record* gets ``forward_failed`` (the model itself fails on this CPU), ``crash`` (graphaudit
    raised) or ``ok`` with the findings, and ``changed_by_audit``: the weights, names or
    ``requires_grad`` the audit left different (an audit must change nothing).
    """
    import mindspore as ms

    import graphaudit

    # A construct may rename parameters (a sliced CellList: 40 mindone models): the names the
    # model was built with are put back after this forward pass, so that the audit's own
    # pass, which must put them back too, is seen if it does not.
    names = {id(p): (p.name, p.requires_grad) for p in audited.get_parameters()}
    try:
        model.set_train(True)
        forward()
        ms.runtime.synchronize()  # CPU kernels fail asynchronously: the forward pass fails here
    except Exception as err:
        record.update(
            status="forward_failed", reason=first_line(err), traceback=traceback.format_exc()[-2000:]
        )
        return record
    for param in audited.get_parameters():
        param.name = names[id(param)][0]
    before = {id(p): p.asnumpy().tobytes() for p in audited.get_parameters()}
    t0 = time.perf_counter()
    try:
        report = graphaudit.audit(audited, inputs=inputs, **options)
    except Exception as err:
        record.update(status="crash", reason=first_line(err), traceback=traceback.format_exc()[-4000:])
        return record
    changed = [p.name for p in audited.get_parameters() if p.asnumpy().tobytes() != before[id(p)]]
    changed += [
        f"{names[id(p)][0]} (renamed {p.name!r} or requires_grad changed)"
        for p in audited.get_parameters()
        if (p.name, p.requires_grad) != names[id(p)]
    ]
    record.update(
        status="ok",
        audit_seconds=round(time.perf_counter() - t0, 1),
        checks_run=len(report.checks_run),
        changed_by_audit=changed,
        errors=[_finding(f) for f in report.of_severity("error")],
        warnings=[_finding(f) for f in report.of_severity("warning")],
        infos=sorted({f.check_id for f in report.of_severity("info")}),
        dependency=dependency_status(report),
    )
    return record


DEPENDENCY_CHECKS = ("GA340", "GA341", "GA342", "GA343")


def mask_keys(model: Any, inputs: tuple[Any, ...]) -> list[str]:
    """The construct() arguments *inputs* gives a value for (the attention mask among them or not)."""
    keys = [k for k in inspect.signature(model.construct).parameters if k not in ("self", "kwargs")]
    return [k for k, v in zip(keys, inputs) if v is not None]


def dependency_status(report: Any) -> dict[str, str]:
    """Per dependency check: ``ran``, ``found`` (it reported) or why it did not run."""
    found = {f.check_id for f in report.findings}
    status = {}
    for check in DEPENDENCY_CHECKS:
        if check in report.checks_run:
            status[check] = "found" if check in found else "ran"
        else:
            status[check] = "not run: " + report.skipped.get(check, "?")[:600]
    return status


# ---------------------------------------------------------------------------- workers


def _worker(conn: Any) -> None:
    os.environ.setdefault("GLOG_v", "3")
    while True:
        try:
            name = conn.recv()
        except EOFError:
            break
        if name is None:
            break
        model, _, recipe = name.partition("@")  # a job: the class, and "@recipe" but for "trainer"
        with contextlib.suppress(Exception):
            # A kernel of the previous job may still fail (asynchronously): not in this job's record
            import mindspore as ms

            ms.runtime.synchronize()
        try:
            result = audit_model(model, recipe or "trainer")
        except BaseException as err:
            result = {
                "model": name,
                "status": "crash",
                "reason": f"script: {first_line(err)}",
                "traceback": traceback.format_exc()[-4000:],
            }
        conn.send(result)
    conn.close()
    os._exit(0)


class Worker:
    def __init__(self, ctx: Any) -> None:
        self.ctx, self.proc, self.conn, self.done = ctx, None, None, 0

    def start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.conn, self.done = parent, 0

    def stop(self, force: bool = False) -> None:
        if self.proc is None:
            return
        if not force:
            with contextlib.suppress(BrokenPipeError, OSError):
                self.conn.send(None)
            self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.proc = None

    def run(self, name: str, timeout: float) -> dict[str, Any]:
        if self.proc is None or self.done >= RESTART_EVERY or not self.proc.is_alive():
            self.stop()
            self.start()
        self.conn.send(name)
        self.done += 1
        if self.conn.poll(timeout):
            with contextlib.suppress(EOFError):
                return self.conn.recv()
        else:
            self.stop(force=True)
            return {"model": name, "status": "timeout", "reason": f"no result within {timeout:.0f} s"}
        self.proc.join(5)
        code = self.proc.exitcode
        self.stop(force=True)
        return {"model": name, "status": "crash", "reason": f"the worker process died (exit code {code})"}


def job_name(model: str, recipe: str = "trainer") -> str:
    """A job's name, its record's key: the class, with ``@recipe`` for every recipe but ``trainer``."""
    return model if recipe == "trainer" else f"{model}@{recipe}"


def load_results(path: Path) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                latest[job_name(record["model"], record.get("recipe") or "trainer")] = record
    return latest


def run_all(models: list[str], out: Path, *, workers: int, timeout: float, rerun: tuple[str, ...]) -> None:
    results_path = out / "results.jsonl"
    done = {m for m, r in load_results(results_path).items() if r["status"] not in rerun}
    queue = [m for m in models if m not in done]
    print(f"{len(done)} done, {len(queue)} to run with {workers} workers", flush=True)
    lock = threading.Lock()
    ctx = mp.get_context("spawn")

    def loop() -> None:
        worker = Worker(ctx)
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    name = queue.pop(0)
                start = time.perf_counter()
                result = worker.run(name, timeout)
                result["model"], _, recipe = name.partition("@")
                result["recipe"] = recipe or "trainer"
                result["wall_seconds"] = round(time.perf_counter() - start, 1)
                with lock:
                    with results_path.open("a", encoding="utf-8") as file:
                        file.write(json.dumps(result) + "\n")
                    extra = result.get("reason", "")[:150]
                    if result["status"] == "ok":
                        extra = f"errors={len(result['errors'])} warnings={len(result['warnings'])}"
                    print(f"[{time.strftime('%H:%M:%S')}] {name}: {result['status']} {extra}", flush=True)
        finally:
            worker.stop()

    threads = [threading.Thread(target=loop) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


#: Every error and warning the sweep gets, read and classified: (check, a word of the subject)
#: -> (classification, why). "real" is a true finding (in the port, or in the HF design it
#: copies); "false alarm" was a graphaudit bug, fixed (the count before the fix in brackets).
CLASSIFIED: dict[tuple[str, str], tuple[str, str]] = {
    ("GA301", "encoder_attn"): (
        "real (HF design)",
        "a decoder of an encoder-decoder family used alone: its cross-attention is never called "
        "without encoder states, so those weights are trained by nothing",
    ),
    ("GA301", "vision_embed_tokens"): (
        "real (text-only batch)",
        "Fuyu's image projection is not called on a batch without images",
    ),
    ("GA104", "bias"): (
        "real (undeclared tie)",
        "HF's `decoder.bias = bias` ties the output bias to the head's: real sharing, which the "
        "sweep does not declare (it declares the word-embedding tie only)",
    ),
    ("GA302", "pooler"): (
        "real (HF design)",
        "the pooler is built but the classifier / LM head reads the sequence output: dead trainable weights",
    ),
    ("GA302", "position_ids"): (
        "real (port bug)",
        "the port makes `position_ids` a trainable `Parameter` (HF: a non-persistent buffer); nothing "
        "reads it, and AdamW holds it",
    ),
    ("GA501", "attention.self"): (
        "real (port bug)",
        "BigBird swaps in a new attention Cell at its first forward pass on a short sequence; a new "
        "MindSpore Cell is in eval mode (torch modules start in train), so its dropout never drops",
    ),
    ("GA502", "attention.self"): ("real (port bug)", "the same swapped-in attention as GA501"),
    ("GA701", ""): (
        "real (port bug)",
        "`mindspore.nn.Dropout(config.resid_pdrop)`: MindSpore's first argument is keep_prob, so "
        "p=0.1 drops 90%",
    ),
    ("GA308", "attention.self"): (
        "false alarm (GA308, issue 24's helper)",
        "RemBERT's input projection feeds the attention's query/key/value projections: no "
        "non-linearity is meant there",
    ),
    ("GA341", "encoder.layer"): (
        "real (configuration: is_decoder=False)",
        "an encoder family's *ForCausalLM (BERT-like) attends both ways unless config.is_decoder is "
        "true, and the sweep builds the default config (the port warns about it at construction): "
        "trained as a causal LM it sees the token it predicts; with --is-decoder the probe is silent",
    ),
    ("GA343", "rwkv.blocks"): (
        "real (HF design; port bug in its warning)",
        "RWKV never reads its attention_mask (a recurrence: left padding flows into the state of the "
        "real tokens); HF warns when a mask is passed, the port's condition is inverted "
        "(`if attention_mask is None`), so a user who passes one is not told",
    ),
    ("GA703", "attention"): (
        "false alarm, fixed (16 -> 0)",
        "RWKV's numerator / denominator, a sum of exponentials: strictly positive",
    ),
    **transformer_sweep.CLASSIFIED,  # issue 41: the encoder-decoders and encoder-only models
}


def classify(finding: dict[str, str]) -> tuple[str, str]:
    for (check, word), verdict in CLASSIFIED.items():
        if finding["check_id"] == check and word in finding["subject"]:
            return verdict
    return ("unclassified", finding["message"][:160])


def summarize(out: Path) -> str:
    """``summary.md`` in *out*: the counts, the audited models and their findings, the rest apart."""
    results = load_results(out / "results.jsonl")
    counts: dict[str, int] = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    audited = {m: r for m, r in sorted(results.items()) if r["status"] == "ok"}
    lines = [
        f"{len(results)} classes tried: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())),
        "",
        "## Audited",
        "",
        "| model | parameters | audit s | errors | warnings | classification |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in audited.items():
        found = r["errors"] + r["warnings"]
        verdicts = sorted({f"{f['check_id']}: {classify(f)[0]}" for f in found})
        changed = " **changed weights**" if r.get("changed_by_audit") else ""
        lines.append(
            f"| {name} | {r.get('parameters', '')} | {r.get('audit_seconds', '')} | {len(r['errors'])} | "
            f"{len(r['warnings'])} | {'; '.join(verdicts) or 'clean'}{changed} |"
        )
    lines += ["", "## Findings, read", ""]
    seen: set[tuple[str, str]] = set()
    for name, r in audited.items():
        for f in r["errors"] + r["warnings"]:
            verdict, why = classify(f)
            key = (name, f["check_id"])
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"- `{name}` {f['check_id']} `{f['subject']}`: **{verdict}**: {why}")
    lines += ["", "## Not audited (the model's own build or forward pass fails on this CPU)", ""]
    lines += ["| model | stage | reason |", "| --- | --- | --- |"]
    for name, r in sorted(results.items()):
        if r["status"] != "ok":
            reason = r.get("reason", "").replace("|", "/").replace("\n", " ")[:200]
            lines.append(f"| {name} | {r['status']} | {reason} |")
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text, encoding="utf-8")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", default="")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("--rerun", default="", help="statuses to run again, comma-separated")
    parser.add_argument("--summarize-only", action="store_true")
    parser.add_argument(
        "--is-decoder", action="store_true", help="build every *ForCausalLM with config.is_decoder=True"
    )
    parser.add_argument(
        "--kinds", default="causal", help="causal (default), encoder-decoder, encoder: comma-separated"
    )
    parser.add_argument(
        "--recipes", default="trainer", help="trainer (default), plain, onestep, spec: comma-separated"
    )
    args = parser.parse_args()
    if args.is_decoder:
        os.environ[IS_DECODER] = "1"
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.summarize_only:
        import transformer_sweep

        kinds, recipes = args.kinds.split(","), args.recipes.split(",")
        unknown = sorted(set(kinds) - set(transformer_sweep.KINDS)) + sorted(
            set(recipes) - set(transformer_sweep.RECIPES)
        )
        if unknown:
            parser.error(f"unknown kinds or recipes: {', '.join(unknown)}")
        models = transformer_sweep.jobs(
            sys.modules[__name__], kinds, recipes, [m for m in args.models.split(",") if m]
        )
        run_all(
            models,
            args.out,
            workers=args.workers,
            timeout=args.timeout,
            rerun=tuple(s for s in args.rerun.split(",") if s),
        )
    print(summarize(args.out))


if __name__ == "__main__":
    main()

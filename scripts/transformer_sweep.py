"""The transformer sweep's other kinds (encoder-decoders, encoder-only) and recipes (plain, onestep, spec).

``scripts/audit_all_transformers.py`` sweeps the causal LMs as mindone's Trainer trains them;
this module adds, for ``--kinds`` and ``--recipes``:

Kinds (the classes, all of mindone 0.5 that is text or speech, not vision-language):

- ``causal``: the script's own :func:`candidate_classes` (unchanged);
- ``encoder-decoder``: :data:`ENCODER_DECODERS`, every ``*ForConditionalGeneration`` /
  ``*MTModel`` of a text or speech encoder-decoder family, and UMT5 (whose only heads in
  mindone 0.5 are classification heads: its ``ForSequenceClassification`` runs the decoder);
- ``encoder``: ``*ForMaskedLM``, ``*ForSequenceClassification`` and ``*ForTokenClassification`` of
  every family with a ``*ForMaskedLM`` (BERT-like encoders), but the multimodal and audio
  families (:data:`NOT_TEXT_ENCODERS`). Bare ``*Model`` classes are left out: they have no
  loss, so only the ``plain`` and ``spec`` recipes could run them, and each is inside its heads.

Recipes (each model is built afresh for each):

- ``trainer``: mindone's Trainer's AdamW groups and ``TrainOneStepWrapper``, a batch with
  ``labels`` (an encoder-decoder shifts them right into its decoder's input);
- ``plain``: ``audit(model, inputs=...)`` on ``input_ids``/``attention_mask`` (and
  ``decoder_input_ids``), as ``generate`` and an evaluation loop run it;
- ``onestep``: ``nn.TrainOneStepCell(ModelLoss(model), nn.Adam)``, where ``ModelLoss`` is a
  ``WithLossCell`` for a model that computes its own loss: the model's loss from ``labels``, its
  arguments named as the model names them;
- ``spec``: ``plain``, audited against ``graphaudit.Spec.from_net(model, inputs)`` of itself.

Encoder-decoders get sources of 12 tokens and targets of 8 (``tests/zoo/seq2seq.py``);
the speech ones their features: Whisper ``(2, num_mel_bins, 2 * max_source_positions)``,
Speech2Text ``(2, 32 frames, input_feat_per_channel * input_channels)``, Moonshine 4000 raw
samples. Encoder-only models get 8 tokens (the script's ``SEQ``).
"""

from __future__ import annotations

import inspect
import time
import traceback
import types
from typing import Any

import numpy as np

KINDS = ("causal", "encoder-decoder", "encoder")
RECIPES = ("trainer", "plain", "onestep", "spec")

ENCODER_DECODERS = (
    "BartForConditionalGeneration",
    "BigBirdPegasusForConditionalGeneration",
    "BlenderbotForConditionalGeneration",
    "BlenderbotSmallForConditionalGeneration",
    "FSMTForConditionalGeneration",
    "LEDForConditionalGeneration",
    "LongT5ForConditionalGeneration",
    "M2M100ForConditionalGeneration",
    "MBartForConditionalGeneration",
    "MT5ForConditionalGeneration",
    "MarianMTModel",
    "MoonshineForConditionalGeneration",
    "MvpForConditionalGeneration",
    "NllbMoeForConditionalGeneration",
    "PLBartForConditionalGeneration",
    "PegasusForConditionalGeneration",
    "PegasusXForConditionalGeneration",
    "Pop2PianoForConditionalGeneration",
    "ProphetNetForConditionalGeneration",
    "Speech2TextForConditionalGeneration",
    "SwitchTransformersForConditionalGeneration",
    "T5ForConditionalGeneration",
    "T5GemmaForConditionalGeneration",
    "UMT5ForSequenceClassification",
    "WhisperForConditionalGeneration",
    "XLMProphetNetForConditionalGeneration",
)

#: Families with a ``*ForMaskedLM`` that are not text encoders (images, audio, text with images).
NOT_TEXT_ENCODERS = ("BridgeTower", "Vilt", "Wav2Vec2")
ENCODER_HEADS = ("ForMaskedLM", "ForSequenceClassification", "ForTokenClassification")

SOURCE, TARGET = 12, 8  # tests/zoo/seq2seq.py's lengths
SPEECH_FRAMES, RAW_SAMPLES = 32, 4000

#: Config fields beyond the script's TINY that these kinds need (set when a config has them):
#: T5's key width and feed-forward, the stacks of ProphetNet, the experts' capacity and sparse
#: layers of Switch/NLLB-MoE (2 layers would have none), the local windows of LED/PegasusX/
#: LongT5, the source and target vocabularies of FSMT/Marian, and positions for short inputs.
ENCODER_DECODER_FIELDS: dict[str, Any] = {
    "d_kv": 8,
    "d_ff": 64,
    "num_decoder_layers": 2,
    "num_encoder_layers": 2,
    "num_encoder_attention_heads": 4,
    "num_decoder_attention_heads": 4,
    "num_encoder_key_value_heads": 2,
    "num_decoder_key_value_heads": 2,
    "expert_capacity": 16,
    "num_sparse_encoder_layers": 1,
    "num_sparse_decoder_layers": 1,
    "encoder_sparse_step": 2,
    "decoder_sparse_step": 2,
    "attention_window": 4,
    "block_size": 4,
    "num_global_tokens": 4,
    "local_radius": 4,
    "global_block_size": 4,
    "src_vocab_size": 128,
    "tgt_vocab_size": 128,
    "decoder_vocab_size": 128,
    "ngram": 2,
    "num_buckets": 8,
    "relative_max_distance": 16,
    "max_source_positions": 16,
    "max_target_positions": 64,
    "max_encoder_position_embeddings": 64,
    "max_decoder_position_embeddings": 64,
    "decoder_start_token_id": 0,
    "encoder_num_hidden_layers": 2,  # Moonshine names its stacks' fields so
    "decoder_num_hidden_layers": 2,
    "encoder_num_attention_heads": 4,
    "decoder_num_attention_heads": 4,
    "encoder_num_key_value_heads": 4,
    "decoder_num_key_value_heads": 4,
}

#: Token ids a config may hold beyond the tiny vocabulary (Whisper's 50257, Marian's 58100).
TOKEN_FIELDS = (
    "bos_token_id",
    "eos_token_id",
    "decoder_start_token_id",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "sep_token_id",
    "cls_token_id",
    "mask_token_id",
)


def candidates(base: Any, kind: str) -> list[str]:
    """The classes of *kind* that mindone has."""
    import mindone.transformers as mt

    if kind == "causal":
        return base.candidate_classes()
    if kind == "encoder-decoder":
        return [n for n in ENCODER_DECODERS if hasattr(mt, n)]
    families = sorted(
        n[: -len("ForMaskedLM")]
        for n in dir(mt)
        if n.endswith("ForMaskedLM") and not n.startswith(("Auto", *NOT_TEXT_ENCODERS))
    )
    return [f + head for head in ENCODER_HEADS for f in families if hasattr(mt, f + head)]


def kind_of(name: str) -> str:
    if name in ENCODER_DECODERS:
        return "encoder-decoder"
    for head in ENCODER_HEADS:
        if name.endswith(head) and not name.startswith(NOT_TEXT_ENCODERS):
            import mindone.transformers as mt

            if hasattr(mt, name[: -len(head)] + "ForMaskedLM"):
                return "encoder"
    return "causal"


def jobs(base: Any, kinds: list[str], recipes: list[str], models: list[str]) -> list[str]:
    """Every (class, recipe) job, by name: recipe by recipe, so that a partial sweep covers every class once."""
    names = models or [n for kind in kinds for n in candidates(base, kind)]
    return [base.job_name(n, recipe) for recipe in recipes for n in names]


#: Every error and warning these kinds got, read (the script's CLASSIFIED includes them).
CLASSIFIED: dict[tuple[str, str], tuple[str, str]] = {
    ("GA301", "entity"): (
        "real (HF design; batch without entities)",
        "LUKE's entity head is called only with entity_ids",
    ),
    ("GA301", "luke"): (
        "real (HF design; batch without entities)",
        "LUKE's entity embeddings, entity-aware attention queries and entity head are called only with entity_ids",
    ),
    ("GA104", "entity_embeddings"): (
        "real (undeclared tie)",
        "LUKE ties its entity head's weight to the entity embeddings: real sharing the sweep does not declare",
    ),
    ("GA343", "mobilebert.embeddings"): (
        "real (HF design)",
        "MobileBERT's embedding concatenates each token's neighbours (trigram input): a padded token's "
        "embedding reaches the real token beside it before any mask applies",
    ),
    ("GA343", "encoder.conv"): (
        "real (HF design)",
        "Speech2Text reads only the count of ones of attention_mask (it assumes right padding, as its feature "
        "extractor pads): on a left-padded batch, the probe's, the padded frames are read as real",
    ),
    ("GA302", "predictions.bias"): (
        "real (port bug)",
        "BERT's MLM head: `nn.Dense(hidden, vocab, has_bias=False)` then `decoder.bias = self.bias`; MindSpore's "
        "Dense adds a bias only when has_bias, so the output bias is never applied and never trains",
    ),
    ("GA302", "attention.self"): (
        "real (port)",
        "MRA's attention: no gradient reaches its query/key/value projections (measured: exactly 0), the "
        "attention output does not depend differentiably on them",
    ),
    ("GA343", "attention.self.conv"): (
        "real (HF design)",
        "Nystromformer's depthwise convolution over the values (conv_kernel_size) reads the padded positions "
        "unmasked: padding reaches the real tokens",
    ),
    ("GA301", "encoder.embed_positions"): (
        "real (port bug)",
        "Whisper's encoder reads its sinusoidal positions through a copy "
        "(`mindspore.tensor(self.embed_positions.embedding_table)`) and the port leaves them trainable "
        "(HF: `requires_grad_(False)`, commented out): no gradient reaches them, AdamW's decay shrinks them",
    ),
    ("GA301", "mel_conditioner"): (
        "real (HF design; batch without composer)",
        "Pop2Piano's composer conditioning is called only with input_features (generate's path)",
    ),
    ("GA301", "led.encoder.layers"): (
        "real (HF design; batch without global attention)",
        "LED's global-attention projections are called only when global_attention_mask marks a token",
    ),
    ("GA301", "longformer.encoder.layer"): (
        "real (HF design; batch without global attention)",
        "Longformer's global-attention projections, as LED's",
    ),
    ("GA301", "experts.expert"): (
        "false alarm (MoE routing)",
        "Switch's top-1 router sent none of the batch's tokens to this expert in the one traced pass "
        "(router jitter drawn from the shims' generator); GA301 reads an expert without tokens as never called",
    ),
    ("GA502", "bert.encoder.layer"): (
        "real (port bug)",
        "BigBird's swapped-in attention in eval mode, seen without an optimizer (GA501 with one)",
    ),
    ("GA501", "bert.encoder.layer"): (
        "real (port bug)",
        "BigBird's attention swapped in at the first forward pass is a new Cell, in eval mode",
    ),
    ("GA341", ""): (
        "not settled",
        "ProphetNet's n-gram stream (logits_ngram) at positions 0-4 moves when decoder tokens 5-6 change, "
        "measured without graphaudit; the n-gram mask is right: a port bug or an artifact of the CPU shims",
    ),
    ("GA301", "decoder.layers.0"): (
        "false alarm (LayerDrop)",
        "NLLB-MoE's LayerDrop (p=0.05) skipped this decoder layer in the one traced pass "
        "(`self.training and mint.rand([]) < self.layerdrop`); GA301 reads a random skip as never called",
    ),
    ("GA343", "encoder_attn"): (
        "real (HF bug, copied)",
        "BigBirdPegasus falls back to full attention on short inputs by setting the layers' attention_type, "
        "but BigBirdPegasusEncoderAttention tests `self.config.attention_type` (still block_sparse) and calls the "
        "full attention with the block-sparse arguments: its attention_mask is None, padding reaches every token "
        "(named at the decoder's cross-attention: the encoder's 12 positions are not the judged 8)",
    ),
    ("GA502", "encoder.layers"): (
        "real (port bug)",
        "BigBirdPegasus swaps in a new attention Cell at the fallback: a new MindSpore Cell is in eval mode",
    ),
    ("GA501", "encoder.layers"): ("real (port bug)", "the same swapped-in attention as GA502"),
    ("GA342", "encoder.layers.0.self_attn"): (
        "false alarm, fixed",
        "Speech2Text (8 encoder positions after subsampling, 8 decoder positions): the GA342 probe took the "
        "encoder's first cell moved by the padding change of the combined pass for the first that mixes the "
        "decoder's positions; confirmed now on a pass that changes the decoder's future only",
    ),
}


# ---------------------------------------------------------------------------- building


def build(base: Any, name: str) -> tuple[Any, Any]:
    """*name* at the tiny size, its token ids inside the vocabulary, in eager attention."""
    import mindone.transformers as mt
    import mindspore as ms

    cls = getattr(mt, name)
    if name.startswith("T5Gemma"):
        # T5Gemma's config holds one config per stack: each made tiny like any decoder's.
        import transformers

        module = types.SimpleNamespace(config_class=transformers.T5GemmaModuleConfig)
        stack = base.tiny_config(module).to_dict()
        config = cls.config_class(encoder=stack, decoder=stack, vocab_size=base.VOCAB)
    else:
        config = base.tiny_config(cls, ENCODER_DECODER_FIELDS)
    for field in TOKEN_FIELDS:
        value = getattr(config, field, None)
        if isinstance(value, int) and value >= base.VOCAB:
            setattr(config, field, 2)
    for field in ("suppress_tokens", "begin_suppress_tokens", "forced_decoder_ids"):
        if getattr(config, field, None) is not None:
            setattr(config, field, None)  # Whisper's, for generate(): ids of the full vocabulary
    config._attn_implementation = "eager"
    ms.set_seed(0)
    return cls(config), config


def arguments(model: Any) -> list[str]:
    return [k for k in inspect.signature(model.construct).parameters if k not in ("self", "kwargs")]


def batch(
    base: Any, name: str, model: Any, config: Any, *, labels: bool, decoder_input: bool
) -> dict[str, Any]:
    """One batch of 2 by argument name (NumPy), as the model's kind takes it."""
    rng = np.random.default_rng(0)
    keys = arguments(model)
    seq2seq = kind_of(name) == "encoder-decoder"
    length = SOURCE if seq2seq else base.SEQ
    values: dict[str, Any] = {}
    if "input_ids" in keys:
        values["input_ids"] = rng.integers(1, base.VOCAB, (base.BATCH, length)).astype(np.int32)
        if seq2seq and name.endswith("ForSequenceClassification"):
            # T5-style classification reads the decoder at each sample's one end-of-sequence token
            eos = config.eos_token_id
            values["input_ids"][values["input_ids"] == eos] = eos + 1
            values["input_ids"][:, -1] = eos
    elif "input_features" in keys and name.startswith("Whisper"):
        shape = (base.BATCH, config.num_mel_bins, 2 * config.max_source_positions)
        values["input_features"] = rng.standard_normal(shape).astype(np.float32)
        length = shape[-1]
    elif "input_features" in keys:
        width = config.input_feat_per_channel * config.input_channels
        values["input_features"] = rng.standard_normal((base.BATCH, SPEECH_FRAMES, width)).astype(np.float32)
        length = SPEECH_FRAMES
    elif "input_values" in keys:
        values["input_values"] = rng.standard_normal((base.BATCH, RAW_SAMPLES)).astype(np.float32)
        length = RAW_SAMPLES
    if "attention_mask" in keys:
        values["attention_mask"] = np.ones((base.BATCH, length), np.int32)
    target = rng.integers(1, base.VOCAB, (base.BATCH, TARGET)).astype(np.int32)
    # T5-style classification makes its decoder's input from the source (it reads the end token there)
    classifies = name.endswith("ForSequenceClassification")
    if seq2seq and decoder_input and "decoder_input_ids" in keys and not classifies:
        values["decoder_input_ids"] = target
    if labels:
        if name.endswith("ForSequenceClassification"):
            values["labels"] = rng.integers(0, base.CLASSES, (base.BATCH,)).astype(np.int32)
        elif name.endswith("ForTokenClassification"):
            values["labels"] = rng.integers(0, base.CLASSES, (base.BATCH, length)).astype(np.int32)
        else:
            values["labels"] = target if seq2seq else values["input_ids"]
    return values


def positional(model: Any, values: dict[str, Any]) -> tuple[Any, ...]:
    """*values* as ``construct``'s positional arguments (``None`` for the ones skipped)."""
    import mindspore as ms
    from mindspore import Tensor

    keys = arguments(model)
    n = max(keys.index(k) for k in values) + 1
    return tuple(
        None
        if k not in values
        else Tensor(values[k], ms.float32 if values[k].dtype.kind == "f" else ms.int32)
        for k in keys[:n]
    )


def model_loss(model: Any, keys: list[str]) -> Any:
    """A ``WithLossCell`` for a model that computes its own loss: its ``construct`` takes *keys* by name."""
    from mindspore import nn

    def construct(self: Any, *args: Any) -> Any:
        return self.model(**dict(zip(self.keys, args)))[0]

    # The dependency probe finds the decoder's input and the mask by argument name: the
    # loss cell's construct is given the model's own names.
    construct.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in keys]
    )

    def __init__(self: Any, model: Any) -> None:
        nn.Cell.__init__(self)
        self.model, self.keys = model, list(keys)

    cls = type("ModelLoss", (nn.Cell,), {"__init__": __init__, "construct": construct})
    return cls(model)


#: The model's path in the network graphaudit names (inside a train-step wrapper: its network's).
PREFIX = {"trainer": "network.model.", "onestep": "model.", "plain": "", "spec": ""}


def every_path(cell: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every ``(path, cell)`` under *cell*, a cell reachable under two paths listed under both."""
    found = []
    for name, child in cell._cells.items():
        if child is not None:
            found.append((prefix + name, child))
            found += every_path(child, f"{prefix}{name}.")
    return found


def declared_sharing(model: Any, config: Any, prefix: str) -> dict[str, list[list[str]]]:
    """The word embedding's sharing, as the Spec declares it: the HF design the sweep does not audit.

    The output head's tie when the config ties and the port does (the script's
    ``declared_tie``), and an encoder-decoder's one embedding reached as ``shared``,
    ``encoder.embed_tokens`` and ``decoder.embed_tokens`` (HF: one module under three names).
    Nothing else is declared: any other sharing is reported.
    """
    try:
        embed, head = model.get_input_embeddings(), model.get_output_embeddings()
    except Exception:
        return {}
    if not hasattr(embed, "_params"):
        return {}  # no embedding Cell (Perceiver returns its latents' Parameter): nothing to declare
    weight = embed.weight if "weight" in embed._params else getattr(embed, "embedding_table", None)
    tied = head is not None and getattr(head, "weight", None) is weight and config.tie_word_embeddings
    paths = every_path(model)
    cells = [prefix + p for p, c in paths if c is embed]
    params = [
        f"{prefix}{p}.{n}"
        for p, c in paths
        for n, param in c._params.items()
        if param is weight and (tied or c is not head)
    ]
    sharing = {}
    if len(cells) > 1:
        sharing["shared_cells"] = [cells]
    if len(params) > 1:
        sharing["shared_parameters"] = [params]
    return sharing


# ---------------------------------------------------------------------------- recipes


def audit_job(base: Any, name: str, recipe: str) -> dict[str, Any]:
    """Build *name*, set it up as *recipe* says, run it and audit it; the record (see the script)."""
    import mindspore as ms
    from mindspore import Tensor, nn

    import graphaudit

    ms.set_context(mode=ms.PYNATIVE_MODE)
    record: dict[str, Any] = {"model": name, "recipe": recipe, "kind": kind_of(name), "status": None}
    with base.shims():
        start = time.perf_counter()
        try:
            model, config = build(base, name)
        except Exception as err:
            record.update(
                status="build_failed", reason=base.first_line(err), traceback=traceback.format_exc()[-2000:]
            )
            return record
        record["build_seconds"] = round(time.perf_counter() - start, 1)
        record["parameters"] = int(sum(int(p.size) for p in model.get_parameters()))
        model.set_train(True)
        try:
            values = batch(
                base,
                name,
                model,
                config,
                labels=recipe in ("trainer", "onestep"),
                decoder_input=recipe != "trainer",
            )
            if recipe == "trainer":
                _trainer, audited = base.trainer_wrap(model)
                inputs = positional(model, values)
                forward = lambda: model(*inputs)  # noqa: E731
            elif recipe == "onestep":
                keys = [k for k in arguments(model) if k in values]
                audited = nn.TrainOneStepCell(
                    model_loss(model, keys), nn.Adam(model.trainable_params(), 1e-4)
                )
                audited.set_train(True)
                inputs = tuple(Tensor(values[k]) for k in keys)
                forward = lambda: audited.network(*inputs)  # noqa: E731
            else:
                audited, inputs = model, positional(model, values)
                forward = lambda: model(*inputs)  # noqa: E731
        except Exception as err:
            record.update(
                status="build_failed",
                reason=f"{recipe}: {base.first_line(err)}",
                traceback=traceback.format_exc()[-2000:],
            )
            return record
        sharing = declared_sharing(model, config, PREFIX[recipe])
        record["tie_declared"] = sharing
        spec = graphaudit.Spec(**sharing) if sharing else None
        options: dict[str, Any] = {"mask_input": "attention_mask"} if "attention_mask" in values else {}
        if recipe == "spec":
            # The spec of itself, from the same batch (a traced pass), once the model's own
            # forward pass is known to run (else the record says forward_failed, as for the others).
            names = {id(p): p.name for p in model.get_parameters()}
            try:
                forward()
                ms.runtime.synchronize()
            except Exception as err:
                record.update(status="forward_failed", reason=base.first_line(err))
                record["traceback"] = traceback.format_exc()[-2000:]
                return record
            for param in model.get_parameters():
                param.name = names[id(param)]  # a sliced CellList renames them: see audit_built
            try:
                spec = graphaudit.Spec.from_net(model, inputs)
            except Exception as err:
                record.update(status="crash", reason=f"Spec.from_net: {base.first_line(err)}")
                record["traceback"] = traceback.format_exc()[-4000:]
                return record
        return base.audit_built(record, model, audited, inputs, forward, spec=spec, **options)

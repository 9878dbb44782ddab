"""Write real port <-> original pairs: the PyTorch originals of MindSpore ports, tiny, as fixtures.

For each pair of :data:`PAIRS` this writes ``tests/references/<pair>/``:

- ``original.safetensors`` (transformers' ``save_pretrained``: a tied weight stored once, under
  the name the model keeps; ``safetensors.torch.save_model`` for torchvision's) or ``original.pth`` (``torch.save(state_dict)``: ties kept, one
  storage under several names) -- the original's weights at a tiny config, seeded random init;
- ``model.onnx`` for a few pairs (the legacy exporter, ``dynamo=False``; initializers embedded);
- ``inputs.npz``: the batch the original was run on (keyed by its argument names);
- ``outputs.npz``: every module's output on that batch, recorded with forward hooks and keyed
  by the module's path (``bert.encoder.layer.0.attention``; ``""`` is the model's output): the
  first tensor of a tuple or ``ModelOutput``, float32, the first call of a module called twice;
- ``manifest.json``: the pair, the original (package, version, class, config) and how to build
  the port at the same config (mindone class + ``transformers`` config, or a mindcv model name
  + keywords), the input names, the torch version and the command that made it.

The tests (``tests/test_reference_pairs.py``) read these with MindSpore only: no torch there.
Run where torch is installed (a venv of its own; the local CPU wheel of torch)::

    python3 -m venv /work/torchenv
    /work/torchenv/bin/pip install "torch==2.13.0+cpu" transformers==4.57.1 timm safetensors onnx "numpy<2"
    /work/torchenv/bin/python scripts/references/make_references.py            # every pair
    /work/torchenv/bin/python scripts/references/make_references.py bert gpt2  # some

Deterministic: each pair is built after ``torch.manual_seed(0)``; BatchNorm running statistics
are drawn at random too (left at 0 and 1 they would not tell ``moving_mean`` from
``moving_variance``), and every weight initialised to a constant (biases at 0, norms at 1) gets
noise added: a mix-up of two of them shows in the outputs, and the ONNX exporter does not merge
them into one initializer.
"""

from __future__ import annotations

import json
import shlex
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# torchvision's wheel on PyPI is built against the CUDA torch: its C ops do not load with the CPU
# build, and its fake-kernel registrations (torchvision::nms...) then fail at import, which breaks
# `import transformers`' models and timm too. The models used here are pure Python: skip them.
sys.modules.setdefault("torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations"))

import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "references"
VOCAB, SEQ, TARGET, BATCH = 128, 8, 6, 2

_TEXT = {"vocab_size": VOCAB, "max_position_embeddings": 64}
_BERTLIKE = {
    **_TEXT,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
}


@dataclass(frozen=True)
class Pair:
    """A MindSpore port and the PyTorch original it was made from, at one tiny config.

    ``kind`` is ``"transformers"`` (mindone.transformers ``port_class`` <-> transformers'
    ``original_class``, both built from ``config_class(**config)``) or ``"vision"`` (a mindcv
    model name <-> a torchvision/timm constructor, with ``kwargs`` on each side).
    """

    kind: str
    original_class: str
    port_class: str
    config_class: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    inputs: str = "text"  # "text", "seq2seq" or "image"
    original_package: str = "transformers"
    original_kwargs: dict[str, Any] = field(default_factory=dict)
    port_kwargs: dict[str, Any] = field(default_factory=dict)
    image_size: int = 32
    weights: str = "safetensors"  # or "pth"
    onnx: bool = False
    dtype: str = "float32"


PAIRS: dict[str, Pair] = {
    "bert": Pair(
        "transformers",
        "BertForMaskedLM",
        "BertForMaskedLM",
        "BertConfig",
        _BERTLIKE,
        weights="pth",
        onnx=True,
    ),
    "gpt2": Pair(
        "transformers",
        "GPT2LMHeadModel",
        "GPT2LMHeadModel",
        "GPT2Config",
        {"vocab_size": VOCAB, "n_positions": 64, "n_embd": 32, "n_layer": 2, "n_head": 2},
    ),  # no ONNX: the legacy exporter fails on the vmap of transformers' causal mask (unordered_map::at)
    "llama": Pair(
        "transformers",
        "LlamaForCausalLM",
        "LlamaForCausalLM",
        "LlamaConfig",
        {
            **_TEXT,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
        },
    ),
    "t5": Pair(
        "transformers",
        "T5ForConditionalGeneration",
        "T5ForConditionalGeneration",
        "T5Config",
        {
            "vocab_size": VOCAB,
            "d_model": 32,
            "d_kv": 8,
            "d_ff": 64,
            "num_layers": 2,
            "num_heads": 4,
            "decoder_start_token_id": 0,
            "pad_token_id": 0,
        },
        inputs="seq2seq",
    ),
    "bart": Pair(
        "transformers",
        "BartForConditionalGeneration",
        "BartForConditionalGeneration",
        "BartConfig",
        {
            **_TEXT,
            "d_model": 32,
            "encoder_layers": 2,
            "decoder_layers": 2,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 64,
            "decoder_ffn_dim": 64,
            "pad_token_id": 0,
        },
        inputs="seq2seq",
        weights="pth",
    ),
    "distilbert": Pair(
        "transformers",
        "DistilBertForMaskedLM",
        "DistilBertForMaskedLM",
        "DistilBertConfig",
        {**_TEXT, "dim": 32, "n_layers": 2, "n_heads": 2, "hidden_dim": 64},
    ),
    "roberta": Pair(
        "transformers",
        "RobertaForMaskedLM",
        "RobertaForMaskedLM",
        "RobertaConfig",
        {**_BERTLIKE, "max_position_embeddings": 66, "pad_token_id": 1},
    ),
    "vit": Pair(
        "transformers",
        "ViTForImageClassification",
        "ViTForImageClassification",
        "ViTConfig",
        {
            "image_size": 32,
            "patch_size": 8,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "num_labels": 10,
        },
        inputs="image",
        onnx=True,
    ),
    "opt": Pair(
        "transformers",
        "OPTForCausalLM",
        "OPTForCausalLM",
        "OPTConfig",
        {
            **_TEXT,
            "hidden_size": 32,
            "ffn_dim": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "word_embed_proj_dim": 32,
        },
    ),
    "gpt_neox": Pair(
        "transformers",
        "GPTNeoXForCausalLM",
        "GPTNeoXForCausalLM",
        "GPTNeoXConfig",
        {
            **_TEXT,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
        },
    ),
    "shufflenet_v2_x0_5": Pair(
        "vision",
        "shufflenet_v2_x0_5",
        "shufflenet_v2_x0_5",
        inputs="image",
        original_package="torchvision",
        original_kwargs={"num_classes": 10},
        port_kwargs={"num_classes": 10},
        onnx=True,
        dtype="float16",  # 0.35 M weights, stored twice (its ONNX file is float32): 2.9 MB as float32
    ),
    "squeezenet1_1": Pair(
        "vision",
        "squeezenet1_1",
        "squeezenet1_1",
        inputs="image",
        original_package="torchvision",
        original_kwargs={"num_classes": 10},
        port_kwargs={"num_classes": 10},
        dtype="float16",  # 0.73 M weights: 2.9 MB as float32
    ),
    "mobilenet_v2_035": Pair(
        "vision",
        "mobilenet_v2",
        "mobilenet_v2_035_96",
        inputs="image",
        original_package="torchvision",
        original_kwargs={"num_classes": 10, "width_mult": 0.35},
        port_kwargs={"num_classes": 10},
        weights="pth",
    ),
    "mobilenet_v3_small_075": Pair(
        "vision",
        "mobilenet_v3_small",
        "mobilenet_v3_small_075",
        inputs="image",
        original_package="torchvision",
        original_kwargs={"num_classes": 10, "width_mult": 0.75},
        port_kwargs={"num_classes": 10},
        dtype="float16",  # 0.9 M weights: 3.6 MB as float32
    ),
}


def build_original(pair: Pair) -> torch.nn.Module:
    """The original at the pair's config, seeded, in inference mode, with random norm statistics."""
    torch.manual_seed(0)
    if pair.kind == "transformers":
        import transformers

        config = getattr(transformers, pair.config_class)(**pair.config)
        config._attn_implementation = "eager"  # the port runs eager attention; sdpa differs in the last bits
        model = getattr(transformers, pair.original_class)(config)
    elif pair.original_package == "torchvision":
        import torchvision

        model = getattr(torchvision.models, pair.original_class)(**pair.original_kwargs)
    else:
        import timm

        model = timm.create_model(pair.original_class, pretrained=False, **pair.original_kwargs)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.running_mean is not None:
                module.running_mean.copy_(torch.randn(module.running_mean.shape, generator=generator) * 0.1)
                module.running_var.copy_(torch.rand(module.running_var.shape, generator=generator) + 0.5)
        for parameter in model.parameters():
            # a weight initialised to one value (biases at 0, norms at 1) would not tell a mix-up of two
            # such weights in the outputs, and the ONNX exporter merges equal initializers into one
            if parameter.numel() > 1 and bool((parameter == parameter.flatten()[0]).all()):
                parameter.add_(0.1 * torch.randn(parameter.shape, generator=generator))
    return model.eval()


def make_inputs(pair: Pair) -> dict[str, np.ndarray]:
    """The batch, as NumPy arrays named as the original's ``forward`` names its arguments."""
    rng = np.random.default_rng(0)
    if pair.inputs == "image":
        size = pair.config.get("image_size", pair.image_size)
        # one image: a CNN's per-module outputs are large, and a batch of one tells as much
        return {"pixel_values": rng.standard_normal((1, 3, size, size)).astype(np.float32)}
    ids = rng.integers(2, VOCAB, (BATCH, SEQ)).astype(np.int64)  # 0 and 1 are padding for some
    batch = {"input_ids": ids, "attention_mask": np.ones((BATCH, SEQ), np.int64)}
    if pair.inputs == "seq2seq":
        batch["decoder_input_ids"] = rng.integers(2, VOCAB, (BATCH, TARGET)).astype(np.int64)
    return batch


def _first_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    if hasattr(value, "to_tuple"):  # a transformers ModelOutput: its fields that are set, in order
        value = value.to_tuple()
    if isinstance(value, (tuple, list)):
        for item in value:
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


def record(model: torch.nn.Module, batch: dict[str, np.ndarray], pair: Pair) -> dict[str, np.ndarray]:
    """Every module's output on *batch* (its first call), keyed by module path; ``""`` the model's."""
    outputs: dict[str, np.ndarray] = {}

    def hook(path: str) -> Callable[..., None]:
        def keep(module: torch.nn.Module, args: Any, output: Any) -> None:
            tensor = _first_tensor(output)
            if path not in outputs and tensor is not None and tensor.is_floating_point():
                outputs[path] = tensor.detach().float().numpy()

        return keep

    handles = [module.register_forward_hook(hook(path)) for path, module in model.named_modules()]
    with torch.no_grad():
        result = call(model, batch, pair)
    for handle in handles:
        handle.remove()
    outputs[""] = _first_tensor(result).detach().float().numpy()
    return outputs


def call(model: torch.nn.Module, batch: dict[str, Any], pair: Pair) -> Any:
    tensors = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in batch.items()}
    if pair.kind == "vision":
        return model(tensors["pixel_values"])
    import inspect

    if "use_cache" in inspect.signature(model.forward).parameters:  # no cache: one output, the logits
        tensors["use_cache"] = False
    return model(**tensors)


def export_onnx(model: torch.nn.Module, batch: dict[str, np.ndarray], pair: Pair, path: Path) -> None:
    """The legacy exporter (TorchScript tracing): its initializers are the state dict's weights."""
    names = list(batch)
    args = tuple(torch.from_numpy(batch[k]) for k in names)

    class Positional(torch.nn.Module):  # the exporter passes positionally; HF forwards take keywords
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *values: torch.Tensor) -> torch.Tensor:
            return _first_tensor(call(self.model, dict(zip(names, values)), pair))

    wrapper = Positional().eval()
    torch.onnx.export(
        wrapper,
        args,
        str(path),
        input_names=names,
        output_names=["output"],
        opset_version=17,
        dynamo=False,
        do_constant_folding=False,  # folding would fuse or transpose weights: keep the originals'
        # EVAL (the default) runs the eval peephole, which folds each BatchNorm into the conv before it:
        # the file would have no BatchNorm weights at all. PRESERVE exports the eval-mode model as it is.
        training=torch.onnx.TrainingMode.PRESERVE,
    )
    import onnx

    proto = onnx.load(str(path))
    for init in proto.graph.initializer:  # the wrapper adds "model." to every name: the original's names
        if init.name.startswith("model."):
            old = init.name
            init.name = old[len("model.") :]
            for node in proto.graph.node:
                node.input[:] = [init.name if i == old else i for i in node.input]
    onnx.save(proto, str(path))


def port_spec(pair: Pair) -> dict[str, Any]:
    if pair.kind == "transformers":
        return {
            "package": "mindone",
            "module": "mindone.transformers",
            "class": pair.port_class,
            "config_class": f"transformers.{pair.config_class}",
            "config": pair.config,
            "attn_implementation": "eager",
        }
    return {"package": "mindcv", "model": pair.port_class, "kwargs": pair.port_kwargs}


def write(name: str, pair: Pair) -> None:
    import importlib.metadata

    from safetensors.torch import save_model

    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    model = build_original(pair)
    batch = make_inputs(pair)
    if pair.dtype != "float32":
        model = model.to(getattr(torch, pair.dtype))
    if pair.weights == "pth":
        torch.save(model.state_dict(), folder / "original.pth")
    elif pair.kind == "transformers":  # the file a user downloads: which copy of a tie is kept is its choice
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(tmp, safe_serialization=True)
            (folder / "original.safetensors").write_bytes((Path(tmp) / "model.safetensors").read_bytes())
    else:
        save_model(model, str(folder / "original.safetensors"))
    model = model.float()  # outputs are those of the weights stored, computed in float32
    np.savez_compressed(folder / "inputs.npz", **batch)
    np.savez_compressed(folder / "outputs.npz", **record(model, batch, pair))
    files = sorted(p.name for p in folder.iterdir())
    if pair.onnx:
        export_onnx(model, batch, pair, folder / "model.onnx")
        files.append("model.onnx")
    package = pair.original_package
    manifest = {
        "pair": name,
        "original": {
            "package": package,
            "version": importlib.metadata.version(package),
            "class": pair.original_class
            if pair.kind == "transformers"
            else f"{package}.models.{pair.original_class}",
            "config_class": f"transformers.{pair.config_class}" if pair.config_class else None,
            "config": pair.config if pair.kind == "transformers" else pair.original_kwargs,
            "attn_implementation": "eager" if pair.kind == "transformers" else None,
        },
        "port": port_spec(pair),
        "weights": "original.pth" if pair.weights == "pth" else "original.safetensors",
        "weights_dtype": pair.dtype,
        "files": files,
        "inputs": list(batch),
        "outputs": "outputs.npz: each module's output (first tensor, first call), keyed by module path; '' "
        "is the model's output (logits), computed in float32 from the weights as stored",
        "seed": "torch.manual_seed(0); norm statistics and LayerNorm affine drawn with torch.Generator seed 1",
        "torch": torch.__version__,
        "command": "python scripts/references/make_references.py " + shlex.quote(name),
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"{name}: {size / 1e6:.2f} MB {files}")


def main(names: list[str]) -> None:
    for name in names or list(PAIRS):
        write(name, PAIRS[name])


if __name__ == "__main__":
    main(sys.argv[1:])

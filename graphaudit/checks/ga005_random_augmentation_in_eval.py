"""GA005 random-augmentation-in-eval."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, EvaluationData
from graphaudit.findings import Cause, Finding
from graphaudit.graph import pipeline as gp
from graphaudit.text import listing


@dataclass(frozen=True)
class RandomAugmentationInEval(Cause):
    """Random transforms applied by the evaluation pipeline."""

    names_subjects = True
    transforms: tuple[str, ...]  # the transforms' names
    paths: tuple[str, ...]  # their steps, in the same order

    def message(self) -> str:
        names = listing((f"{name} ({path})" for name, path in zip(self.transforms, self.paths)), None)
        return (
            f"The evaluation pipeline applies random augmentation: {names}. Each evaluation sees differently "
            "distorted inputs, so the metrics are noisy and lower than the model's."
        )

    def fix(self) -> str:
        return (
            "Remove the random transforms from the evaluation pipeline (use Resize + CenterCrop instead of "
            "RandomResizedCrop / RandomCrop, and no flips); keep them in training only."
        )


@register(
    "GA005",
    "random-augmentation-in-eval",
    severity="warning",
    needs=(EvaluationData,),
    uses=(DataSample,),
    once="one finding per evaluation pipeline: every random augmentation in it is listed",
    causes=(RandomAugmentationInEval,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Random augmentation (RandomCrop, RandomHorizontalFlip, RandAugment...) in the evaluation pipeline.

    What it does:
        Lists the random transforms of the evaluation pipeline (``eval_dataset=``): every
        transform whose name starts with ``Random`` and ``AutoAugment``, ``RandAugment``,
        ``TrivialAugmentWide``, ``UniformAugment``, ``CutOut``, ``MixUp``, ``CutMixBatch``...,
        and reports them as one warning. Shuffling the evaluation data is harmless and is not
        reported.

    Why is this bad:
        MindSpore's accuracy guide (§1.2, "data processing that differs from training"):
        augmentations such as random rotation or random cropping belong to the training set
        only; inference needs none. In evaluation they make every metric noisy (two runs on
        the same checkpoint disagree) and lower it, since the model is scored on distorted
        inputs. It is a warning, not an error, because test-time augmentation (averaging
        predictions over several augmented copies) is a deliberate technique.

    Example:
        ```python
        eval_ds = ds.ImageFolderDataset("val/").map([vision.Decode(), vision.RandomResizedCrop(224)], "image")
        ```

    Use instead:
        ```python
        eval_ds = ds.ImageFolderDataset("val/").map([vision.Decode(), vision.Resize(256), vision.CenterCrop(224)],
                                                    "image")
        ```
    """
    data = ctx.need(EvaluationData)
    graph = data.graph
    found = [n for n, d in graph.nodes(data=True) if d["kind"] == gp.TRANSFORM and d["random"]]
    if not found:
        return
    paths = tuple(graph.nodes[n]["path"] for n in found)
    cause = RandomAugmentationInEval(tuple(graph.nodes[n]["name"] for n in found), paths)
    yield ctx.finding("warning", paths[0], cause, anchors(ctx), subjects=paths)

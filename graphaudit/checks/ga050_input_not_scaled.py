"""GA050 input-not-scaled."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.data_stats import RawPixelValues, ScaleProblem, column_stats, scale_problems
from graphaudit.checks._shared.layers import consumers, weight_layers
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import clauses

#: Fewer values than this per channel (a 2-row batch of features) judge raw 0-255 values only.
MIN_VALUES = 8


@dataclass(frozen=True)
class InputNotScaled(Cause):
    """An input given to audit() that reaches a weight layer far from zero mean and unit scale."""

    index: int  # the input's position among those given to audit()
    shape: tuple[int, ...]
    layer: str  # the first weight layer it reaches, by path...
    layer_class: str  # ...and its class
    problems: tuple[ScaleProblem, ...]  # what is far from zero mean and unit scale
    stats: str  # the input's statistics, in words

    def message(self) -> str:
        return (
            f"inputs[{self.index}] (shape {list(self.shape)}) reaches {self.layer} ({self.layer_class}) unscaled: "
            f"{clauses(p.message() for p in self.problems)}. Measured on the batch given to audit(): {self.stats}."
        )

    def fix(self) -> str:
        return (
            "Scale the inputs before the network: images to [0, 1] (x / 255) and then per-channel (x - mean) / std "
            "of the training set; features standardised one by one. Or normalise inside the network first."
        )


@register(
    "GA050",
    "input-not-scaled",
    severity="warning",
    needs=(TracedPass,),
    once="one finding per input tensor given to audit(): each is scaled on its own",
    causes=(InputNotScaled,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A batch given to audit() that reaches a Dense or a convolution unscaled: raw 0-255 values, or features 100x apart.

    What it does:
        Measures each input of the traced batch that goes straight into a ``Dense`` or a
        convolution (through reshapes, casts, ``nn.Flatten`` or ``nn.Dropout`` only), per
        channel (``C`` of ``NCHW`` / ``NHWC`` images, each feature of ``(N, F)`` rows), with
        the statistics the data-pipeline checks use
        (:mod:`graphaudit.checks._shared.data_stats`), and reports a warning when it holds raw
        pixel values (integers from 0 up to at least 32 and at most 255), a channel whose mean
        lies beyond ±3 or whose standard deviation is above 10 or below 0.01, or channels whose
        standard deviations differ 100-fold or more. Integer inputs other than ``uint8`` (token
        ids) and inputs that the network rescales or normalises itself first (``x / 255``, a
        BatchNorm) are not judged: the rule looks only at values a weight layer multiplies as
        they are. With fewer than 8 values per channel (a batch of a few feature rows) only raw
        0-255 values are judged: a spread measured on 2 rows says nothing.

    Why is this bad:
        The first layer's pre-activations scale with its input: raw 0-255 pixels make them
        hundreds of times too large, saturating activations and making the first layer's
        gradients dominate the others'; features whose scales differ by orders of magnitude
        make the loss surface ill-conditioned, so one learning rate is too large for one feature
        and too small for another. Unscaled inputs are a rule of Theia (arXiv:2412.05775, which
        judges a network against its training data's characteristics) and of UMLAUT (CHI'21,
        its heuristic on input data not normalised); MindSpore's accuracy guide (§1.2) asks for
        inputs with mean 0 within [-1, 1]. Thresholds: those of GA003 (``data_stats``): ±3 and
        10 leave room for standardised data with heavy tails, 100x keeps binary features next
        to standardised ones from being reported.

    Example:
        ```python
        x = Tensor(images_uint8.astype(np.float32))       # values 0..255
        report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=loss)
        ```

    Use instead:
        ```python
        x = Tensor(((images_uint8 / 255.0 - mean) / std).astype(np.float32))
        ```

        or normalise inside the network (``x / 255`` then a BatchNorm, or ``vision.Normalize``
        in the pipeline).
    """
    traced = ctx.need(TracedPass)
    layers = {layer.call: layer for layer in weight_layers(ctx)}
    for index, value in enumerate(traced.inputs):
        node = f"input:{index}"
        if node not in ctx.graph or not hasattr(value, "asnumpy"):
            continue
        array = np.asarray(value.asnumpy())
        if array.ndim < 2 or not (array.dtype.kind == "f" or array.dtype == np.uint8) or not array.size:
            continue
        reached = [n for n in consumers(ctx.graph, node, layers) if n in layers]
        if not reached:
            continue  # the network computes on it first (scales, normalises, embeds): not judged
        stats = column_stats(array)
        problems = scale_problems(stats)
        if stats.channels and stats.count // len(stats.channels) < MIN_VALUES:
            problems = [
                p for p in problems if isinstance(p, RawPixelValues)
            ]  # too few values to judge a spread
        if not problems:
            continue
        first = layers[reached[0]]
        subject = f"inputs[{index}]"
        cause = InputNotScaled(
            index,
            tuple(int(d) for d in array.shape),
            first.path,
            type(first.cell).__name__,
            tuple(problems),
            stats.describe(),
        )
        yield ctx.finding("warning", subject, cause, [node, first.call])

"""GA960 weights-never-change."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing, pronouns

MIN_SAMPLES = 3


@dataclass(frozen=True)
class WeightsNeverChanged(Cause):
    """Parameters the optimizer holds that never changed over the sampled steps (*dead*: their gradient was zero)."""

    names_subjects = True
    names: tuple[str, ...]
    sampled: int  # the sampled steps judged
    dead: bool  # their gradient was zero at every one (else the optimizer got it and did not apply it)

    def message(self) -> str:
        they = pronouns(len(self.names))
        if self.dead:
            why = (
                f"{they.possessive} gradient was zero at every sampled step: {they.subject} {they.be} dead (a ReLU "
                "that never fires, a branch multiplied by 0, an output the loss does not read)"
            )
        else:
            why = (
                f"the optimizer got {they.possessive} gradients but did not apply them (a learning rate of 0 for "
                f"{they.possessive} group, requires_grad=False, a gradient mask)"
            )
        return (
            f"{counted(len(self.names), 'parameter')} never changed in {self.sampled} sampled steps "
            f"({listing(self.names)}): {why}."
        )

    def fix(self) -> str:
        if self.dead:
            return (
                "Find why no gradient reaches them: the activations before them (sigmoid or tanh that saturate, a "
                "ReLU whose input is never positive), their initialisation (a large negative bias), or their "
                "connection to the loss (an output the loss does not read)."
            )
        return (
            "Check their parameter group's learning rate and requires_grad, or take them out of the "
            "optimizer if they are meant to be frozen."
        )


@register(
    "GA960",
    "weights-never-change",
    severity="error",
    needs=(TrainingRun,),
    causes=(WeightsNeverChanged,),
    once="one finding per watched run and cause: every weight that never changed for that cause is listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Over the whole run, some weights the optimizer holds never changed: frozen by accident, or dead.

    What it does:
        At every sampled step of a watched run (3 at least), compares each parameter the
        optimizer holds before and after the update, bit for bit (while the run goes on,
        only at the steps where some parameter moved: a step where none did, such as the
        first epoch of ``nn.warmup_lr``, whose learning rate is 0, or a skipped update, says
        nothing about any one of them). It reports those that never changed, saying
        whether their gradient was zero at every sample (dead: a ReLU that never fires, a
        branch multiplied by 0) or not (the optimizer leaves them: a learning rate of 0 for
        their group, ``requires_grad=False``).

    Why is this bad:
        The accuracy guide (§2) tells users to look at the parameter distributions over the
        training to confirm which weights are frozen; a weight meant to learn that never
        moves keeps its initial value, and the network is smaller than it looks. MindInsight's
        watchpoint "weight not changed" caught the same.

    Example:
        ```python
        net.fc1.bias.set_data(Tensor(np.full(64, -50.0, np.float32)))  # the ReLU after it never fires
        ```

    Use instead:
        ```python
        net.fc1.bias.set_data(Tensor(np.zeros(64, np.float32)))
        ```
    """
    record = ctx.need(TrainingRun).record
    known = [s for s in record.samples if s.update_norms]
    # A sampled step where no weight at all moved says nothing about any one of them: the learning
    # rate of the whole network was 0 there (nn.warmup_lr's first epoch is at 0) or the update was
    # skipped (a loss-scaled overflow). While the run goes on, only the steps that moved some weight
    # are judged; once it is over, a run where nothing ever moved is judged on all its steps.
    moving = [s for s in known if any(u is None or u != 0.0 for u in s.update_norms)]
    if moving or not record.finished:
        known = moving
    if len(known) < MIN_SAMPLES:
        return
    dead, held = [], []
    for position, name in enumerate(record.parameters):
        updates = [s.update_norms[position] for s in known]
        if any(u is None or u != 0.0 for u in updates):
            continue
        grads = [s.grad_norms[position] for s in known if s.grad_norms is not None]
        (dead if grads and all(gn == 0.0 for gn in grads) else held).append(name)
    for names, is_dead in ((dead, True), (held, False)):
        if names:
            cause = WeightsNeverChanged(tuple(names), len(known), is_dead)
            yield ctx.finding("error", names[0], cause, parameter_nodes(ctx, names), subjects=tuple(names))

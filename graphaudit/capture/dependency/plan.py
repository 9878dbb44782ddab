"""What the dependency probe changes in the batch, and how it reads what moved (NumPy only).

The probe (:mod:`graphaudit.capture.dependency.probe`) runs the network on variants of the batch
the user gave. This module builds them and measures them; it runs no MindSpore.

The *primary* input is the first tensor of at least two dimensions (token ids ``(B, T)``,
images ``(B, C, H, W)``, embeddings ``(B, T, C)``). Every other *batched* input (at least two
dimensions, as many rows as the primary: ``token_type_ids``, ``position_ids``, a second image,
a segmentation mask) is changed with it, sample by sample: a variant that changes sample *j*
changes sample *j* of each, so that a model mixing samples through any of its inputs is found.
A change of some positions changes those positions of the inputs that have the sequence axis
(axis 1 as long as the primary's) and leaves the others as they were: a ``(B, C)`` side input
changed at "the future" would change the past too. A side input whose values are all the same
(an all-ones mask nobody named, ``token_type_ids`` of zeros) is left as it is: there is no
other valid value to give it. Reordering (``"roll"``) reorders the primary input only: the
tokens move, their positions (and ``position_ids``) stay. The named attention mask is changed
as a mask, and only where a whole sample changes: its 0s and 1s flipped over the first quarter
of the last sample (never every position masked).

Integer inputs are changed to other values already in that input's range (token ids stay
valid ids), float inputs get Gaussian noise of the input's own scale; the generator is
NumPy's own, seeded, never the global one.

A model may have two stacks (:class:`Stack`): an encoder-decoder's bidirectional encoder reads
``input_ids``, its causal decoder ``decoder_input_ids``. The sequence probes then change the
future of the decoder's input and of the inputs on its side only (every decoder position may
read every encoder token: the encoder's input is never "the future"), and the padding probe
changes the padded positions of the inputs on the attention mask's side only.

A *role* says which samples and positions a variant changes (:class:`Change`). A
:class:`Region` says where an output must not have moved; :func:`moved` measures the largest
change there, relative to the output's largest value.

Example:
    >>> import numpy as np
    >>> plan = Plan.of((np.arange(16, dtype=np.int32).reshape(2, 8),), sequence=True)
    >>> plan.batch, plan.length, plan.cut, plan.positions("future")
    (2, 8, 4, [5, 6])
    >>> changed = plan.variant([Change(1, "all")])[0]
    >>> bool((changed[0] == np.arange(8)).all()), bool((changed[1] != np.arange(8, 16)).all())
    (True, True)
    >>> ids, types = np.arange(16, dtype=np.int32).reshape(2, 8), np.array([[0] * 8, [1] * 8], np.int32)
    >>> changed = Plan.of((ids, types), sequence=False).variant([Change(1, "all")])[1]
    >>> changed[0].tolist() == [0] * 8, changed[1].tolist() == [0] * 8
    (True, True)
    >>> source, target = np.arange(16).reshape(2, 8), np.arange(12).reshape(2, 6)  # an encoder-decoder
    >>> plan = Plan.of((source, target), sequence=True, stack=Stack(source=1, side=(1,)))
    >>> future = plan.variant([Change(0, "future")])
    >>> bool((future[0] == source).all()), future[1][0].tolist() == [0, 1, 2, 3] + future[1][0, 4:].tolist()
    (True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "ONE_STACK",
    "Change",
    "Plan",
    "Region",
    "Stack",
    "moved",
    "reversed_batch",
    "samples_first",
    "sequence_axis",
    "time_major_shape",
]

_SEED = 20260226


@dataclass(frozen=True)
class Change:
    """Change sample *sample* of the primary input: ``"all"`` of it, its ``"future"`` (after the
    cut, but for the last position), its ``"pads"`` (masked positions) or ``"roll"``: the positions before the cut rolled
    by one (the tokens reordered, the rest left as it was)."""

    sample: int
    what: str


@dataclass(frozen=True)
class Stack:
    """Which input feeds the causal stack the sequence probes judge, and which inputs are on its side.

    ``Stack()``: one stack (a decoder-only model, or no sequence probe): the primary input is
    its source and every input is on its side. An encoder-decoder's decoder: ``source`` is the
    index of its input (``decoder_input_ids``) and ``side`` the inputs aligned with the
    decoder's positions (the source, ``decoder_*``, ``labels``); the others feed the encoder.
    ``shift``: how many positions later the stack sees a token of its source (1 for ``labels``
    that the model shifts right into its decoder's input).
    """

    source: int | None = None
    side: tuple[int, ...] | None = None
    shift: int = 0


#: A model with one stack: the primary input feeds it, every input is on its side.
ONE_STACK = Stack()


@dataclass(frozen=True)
class Region:
    """Where an output must not move: samples, and (for sequences) the positions of each."""

    samples: tuple[int, ...]
    positions: tuple[int, ...] | None = None  # None: every position


@dataclass
class Plan:
    """The batch as NumPy arrays, and the indices the probes work with."""

    arrays: list[np.ndarray | None]
    primary: int
    batch: int
    length: int = 0  # the sequence length T (0: not a sequence probe)
    cut: int = 0  # positions <= cut are "the past"; (cut, T) the future
    mask: int | None = None  # the index of the attention mask among the inputs
    pads: tuple[int, ...] = ()  # the masked positions of sample 0
    padded_by_probe: bool = False
    notes: list[str] = field(default_factory=list)
    batched: tuple[int, ...] = ()  # the inputs changed with the primary, sample by sample
    stack: Stack = ONE_STACK
    source: int = 0  # the input whose future and order the sequence probes change
    # The network reads time-major sequences (a batch_first=False recurrent layer): a tensor
    # whose axis 1 is the batch and axis 0 is not, (T, B, ...), is read with its batch first.
    time_major: bool = False

    @classmethod
    def of(
        cls,
        arrays: Sequence[np.ndarray | None],
        *,
        sequence: bool,
        mask: int | None = None,
        stack: Stack = ONE_STACK,
        time_major: bool = False,
    ) -> Plan:
        """The plan for *arrays* (the batch), or raise ``ValueError`` saying why the probe cannot run."""
        arrays = [None if a is None else np.array(a) for a in arrays]
        primary = next((i for i, a in enumerate(arrays) if a is not None and a.ndim >= 2), None)
        if primary is None:
            raise ValueError("no input has a batch dimension and a second one (the probe changes that input)")
        first = arrays[primary]
        assert first is not None
        plan = cls(arrays, primary, int(first.shape[0]), stack=stack, source=primary, time_major=time_major)
        if plan.batch < 2:
            raise ValueError(f"the batch holds {plan.batch} sample: the probe needs 2 or more")
        if sequence:
            if stack.source is not None:
                plan.source = stack.source
                source = arrays[stack.source]
                if source is None or source.ndim < 2 or source.shape[0] != plan.batch:
                    raise ValueError(
                        f"input {stack.source + 1}, which feeds the causal stack, is not a (batch, length, ...) "
                        f"tensor of {plan.batch} samples"
                    )
                first = source
            plan.length = int(first.shape[1])
            if plan.length < 6:
                raise ValueError(f"the sequence is {plan.length} positions long: the probes need 6 or more")
            plan.cut = plan.length // 2
        if mask is not None:
            plan._pad(mask)
        plan.batched = tuple(
            i
            for i, a in enumerate(plan.arrays)
            if i != primary
            and a is not None
            and (i == plan.source or i == plan.mask or _varies(a))
            and a.ndim >= 2
            and a.shape[0] == plan.batch
        )
        return plan

    def _pad(self, mask: int) -> None:
        values = self.arrays[mask]
        if values is None or values.ndim != 2 or values.shape[0] != self.batch:
            raise ValueError("the attention mask is not a (batch, length) tensor")
        self.mask = mask
        self.length = self.length or int(values.shape[1])
        width = int(values.shape[1])
        pads = tuple(int(i) for i in np.flatnonzero(values[0] == 0))
        if not pads:  # no padding in the batch given: sample 0 is left-padded by a quarter
            pads = tuple(range(max(1, width // 4)))
            values = values.copy()
            values[0, list(pads)] = 0
            self.arrays[mask] = values
            self.padded_by_probe = True
        if len(pads) == width:
            raise ValueError("sample 0 of the attention mask masks every position")
        self.pads = pads

    @property
    def judged_pads(self) -> tuple[int, ...]:
        """Sample 0's padded positions among the judged stack's: none when the mask is another stack's.

        An encoder's padding is no position of the decoder: with two stacks and the encoder's
        mask, every position of the decoder's output is real.
        """
        return self.pads if self.mask is not None and self._on_side(self.mask) else ()

    @property
    def real(self) -> tuple[int, ...]:
        """The positions of sample 0 that are not padding."""
        return tuple(i for i in range(self.length) if i not in self.pads)

    def positions(self, what: str) -> list[int]:
        """The positions *what* changes, counted as the causal stack sees them (see :meth:`_where`)."""
        if what == "future":  # the last position is kept: what reaches it shows which cells mix positions
            return list(range(self.cut + 1, self.length - 1))
        if what == "pads":
            return list(self.pads)
        if what == "roll":
            return list(range(self.cut))
        return list(range(int(self.arrays[self.primary].shape[1])))  # type: ignore[union-attr]

    def variant(self, changes: Sequence[Change]) -> list[np.ndarray | None]:
        """The inputs with *changes* made to every batched input (a new list; the plan is unchanged)."""
        arrays = list(self.arrays)
        rng = np.random.default_rng(_SEED)
        for index in (self.primary, *self.batched):
            data = np.array(arrays[index])
            for change in changes:
                where = self._where(index, data, change)
                if not where:
                    continue
                if change.what == "roll":
                    data[change.sample, where] = np.roll(data[change.sample, where], 1, axis=0)
                elif index == self.mask:
                    data[change.sample, where] = np.where(data[change.sample, where] == 0, 1, 0)
                else:
                    data[change.sample, where] = _other_values(data[change.sample, where], data, rng)
            arrays[index] = data
        return arrays

    def _where(self, index: int, data: np.ndarray, change: Change) -> list[int] | None:
        """The positions of input *index* that *change* changes, or ``None`` when it leaves it alone.

        A whole sample changes every input. The pads change the inputs beside the attention
        mask (an encoder's padding never changes the decoder's inputs). The future and the
        order change the causal stack's source, where its tokens are *shift* positions earlier
        than the stack sees them, and the future also the other inputs on its side, as long as
        the sequence: an encoder's input is never the decoder's future.
        """
        if change.what == "all":
            if index == self.mask:  # a quarter of the sample flipped: never every position masked
                return list(range(max(1, data.shape[1] // 4)))
            return list(range(data.shape[1]))
        if index == self.mask:
            # The tokens are reordered, not the mask; the pads are what the mask says; and the
            # mask's future is kept: positions computed from it (OPT's position ids, a running
            # sum of the mask) would move at the last position, and GA342 reads which cell
            # first moves there as the first that mixes positions.
            return None
        if change.what == "pads":
            assert self.mask is not None
            width = self.arrays[self.mask].shape[1]  # type: ignore[union-attr]
            same_side = self._on_side(index) == self._on_side(self.mask)
            return self.positions("pads") if same_side and data.shape[1] == width else None
        if index == self.source:
            shift = self.stack.shift
            return [p - shift for p in self.positions(change.what) if p >= shift]
        if change.what == "roll" or not self._on_side(index) or data.shape[1] != self.length:
            return None  # reordering moves the tokens only; no sequence axis: no position to change
        return self.positions(change.what)

    def _on_side(self, index: int) -> bool:
        """Whether input *index* is on the causal stack's side (every input is, with one stack)."""
        return self.stack.side is None or index in self.stack.side

    def rolls(self) -> bool:
        """Whether rolling the positions before the cut of the last sample changes it (not all equal)."""
        where = self._where(self.source, self.arrays[self.source], Change(self.batch - 1, "roll"))  # type: ignore[arg-type]
        last = self.arrays[self.source][self.batch - 1, where]  # type: ignore[index]
        return bool((np.roll(last, 1, axis=0) != last).any())


def samples_first(values: np.ndarray, batch: int) -> np.ndarray:
    """*values* with one row per sample on axis 0: a time-major ``(T, B, ...)`` array (axis 1
    has *batch* rows, axis 0 not) with its first two axes swapped, any other as it is.

    Only for a network that reads time-major sequences (:attr:`Plan.time_major`): elsewhere a
    ``(B*T, C)`` flattening with ``C == B`` would be misread. *batch* 0: every array as it is.

    Example:
        >>> samples_first(np.zeros((5, 2, 3)), 2).shape, samples_first(np.zeros((2, 5, 3)), 2).shape
        ((2, 5, 3), (2, 5, 3))
    """
    return values.swapaxes(0, 1) if time_major_shape(values.shape, batch) else values


def time_major_shape(shape: Sequence[int], batch: int) -> bool:
    """Whether *shape* is read batch first by :func:`samples_first` (axis 1 is *batch*, axis 0 not)."""
    return bool(batch) and len(shape) >= 2 and shape[0] != batch and shape[1] == batch


def reversed_batch(values: np.ndarray, batch: int, pairs: bool = False) -> np.ndarray:
    """*values* with its samples in the opposite order (axis 0, when it has *batch* rows); its own inverse.

    *pairs* (an output): a ``(B, B)`` array pairs the samples on purpose (a similarity
    matrix), and both its axes are reversed. A ``(B, C)`` array with ``C == B`` by chance is then
    read wrongly (the probe's runner takes the reading closer to the first pass), and so is an
    array whose axis 0 has *batch* rows but is no batch axis: the comparison moves, and only
    costs the passes that tell causes apart (a finding is never read on a reversed pass).
    """
    if values.ndim == 0 or values.shape[0] != batch:
        return values
    values = values[::-1]
    return values[:, ::-1] if pairs and values.ndim > 1 and values.shape[1] == batch else values


def _varies(values: np.ndarray) -> bool:
    return values.size > 0 and bool((values != values.flat[0]).any())


def _other_values(values: np.ndarray, batch: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(batch.dtype, np.integer) or batch.dtype == np.bool_:
        # Negative values beside non-negative ones are sentinels, not ids (HF's -100 "ignore"
        # in labels, -1 padding): kept, and the range is that of the ids.
        sentinels = batch.dtype != np.bool_ and bool((batch < 0).any()) and bool((batch >= 0).any())
        valid = batch[batch >= 0] if sentinels else batch
        low, high = int(valid.min()), int(valid.max())
        span = high - low + 1
        if span < 2:
            raise ValueError("every value of the input is the same: there is no other value to change it to")
        shift = rng.integers(1, span, values.shape)
        changed = ((values.astype(np.int64) - low + shift) % span + low).astype(batch.dtype)
        return np.where(values < 0, values, changed) if sentinels else changed
    scale = float(np.std(batch)) or 1.0
    return (values + rng.normal(0.0, scale, values.shape)).astype(batch.dtype)


def sequence_axis(shape: tuple[int, ...], length: int) -> int | None:
    """The axis of a ``(B, ...)`` tensor that runs over the sequence: the first after the batch of size *length*."""
    return next((axis for axis in range(1, len(shape)) if shape[axis] == length), None)


def moved(before: np.ndarray, after: np.ndarray, region: Region, length: int) -> tuple[float, float] | None:
    """``(largest change in region, largest |value|)`` of one ``(B, ...)`` output, or ``None`` when not comparable.

    Non-finite values count as a change when only one side is finite. A tensor whose
    second axis is as long as the batch may pair samples on purpose (a ``(B, B)`` similarity
    matrix: entry *i, j* depends on samples *i* and *j*): only its entries between the
    region's samples are compared.
    """
    if before.shape != after.shape or before.ndim == 0 or before.shape[0] <= max(region.samples):
        return None
    samples = list(region.samples)
    a = before[samples].astype(np.float64)
    b = after[samples].astype(np.float64)
    if before.ndim > 1 and before.shape[1] == before.shape[0]:
        if region.positions is not None:
            return None
        a, b = a[:, samples], b[:, samples]
    elif region.positions is not None:
        axis = sequence_axis(before.shape, length)
        if axis is None:
            return None
        a = np.take(a, list(region.positions), axis=axis)
        b = np.take(b, list(region.positions), axis=axis)
    finite_a, finite_b = np.isfinite(a), np.isfinite(b)
    both = finite_a & finite_b
    change = float(np.abs(a - b)[both].max(initial=0.0))
    if (finite_a != finite_b).any():
        change = float("inf")
    whole = before.astype(np.float64)
    scale = float(np.abs(whole[np.isfinite(whole)]).max(initial=0.0))
    return change, scale

"""The work counter's fast paths add exactly what one ``add`` per amount would.

Virtual time under the ``counted`` model is a function of the accumulated counts, so
:meth:`WorkCounter.add_all` and the one-kind shortcuts (``flops``, ``kernel``, ``call``,
``steps``) must produce the same floats, in the same phases, as :meth:`WorkCounter.add`; an
unknown kind must still fail with the one clear error.
"""

from __future__ import annotations

import numpy as np
import pytest

from tvbo.work import WORK_KINDS, NullWorkCounter, WorkCounter


def _amounts(seed: int, size: int = 200) -> list[tuple[str, float]]:
    """Pairs of awkward amounts (many magnitudes, ints, numpy scalars): rounding shows."""
    rng = np.random.default_rng(seed)
    pairs: list[tuple[str, float]] = []
    for _ in range(size):
        kind = WORK_KINDS[int(rng.integers(len(WORK_KINDS)))]
        amount = float(rng.random() * 10.0 ** rng.integers(-3, 9))
        pick = int(rng.integers(3))
        pairs.append((kind, amount if pick == 0 else int(amount) if pick == 1
                      else np.float64(amount)))
    return pairs


def _by_add(pairs: list[tuple[str, float]], phases: list[str | None]) -> WorkCounter:
    counter = WorkCounter()
    for (kind, amount), phase in zip(pairs, phases, strict=True):
        if phase is None:
            counter.add(kind, amount)
        else:
            with counter.phase(phase):
                counter.add(kind, amount)
    return counter


def _phases(seed: int, size: int) -> list[str | None]:
    rng = np.random.default_rng(seed + 1)
    names = [None, "fit", "acquisition"]
    return [names[int(i)] for i in rng.integers(len(names), size=size)]


def _bits(counter: WorkCounter) -> dict[str, dict[str, bytes]]:
    return {p: {k: np.float64(v).tobytes() for k, v in kinds.items()}
            for p, kinds in counter.counts().items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_add_all_equals_one_add_per_pair_bit_for_bit(seed):
    pairs = _amounts(seed)
    phases = _phases(seed, len(pairs))
    fast = WorkCounter()
    # groups of 1-4 consecutive pairs that share a phase, as a hot loop reports them
    i = 0
    while i < len(pairs):
        j = i + 1
        while j < len(pairs) and j - i < 4 and phases[j] == phases[i]:
            j += 1
        group = tuple(pairs[i:j])
        if phases[i] is None:
            fast.add_all(group)
        else:
            with fast.phase(phases[i]):
                fast.add_all(group)
        i = j
    assert _bits(fast) == _bits(_by_add(pairs, phases))


@pytest.mark.parametrize("seed", [3, 4])
def test_one_kind_shortcuts_equal_add_bit_for_bit(seed):
    pairs = _amounts(seed)
    phases = _phases(seed, len(pairs))
    fast = WorkCounter()
    shortcut = {"flop": fast.flops, "kernel": fast.kernel, "call": fast.call,
                "step": fast.steps}
    for (kind, amount), phase in zip(pairs, phases, strict=True):
        if phase is None:
            shortcut[kind](amount)
        else:
            with fast.phase(phase):
                shortcut[kind](amount)
    assert _bits(fast) == _bits(_by_add(pairs, phases))
    counter = WorkCounter()
    counter.call()
    assert counter.counts() == {"update": {"call": 1.0}}


def test_work_goes_to_the_innermost_phase_or_the_default():
    counter = WorkCounter()
    counter.add_all((("call", 1), ("flop", 2.5)))
    with counter.phase("acquisition"):
        counter.flops(1.0)
        with counter.phase("fit"):
            counter.add_all((("kernel", 100),))
        counter.steps(3)
    assert counter.counts() == {
        "update": {"call": 1.0, "flop": 2.5},
        "acquisition": {"flop": 1.0, "step": 3.0},
        "fit": {"kernel": 100.0},
    }
    assert all(type(v) is float for kinds in counter.counts().values() for v in kinds.values())


@pytest.mark.parametrize("counter_type", [WorkCounter, NullWorkCounter])
def test_an_unknown_kind_is_rejected_with_the_valid_ones(counter_type):
    counter = counter_type()
    message = r"unknown work kind 'flops'; valid kinds: flop, kernel, call, step"
    with pytest.raises(ValueError, match=message):
        counter.add("flops", 1.0)
    with pytest.raises(ValueError, match=message):
        counter.add_all((("call", 1.0), ("flops", 1.0)))
    # the pairs before the bad one were added, as the same add() calls would have
    expected = {} if counter_type is NullWorkCounter else {"update": {"call": 1.0}}
    assert counter.counts() == expected


def test_the_null_counter_records_nothing():
    null = NullWorkCounter()
    null.add("flop", 5.0)
    null.add_all((("call", 1.0), ("kernel", 4.0)))
    null.flops(1.0)
    null.kernel(2.0)
    null.call()
    null.steps(3.0)
    with null.phase("fit"):
        null.flops(1.0)
    assert null.counts() == {}

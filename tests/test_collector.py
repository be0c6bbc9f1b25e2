"""The cyclic collector paused while a run builds its inputs and plan (issue 26)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from rag_evaluator.collector import building_long_lived


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()  # what a test froze goes back to the collector
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_paused_in_the_block_and_runs_again_after() -> None:
    gc.enable()
    with building_long_lived():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with building_long_lived():
        pass
    assert not gc.isenabled()


def test_what_the_block_built_is_left_out_of_later_collections() -> None:
    gc.enable()
    gc.unfreeze()
    with building_long_lived():
        built = [[number] for number in range(5_000)]
    # Every list built in the block is frozen: a collection no longer walks them.
    assert gc.get_freeze_count() >= len(built)
    assert all(not any(entry is row for entry in gc.get_objects(0)) for row in built[:3])


def test_the_collector_runs_again_when_the_block_raises() -> None:
    gc.enable()
    with pytest.raises(ValueError), building_long_lived():
        raise ValueError("stop")
    assert gc.isenabled()

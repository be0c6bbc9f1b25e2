"""The response cache writes its results in groups: none is lost when the cache is closed, a
full group is visible to other runs at once, and a result waiting to be written is found."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.llm import response_cache
from rag_evaluator.llm.response_cache import CACHE_FILE_NAME, ResponseCache


def _value(number: int) -> dict[str, object]:
    return {"precision": number % 2, "summary": f"result {number}"}


def test_results_waiting_to_be_written_are_found_and_written_when_the_cache_closes(
    tmp_path: Path,
) -> None:
    path = tmp_path / CACHE_FILE_NAME
    cache = ResponseCache(path)
    cache.put("k1", "judge", _value(1))
    assert cache.get("k1") == _value(1)  # found before it is written
    assert cache.holds_family("judge")
    other_run = ResponseCache(path)
    assert other_run.get("k1") is None  # not written yet: one transaction per group
    cache.close()
    assert other_run.get("k1") == _value(1)
    other_run.close()


def test_a_full_group_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / CACHE_FILE_NAME
    cache, other_run = ResponseCache(path), ResponseCache(path)
    for number in range(64):
        cache.put(f"k{number}", "judge", _value(number))
    assert [other_run.get(f"k{number}") for number in range(64)] == [
        _value(number) for number in range(64)
    ]
    cache.close()
    other_run.close()


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=80), st.integers(min_value=0, max_value=9)),
        max_size=200,
    )
)
def test_whatever_is_stored_the_last_result_of_each_key_is_kept(
    tmp_path_factory: object, stored: list[tuple[int, int]]
) -> None:
    folder = tmp_path_factory.mktemp("cache")  # type: ignore[attr-defined]
    path = folder / CACHE_FILE_NAME
    cache = ResponseCache(path)
    latest: dict[str, dict[str, object]] = {}
    for key_number, value_number in stored:
        cache.put(f"k{key_number}", "judge", _value(value_number))
        latest[f"k{key_number}"] = _value(value_number)
        assert cache.get(f"k{key_number}") == _value(value_number)
    cache.close()
    reopened = ResponseCache(path)
    assert {key: reopened.get(key) for key in latest} == latest
    reopened.close()


def _holding_three(folder: Path) -> Path:
    """A cache file an earlier run left holding the results k0, k1 and k2."""
    path = folder / CACHE_FILE_NAME
    earlier = ResponseCache(path)
    for number in range(3):
        earlier.put(f"k{number}", "judge", _value(number))
    earlier.close()
    return path


def test_a_small_cache_knows_which_keys_it_holds_without_a_query_each(tmp_path: Path) -> None:
    cache = ResponseCache(_holding_three(tmp_path))
    assert [cache.might_hold(f"k{number}") for number in range(4)] == [True, True, True, False]
    cache.put("k3", "judge", _value(3))  # stored after the keys were read: held too
    assert cache.might_hold("k3") and cache.get("k3") == _value(3)
    cache.flush()
    assert cache.might_hold("k3")
    cache.close()
    assert not ResponseCache(None).might_hold("k1")  # --no-cache holds nothing


def test_a_large_cache_may_hold_any_key_and_is_asked_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(response_cache, "KEYS_IN_MEMORY", 2)
    cache = ResponseCache(_holding_three(tmp_path))
    assert cache.might_hold("k1") and cache.might_hold("anything")
    assert cache.get("k1") == _value(1) and cache.get("anything") is None
    cache.close()

"""The response cache says whether it holds any entry of a family, so that a run over a fresh
cache skips computing every question's key (issue 26); lookups find the same entries."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.llm.response_cache import ResponseCache

FAMILIES = st.sampled_from(["judge", "ragas", "factual_accuracy", "classify", "rubric"])


def test_a_fresh_cache_holds_no_family(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    assert not cache.holds_family("judge")
    cache.close()


@given(stored=st.lists(st.tuples(st.text(min_size=1, max_size=8), FAMILIES), max_size=6))
def test_it_holds_exactly_the_families_stored(stored: list[tuple[str, str]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache.sqlite"
        writer = ResponseCache(path)
        for key, family in stored:
            writer.put(key, family, {"value": key})
        writer.close()
        reader = ResponseCache(path)
        # A key stored again replaces its entry: the last family stored under it counts.
        families = set(dict(stored).values())
        for family in ("judge", "ragas", "factual_accuracy", "classify", "rubric"):
            assert reader.holds_family(family) == (family in families)
        for key, _ in stored:
            assert reader.get(key) is not None
        reader.close()


def test_a_family_stored_during_the_run_is_held(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    assert not cache.holds_family("judge")
    cache.put("k", "judge", {"value": 1})
    assert cache.holds_family("judge")
    assert cache.get("k") == {"value": 1}
    cache.close()


def test_another_process_entries_count_when_asked_first(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    other = sqlite3.connect(path)
    other.execute(
        "INSERT INTO results (key, family, value, created) VALUES ('k', 'judge', '{}', 0)"
    )
    other.commit()
    other.close()
    assert cache.holds_family("judge")
    cache.close()


def test_a_disabled_cache_holds_nothing() -> None:
    cache = ResponseCache(None)
    assert not cache.enabled
    assert not cache.holds_family("judge")

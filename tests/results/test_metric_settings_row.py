"""The ``#SUMMARY: Metric Settings:`` row: which settings define which metrics, its text, and
reading it back from a results file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.offline.metric_settings import (
    BERTSCORE_MODEL,
    EMBEDDING_MODEL,
    FALLBACK_PHRASES,
    MATCH,
    METRIC_SETTINGS,
    MIN_RETRIEVAL_SCORE,
    OVERLAP_THRESHOLD,
    REQUIRE_CITATIONS,
    SETTING_NAMES,
    SETTING_SCOPES,
    SIMILARITY_THRESHOLD,
    K,
    declared_settings,
    defining_settings,
    fallback_phrases_text,
    parse_settings,
    run_settings,
    setting_values,
    settings_json,
    settings_text,
)
from rag_evaluator.offline.options import DEFAULT_FALLBACK_PHRASES, MetricOptions
from rag_evaluator.offline.registry import METRIC_SCALES, metric_names
from rag_evaluator.results.reader import read_run_scores

BUNDLED = "all-MiniLM-L6-v2 (bundled)"


def values(**changes: object) -> dict[str, str]:
    return setting_values(MetricOptions(**changes), BUNDLED, BUNDLED)  # type: ignore[arg-type]


def test_every_column_a_setting_defines_is_a_metric_of_the_tool() -> None:
    for scope in SETTING_SCOPES:
        assert scope.setting in SETTING_NAMES
        assert scope.columns <= set(METRIC_SCALES), scope


def test_a_retrieval_run_records_k_and_match_and_only_its_modes_threshold() -> None:
    retrieval = metric_names("retrieval")
    assert run_settings(retrieval, values()) == {K: "5", MATCH: "exact"}
    assert run_settings(retrieval, values(match="overlap", overlap_threshold=0.6)) == {
        K: "5",
        MATCH: "overlap",
        OVERLAP_THRESHOLD: "0.6",
    }
    assert run_settings(retrieval, values(match="similarity")) == {
        K: "5",
        MATCH: "similarity",
        SIMILARITY_THRESHOLD: "0.8",
        EMBEDDING_MODEL: BUNDLED,
    }


def test_families_record_only_the_settings_of_their_metrics() -> None:
    assert run_settings(metric_names("lexical") + metric_names("overlap"), values()) == {}
    assert run_settings(metric_names("quality"), values(require_citations=False)) == {
        FALLBACK_PHRASES: "default",
        MIN_RETRIEVAL_SCORE: "0.5",
        REQUIRE_CITATIONS: "no",
    }
    semantic = setting_values(MetricOptions(), "models/mine", BUNDLED)
    assert run_settings(metric_names("semantic"), semantic) == {
        EMBEDDING_MODEL: "models/mine",
        BERTSCORE_MODEL: BUNDLED,
    }
    # A run without references has no BERTScore column: its model is not recorded.
    assert run_settings(["answer_relevance", "hallucination"], semantic) == {
        EMBEDDING_MODEL: "models/mine"
    }
    # Only the context overlap of the retrieval family: no setting defines it.
    assert run_settings(["context_overlap"], values()) == {}


def test_the_settings_defining_a_column_follow_its_files_match_mode() -> None:
    similarity = run_settings(
        metric_names("retrieval") + metric_names("semantic"), values(match="similarity")
    )
    assert set(defining_settings("precision_at_k", similarity)) == {
        K,
        MATCH,
        SIMILARITY_THRESHOLD,
        EMBEDDING_MODEL,
    }
    assert set(defining_settings("mrr", similarity)) == {
        MATCH,
        SIMILARITY_THRESHOLD,
        EMBEDDING_MODEL,
    }
    assert defining_settings("context_overlap", similarity) == {}
    assert set(defining_settings("bert_score_f1", similarity)) == {BERTSCORE_MODEL}
    exact = run_settings(metric_names("retrieval") + metric_names("semantic"), values())
    # Under exact matching the embedding model defines the semantic metrics only.
    assert set(defining_settings("mrr", exact)) == {MATCH}
    assert set(defining_settings("hallucination", exact)) == {EMBEDDING_MODEL}


def test_fallback_phrases_are_recorded_short_and_by_what_the_check_compares() -> None:
    assert fallback_phrases_text(DEFAULT_FALLBACK_PHRASES) == "default"
    assert fallback_phrases_text(()) == "none"
    assert fallback_phrases_text(("  ",)) == "none"
    custom = fallback_phrases_text(("No idea", "cannot say"))
    assert custom.startswith("custom sha256:") and len(custom) == len("custom sha256:") + 12
    # Folded, each once, in any order: the same check, the same text.
    assert fallback_phrases_text(("CANNOT   say", "no idea", "No idea")) == custom
    assert fallback_phrases_text(("no idea",)) != custom
    # The defaults reordered are a custom list (without the default non-answer patterns).
    assert fallback_phrases_text(tuple(reversed(DEFAULT_FALLBACK_PHRASES))).startswith("custom")


def test_the_row_text_is_stable() -> None:
    settings = run_settings(metric_names("retrieval"), values(k=3, match="overlap"))
    assert settings_text(settings) == "k=3; match=overlap; overlap-threshold=0.7"
    assert settings_json(settings) == {K: 3, MATCH: "overlap", OVERLAP_THRESHOLD: 0.7}
    assert settings_json({REQUIRE_CITATIONS: "yes", K: "five"}) == {
        REQUIRE_CITATIONS: True,
        K: "five",
    }


_NAMES = st.sampled_from(SETTING_NAMES)


@given(st.dictionaries(_NAMES, st.text(max_size=40), max_size=len(SETTING_NAMES)))
def test_any_values_read_back_unchanged(settings: dict[str, str]) -> None:
    text = settings_text(settings)
    assert text.isprintable() and text == text.strip()
    assert parse_settings(text) == settings


@given(st.text(max_size=200))
def test_any_row_value_parses_without_error(text: str) -> None:
    parsed = parse_settings(text)
    assert all(name and name == name.strip() for name in parsed)


def test_a_summary_without_the_row_records_nothing() -> None:
    assert declared_settings([("Total Questions", "3")]) is None
    assert declared_settings([(METRIC_SETTINGS, "k=5")]) == {K: "5"}


def _results_file(path: Path, summary: list[str]) -> Path:
    rows = "Question Number,precision_at_k\n1,0.2000\n2,1.0000\n"
    path.write_text("".join(f"#SUMMARY: {line}\n" for line in summary) + rows, encoding="utf-8")
    return path


def test_the_reader_keeps_a_files_settings(tmp_path: Path) -> None:
    model = "/models/a; b=c %20"
    text = settings_text({K: "5", MATCH: "similarity", EMBEDDING_MODEL: model})
    scores = read_run_scores(
        _results_file(tmp_path / "a.csv", ["Total Questions: 2", f"{METRIC_SETTINGS}: {text}"])
    )
    assert scores.settings == {K: "5", MATCH: "similarity", EMBEDDING_MODEL: model}
    older = read_run_scores(_results_file(tmp_path / "b.csv", ["Total Questions: 2"]))
    assert older.settings is None

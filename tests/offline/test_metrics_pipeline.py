"""The offline metrics of a run: families, columns, empty cells, warnings, missing extras."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rag_evaluator.errors import UsageError
from rag_evaluator.inputs.load import load_answers, load_ground_truth, load_questions
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.selection import select_items
from rag_evaluator.metrics import (
    MetricOptions,
    compute_offline_metrics,
    families_with_inputs,
    keyword_coverage,
    precision_at_k,
)
from rag_evaluator.offline.runner import metric_columns


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def run_files(tmp_path: Path) -> list[EvaluationItem]:
    """Three input files with the optional list columns, loaded the way evaluate loads them."""
    questions = write_csv(
        tmp_path / "questions.csv",
        ["Question Number", "Question"],
        [[1, "What is the premium?"], [2, "Which rules apply?"], [3, "Where is it?"]],
    )
    ground_truth = write_csv(
        tmp_path / "ground_truth.csv",
        ["Question Number", "Ground Truth", "Relevant Contexts", "Required Facts"],
        [
            [1, "The premium is $604", json.dumps(["Base rate 293", "Factor 2.061"]), "$604"],
            [2, "* Rule C-1\n* Rule C-2", "", "Rule C-1; Rule C-2"],
            [3, "Paris", "[]", ""],
        ],
    )
    answers = write_csv(
        tmp_path / "rag_answers.csv",
        ["Question Number", "RAG Answer", "Contexts"],
        [
            [1, "It is 604.0 dollars", json.dumps(["Factor 2.061", "Unrelated", "Base rate 293"])],
            [2, "Rule C-1 only", ""],
            [3, "Paris", json.dumps(["Paris is in France"])],
        ],
    )
    selection = select_items(
        load_questions(questions), load_ground_truth(ground_truth), load_answers(answers)
    )
    return selection.items


@pytest.mark.needs_extra("overlap")
def test_lexical_overlap_and_retrieval_columns_in_display_order(
    run_files: list[EvaluationItem],
) -> None:
    result = compute_offline_metrics(
        run_files, ["retrieval", "lexical", "overlap"], MetricOptions()
    )
    assert result.columns == [
        "exact_match",
        "keyword_coverage",
        "number_match",
        "answer_completeness",
        "citation_quality",
        "dont_know",
        "list_coverage",
        "fact_score",
        "bleu",
        "rouge1",
        "rouge2",
        "rouge_l",
        "precision_at_k",
        "recall_at_k",
        "f1_at_k",
        "context_precision",
        "mrr",
        "ndcg_at_k",
        "hybrid_log_rank",
        "context_overlap",
    ]
    assert result.columns == metric_columns(["lexical", "overlap", "retrieval"])
    assert set(result.scores) == {1, 2, 3}
    assert all(list(row) == result.columns for row in result.scores.values())


def test_scores_come_from_the_files_columns(run_files: list[EvaluationItem]) -> None:
    result = compute_offline_metrics(run_files, ["lexical", "retrieval"], MetricOptions(k=5))
    first, second, third = result.scores[1], result.scores[2], result.scores[3]
    assert first["number_match"] == 1.0  # 604.0 is $604
    assert first["fact_score"] == 1.0
    # Golden chunks at ranks 1 and 3 of 3: P@5 = 2/5, recall 1, RR 1.
    assert first["precision_at_k"] == pytest.approx(0.4)
    assert first["recall_at_k"] == 1.0
    assert first["mrr"] == 1.0
    # Relevant at ranks 1 and 3: (1/1 + 2/3) / 2 (ragas's rank-weighted context precision).
    assert first["context_precision"] == pytest.approx((1 + 2 / 3) / 2)
    assert second["list_coverage"] == 0.5
    assert second["fact_score"] == 0.5  # "Rule C-1; Rule C-2" split at the semicolon
    assert second["precision_at_k"] is None  # neither Contexts nor Relevant Contexts
    assert third["exact_match"] == 1.0
    assert third["fact_score"] is None  # blank Required Facts cell
    assert third["precision_at_k"] == 0.0  # "[]": no relevant chunk, so nothing relevant
    assert third["recall_at_k"] is None


def test_each_metric_with_empty_cells_is_warned_about_once_with_its_reasons(
    run_files: list[EvaluationItem],
) -> None:
    result = compute_offline_metrics(run_files, ["lexical", "retrieval"], MetricOptions())
    by_metric = {warning.split(":", 1)[0]: warning for warning in result.warnings}
    assert len(by_metric) == len(result.warnings)
    assert by_metric["fact_score"] == (
        "fact_score: left empty for 1 of 3 question(s): "
        "no Required Facts in ground_truth.csv (question 3)"
    )
    assert by_metric["recall_at_k"] == (
        "recall_at_k: left empty for 2 of 3 question(s): "
        "no Contexts in rag_answers.csv (question 2); no relevant chunk is listed (question 3)"
    )
    assert "exact_match" not in by_metric


def test_long_lists_of_question_numbers_are_shortened() -> None:
    items = [EvaluationItem(number, "Q", "12 apples", "none") for number in range(1, 16)]
    items += [EvaluationItem(20 + 2 * number, "Q", "no digits", "x") for number in range(12)]
    result = compute_offline_metrics(items, ["lexical"], MetricOptions())
    warning = next(w for w in result.warnings if w.startswith("number_match"))
    assert warning == (
        "number_match: left empty for 12 of 27 question(s): the ground truth has no numbers "
        "(question 20, 22, 24, 26, 28, 30, 32, 34, 36, 38 and 2 more)"
    )


def test_the_library_functions_agree_with_the_run(run_files: list[EvaluationItem]) -> None:
    result = compute_offline_metrics(run_files, ["lexical", "retrieval"], MetricOptions(k=2))
    first = run_files[0]
    assert first.contexts is not None and first.relevant_contexts is not None
    assert result.scores[1]["precision_at_k"] == precision_at_k(
        first.relevant_contexts, retrieved_chunks=first.contexts, k=2
    )
    assert result.scores[1]["keyword_coverage"] == keyword_coverage(
        first.rag_answer, first.ground_truth
    )


def test_families_with_inputs_needs_both_context_columns_for_retrieval() -> None:
    plain = [EvaluationItem(1, "Q", "A", "A")]
    only_contexts = [EvaluationItem(1, "Q", "A", "A", contexts=["c"])]
    both = [*only_contexts, EvaluationItem(2, "Q", "A", "A", contexts=[], relevant_contexts=[])]
    assert families_with_inputs([]) == []
    assert families_with_inputs(plain) == ["lexical", "overlap", "semantic", "quality"]
    assert families_with_inputs(only_contexts) == ["lexical", "overlap", "semantic", "quality"]
    assert families_with_inputs(both) == [
        "lexical",
        "overlap",
        "retrieval",
        "semantic",
        "quality",
    ]


@pytest.mark.parametrize(
    ("families", "options", "message"),
    [
        (["lexical", "fuzzy"], MetricOptions(), "Unknown metric family: fuzzy"),
        (["lexical"], MetricOptions(k=0), "--k must be a whole number of at least 1"),
        (["lexical"], MetricOptions(match="fuzzy"), "--match must be one of exact, similarity"),
        (
            ["lexical"],
            MetricOptions(similarity_threshold=1.5),
            "--similarity-threshold must be between 0 and 1",
        ),
    ],
)
def test_bad_families_and_options_are_usage_errors(
    families: list[str], options: MetricOptions, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        compute_offline_metrics([EvaluationItem(1, "Q", "A", "A")], families, options)


# Runs the public API in a fresh interpreter where the extras' packages cannot be imported,
# as on a machine that installed rag-eval without them.
_WITHOUT_MODULES = """
import sys

# None in sys.modules is how Python marks a module that cannot be imported.
for name in sys.argv[1].split(","):
    sys.modules[name] = None
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.errors import MissingExtraError
from rag_evaluator.metrics import MetricOptions, compute_offline_metrics

items = [EvaluationItem(1, "Q", "A", "A", contexts=["c"], relevant_contexts=["c"])]
try:
    compute_offline_metrics(items, sys.argv[2].split(","), MetricOptions(match=sys.argv[3]))
except MissingExtraError as error:
    print(error.message)
else:
    print("no error")
"""


def run_without(modules: str, families: str, match: str = "exact") -> str:
    completed = subprocess.run(
        [sys.executable, "-c", _WITHOUT_MODULES, modules, families, match],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return completed.stdout.strip()


def test_overlap_without_its_extra_names_the_install_command() -> None:
    # rouge-score is a core dependency (--match overlap, context_overlap): sacreBLEU is the
    # overlap extra.
    assert run_without("sacrebleu", "lexical,overlap") == (
        "BLEU needs the optional 'overlap' dependencies. "
        "Install them with: pip install 'rag-eval[overlap]'"
    )


def test_semantic_and_similarity_matching_without_the_extra_name_the_install_command() -> None:
    blocked = "sentence_transformers,bert_score"
    assert run_without(blocked, "semantic") == (
        "The semantic metric family needs the optional 'semantic' dependencies. "
        "Install them with: pip install torch --index-url https://download.pytorch.org/whl/cpu"
        " && pip install 'rag-eval[semantic]'"
    )
    assert run_without(blocked, "retrieval", "similarity") == (
        "Matching chunks by similarity (--match similarity) needs the optional 'semantic' "
        "dependencies. Install them with: pip install torch --index-url "
        "https://download.pytorch.org/whl/cpu && pip install 'rag-eval[semantic]'"
    )
    # Exact and overlap matching, the lexical and quality families need neither extra.
    for match in ("exact", "overlap"):
        assert run_without(f"{blocked},sacrebleu", "lexical,retrieval,quality", match) == (
            "no error"
        )

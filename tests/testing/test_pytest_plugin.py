"""The pytest plugin, run by ``pytester`` as a user's test session would load it: through the
``pytest11`` entry point, with no import in the user's tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer, Fault
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.errors import UsageError
from rag_evaluator.testing.thresholds import parse_check_thresholds

pytest_plugins = ["pytester"]

CASES = [
    {
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France.",
        "ground_truth": "Paris is the capital of France.",
        "contexts": ["France's capital is Paris."],
    },
    {
        "question": "Who wrote Hamlet?",
        "answer": "I don't know.",
        "ground_truth": "William Shakespeare wrote Hamlet.",
        "contexts": ["Hamlet is a tragedy by William Shakespeare."],
    },
    {
        "question": "How many legs does a spider have?",
        "answer": "A spider has eight legs.",
        "ground_truth": "A spider has eight legs.",
        "contexts": ["Spiders have eight legs."],
    },
]


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # In a subprocess, as CI runs pytest: an in-process run would drop the modules it
    # imported (numpy's among them) and fail to import them again.
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def _lines(*patterns: str) -> list[str]:
    """fnmatch patterns where ``[`` is itself (``*`` stays the wildcard)."""
    return [pattern.replace("[", "[[]") for pattern in patterns]


def _write_cases_test(pytester: pytest.Pytester, body: str) -> None:
    pytester.makepyfile(f"CASES = {json.dumps(CASES)}\n\n{body}")


def test_a_check_that_meets_its_thresholds_passes_without_an_import(
    pytester: pytest.Pytester,
) -> None:
    _write_cases_test(
        pytester,
        """
def test_answers(rag_eval):
    report = rag_eval.check(
        [CASES[0], CASES[2]],
        metrics="lexical,overlap",
        thresholds={"rougeL": 0.9, "keyword_coverage>=": "90%", "dont_know<=": 0},
    )
    assert report.passed
    assert report.values["rouge_l"] == 1.0
    assert [gate.metric for gate in report.gates] == ["rouge_l", "keyword_coverage", "dont_know"]
""",
    )
    result = _run(pytester)
    result.assert_outcomes(passed=1)


def test_a_missed_threshold_fails_the_test_with_the_failing_questions(
    pytester: pytest.Pytester,
) -> None:
    _write_cases_test(
        pytester,
        """
def test_answers(rag_eval):
    rag_eval.check(CASES, metrics=["lexical", "overlap"],
                   thresholds={"rougeL": 0.8, "dont_know<=": 0.1, "keyword_coverage": 0.1})
""",
    )
    result = _run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        _lines(
            "rag-eval check of 3 cases (3 questions): 2 of 3 thresholds missed",
            "  FAILED rouge_l: mean 0.6667 (n=3) [95% CI *], minimum 0.8",
            "  FAILED dont_know: 1/3 (33%) [95% CI *%], maximum 0.1",
            "  passed keyword_coverage: mean * (n=3) [95% CI *], minimum 0.1",
            "",
            "1 question past a missed threshold:",
            "  question 2: 'Who wrote Hamlet?'",
            "    expected: 'William Shakespeare wrote Hamlet.'",
            '    got:      "I don\'t know."',
            "    rouge_l 0.0000 < 0.8; dont_know 1 > 0.1",
        )
    )
    output = result.stdout.str()
    # Only the question past a missed threshold is listed, and no traceback hides the message.
    assert "What is the capital of France?" not in output
    assert "Traceback" not in output
    assert "def check(" not in output


def test_a_dataset_file_named_in_the_marker_is_read_as_evaluate_reads_it(
    pytester: pytest.Pytester,
) -> None:
    # ragas's field names, as `evaluate --dataset` reads them.
    records = [
        {
            "user_input": case["question"],
            "response": case["answer"],
            "reference": case["ground_truth"],
        }
        for case in CASES
    ]
    pytester.path.joinpath("golden.jsonl").write_text(
        "\n".join(json.dumps(record) for record in records) + "\n", encoding="utf-8"
    )
    pytester.makepyfile(
        """
import pytest

@pytest.mark.rag_eval("golden.jsonl", metrics="lexical", thresholds={"dont_know<=": "34%"})
def test_golden(rag_eval):
    rag_eval.check()

@pytest.mark.rag_eval("golden.jsonl", metrics="lexical")
def test_golden_stricter(rag_eval):
    rag_eval.check(thresholds={"dont_know<=": 0.3333})
"""
    )
    result = _run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        _lines(
            "rag-eval check of golden.jsonl (3 questions): 1 of 1 thresholds missed",
            "  FAILED dont_know: 1/3 (33%) [95% CI *], maximum 0.3333",
            "  question 2: 'Who wrote Hamlet?'",
        )
    )


def test_lower_is_better_metrics_take_a_maximum_and_reaching_it_passes(
    pytester: pytest.Pytester,
) -> None:
    _write_cases_test(
        pytester,
        """
def test_at_the_limit(rag_eval):
    rag_eval.check(CASES[:2], metrics="lexical", thresholds={"dont_know<=": 0.5})

def test_a_minimum_on_a_lower_is_better_metric(rag_eval):
    rag_eval.check(CASES, metrics="lexical", thresholds={"dont_know": 0.1})

def test_a_metric_the_families_do_not_compute(rag_eval):
    rag_eval.check(CASES, metrics="lexical", thresholds={"rougeL": 0.1})
""",
    )
    result = _run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        _lines(
            "rag-eval: *lower is better for dont_know, so a minimum would let a worse run pass*"
            "a name ending in <= a --fail-over maximum)",
            "rag-eval: *rougeL, which this run does not compute*",
        )
    )


def _judged_test(pytester: pytest.Pytester) -> None:
    _write_cases_test(
        pytester,
        """
def test_judged(rag_eval):
    rag_eval.check(CASES, metrics="match,lexical", thresholds={"is_matching": 1.0})
""",
    )


def test_judged_metrics_are_cached_so_a_second_run_makes_no_call(
    pytester: pytest.Pytester,
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RAG_EVAL_CACHE_DIR", str(tmp_path / "ci-cache"))
    _judged_test(pytester)
    first = _run(pytester, "--rag-eval-model", "haiku")
    first.assert_outcomes(passed=1)
    calls = len(fake_anthropic.requests)
    assert calls == len(CASES)
    assert all("haiku" in request.body["model"] for request in fake_anthropic.requests)
    assert (tmp_path / "ci-cache" / "responses.sqlite3").is_file()

    second = _run(pytester, "--rag-eval-model", "haiku")
    second.assert_outcomes(passed=1)
    assert len(fake_anthropic.requests) == calls

    # Another model is another cache key; --rag-eval-no-cache asks again.
    _run(pytester, "--rag-eval-no-cache").assert_outcomes(passed=1)
    assert len(fake_anthropic.requests) == 2 * calls
    assert fake_anthropic.paid_twice() == []


def test_a_judged_metric_below_its_threshold_lists_the_question(
    pytester: pytest.Pytester,
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.script_role(
        "is_matching", "Who wrote Hamlet?", {"reasoning": "It gives up.", "is_matching": False}
    )
    _judged_test(pytester)
    # A relative ini path is read from the ini file's folder.
    pytester.makeini("[pytest]\nrag_eval_cache_dir = ini-cache\n")
    result = _run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        _lines(
            "  FAILED is_matching: 2/3 (67%) [95% CI *], minimum 1",
            "  question 2: 'Who wrote Hamlet?'",
            "    is_matching 0 < 1",
        )
    )
    assert (pytester.path / "ini-cache" / "responses.sqlite3").is_file()


def test_a_question_the_judge_cannot_score_fails_the_check_with_the_reason(
    pytester: pytest.Pytester, fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script_role("is_matching", "Who wrote Hamlet?", Fault.refusal())
    _judged_test(pytester)
    result = _run(pytester, "--rag-eval-cache-dir", str(tmp_path / "cache"))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        _lines(
            "rag-eval check of 3 cases (3 questions): 0 of 1 thresholds missed, 1 unscored",
            "  passed is_matching: 2/2 (100%) [95% CI *], minimum 1",
            "1 question not scored (nothing shows their thresholds met):",
            "  question 2: 'Who wrote Hamlet?'",
            "    match: *refused*",
        )
    )
    # Only scored results are cached: the next run asks about question 2 again.
    calls = len(fake_anthropic.requests)
    _run(pytester, "--rag-eval-cache-dir", str(tmp_path / "cache")).assert_outcomes(failed=1)
    assert len(fake_anthropic.requests) == calls + 3


def test_offline_checks_need_no_key(pytester: pytest.Pytester) -> None:
    # The session's environment has no ANTHROPIC_API_KEY (tests/conftest.py removes it).
    _write_cases_test(
        pytester,
        """
import os

def test_offline(rag_eval):
    assert "ANTHROPIC_API_KEY" not in os.environ
    rag_eval.check(CASES, metrics="lexical", thresholds={"dont_know<=": 0.5})
""",
    )
    _run(pytester).assert_outcomes(passed=1)


@given(
    limit=st.floats(min_value=0, max_value=1, allow_nan=False),
    upper=st.booleans(),
    name=st.sampled_from(["rougeL", "dont_know", "keyword_coverage"]),
)
def test_thresholds_read_minimums_and_maximums(limit: float, upper: bool, name: str) -> None:
    key = f"{name}<=" if upper else name
    (threshold,) = parse_check_thresholds({key: limit})
    assert (threshold.name, threshold.upper) == (name, upper)
    assert threshold.limit == pytest.approx(limit)


@pytest.mark.parametrize(
    "thresholds",
    [
        {"rougeL": True},
        {"rougeL": 1.5},
        {"": 0.5},
        {"rougeL<": 0.5},
        {"rougeL": 0.5, "ROUGE_L": 0.6},
    ],
)
def test_bad_thresholds_are_usage_errors(thresholds: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        parse_check_thresholds(thresholds)


def test_misuse_fails_the_test_with_the_fix_and_no_traceback(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("answers_only.jsonl").write_text(
        json.dumps({"question": "Who wrote Hamlet?", "answer": "Shakespeare."}) + "\n",
        encoding="utf-8",
    )
    _write_cases_test(
        pytester,
        """
import pytest

def test_no_metrics(rag_eval):
    rag_eval.check(CASES)

def test_not_cases(rag_eval):
    rag_eval.check(42, metrics="lexical")

def test_a_missing_file(rag_eval):
    rag_eval.check("missing.jsonl", metrics="lexical")

def test_judged_without_references(rag_eval):
    rag_eval.check("answers_only.jsonl", metrics="match")

@pytest.mark.rag_eval(CASES, metrics="lexical", threshold={"dont_know<=": 0.1})
def test_a_misspelt_marker_keyword(rag_eval):
    rag_eval.check()
""",
    )
    result = _run(pytester)
    result.assert_outcomes(failed=4, errors=1)
    result.stdout.fnmatch_lines(
        _lines(
            # pytest shows the errors (the marker's, at the fixture's setup) first.
            "*@pytest.mark.rag_eval takes data, metrics, thresholds, rubric (got threshold)",
            "rag-eval: rag_eval.check needs the questions and the metric families*",
            "rag-eval: rag_eval.check takes a dataset file's path or a list of cases (got int)*",
            "rag-eval: *missing.jsonl*",
            "rag-eval: answers_only.jsonl holds no reference answer, and every family asked "
            "for compares the answer with one (match). Give every case a ground_truth, or "
            "check families that need none, such as quality or ragas",
        )
    )
    assert "Traceback" not in result.stdout.str()


def test_a_long_list_of_failing_questions_is_cut(pytester: pytest.Pytester) -> None:
    cases = [
        {"question": f"Question {n}?", "answer": "I don't know.", "ground_truth": f"Fact {n}."}
        for n in range(1, 26)
    ]
    pytester.makepyfile(
        f"""
def test_many(rag_eval):
    rag_eval.check({cases!r}, metrics="lexical", thresholds={{"dont_know<=": 0}})
"""
    )
    result = _run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "25 questions past a missed threshold:",
            "  question 20: 'Question 20?'",
            "  ... and 5 more",
        ]
    )
    assert "Question 21?" not in result.stdout.str()


def test_the_budget_option_caps_each_check(
    pytester: pytest.Pytester, fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    _judged_test(pytester)
    cache = ("--rag-eval-cache-dir", str(tmp_path / "cache"))
    result = _run(pytester, *cache, "--rag-eval-max-cost", "0.0000001", "--rag-eval-model", "haiku")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["rag-eval: Stopped before the next call*--max-cost budget*"])
    assert "Traceback" not in result.stdout.str()
    assert fake_anthropic.requests == []
    for amount in ("lots", "-1", "nan"):
        bad = _run(pytester, *cache, "--rag-eval-max-cost", amount)
        assert bad.ret == pytest.ExitCode.USAGE_ERROR
        bad.stderr.fnmatch_lines(
            [f"ERROR: --rag-eval-max-cost '{amount}' is not an amount. Give dollars, e.g. 0.50"]
        )


def test_the_plugin_loads_nothing_of_the_tool_until_a_check_runs() -> None:
    code = (
        "import sys, rag_evaluator.testing.plugin; "
        "print(sorted(m for m in sys.modules if m.startswith(('rag_evaluator.', 'anthropic', "
        "'numpy'))))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == "['rag_evaluator.testing', 'rag_evaluator.testing.plugin']"


def test_a_check_and_rag_eval_evaluate_share_the_cache(
    pytester: pytest.Pytester,
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RAG_EVAL_CACHE_DIR", str(tmp_path / "shared-cache"))
    monkeypatch.setenv("RAG_EVAL_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    dataset = pytester.path / "golden.json"
    dataset.write_text(json.dumps(CASES), encoding="utf-8")
    evaluate = [Path(sys.executable).parent / "rag-eval", "evaluate", "--dataset", str(dataset)]
    subprocess.run(
        [*evaluate, "--metrics", "match", "--model", "haiku", "--yes", "--output-dir", "runs"],
        cwd=pytester.path,
        check=True,
        capture_output=True,
    )
    paid = len(fake_anthropic.requests)
    assert paid == len(CASES)
    _judged_test(pytester)
    _run(pytester, "--rag-eval-model", "haiku").assert_outcomes(passed=1)
    assert len(fake_anthropic.requests) == paid


def test_cases_without_references_run_what_needs_none_as_evaluate_does(
    pytester: pytest.Pytester, fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cases = [{key: value for key, value in case.items() if key != "ground_truth"} for case in CASES]
    pytester.makepyfile(
        f"CASES = {json.dumps(cases)}\n"
        """
def test_reference_free(rag_eval):
    report = rag_eval.score(CASES, metrics="ragas,match,lexical,quality")
    assert report.passed, report.message
    assert "ragas_faithfulness" in report.values and "quality_pass" in report.values
    # Left out: what reads the reference (ragas' context recall stays an empty column).
    assert report.values.get("ragas_context_recall") is None
    assert "is_matching" not in report.values and "exact_match" not in report.values
    assert "dont_know" in report.values  # a lexical metric that needs no reference

def test_a_gate_on_a_left_out_metric(rag_eval):
    rag_eval.check(CASES, metrics="match,quality", thresholds={"is_matching": 0.5})
"""
    )
    result = _run(pytester, "--rag-eval-cache-dir", str(tmp_path / "cache"), "-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["rag-eval: *is_matching*"])
    assert "No reference answers in 3 cases: left out match" in result.stdout.str()
    assert not [request for request in fake_anthropic.requests if request.role == "is_matching"]

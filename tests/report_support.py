"""Results files for the report's tests, written by the real results writer.

``Question`` describes one row: the texts, the judge's scores (or an error, or a consensus
with its votes) and offline metric values. ``write_run`` writes it as ``rag-eval evaluate``
would; ``add_columns`` appends columns such as other judged families write (labels,
grades, faithfulness), keeping the ``#SUMMARY`` rows.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path

from results_support import build_summary

from rag_evaluator.families.base import QuestionRecord
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.results import JudgeResult, Scores, Vote
from rag_evaluator.inputs.records import EvaluationItem, TokenUsage
from rag_evaluator.results.rows import ResultRow
from rag_evaluator.results.summary import RunFacts
from rag_evaluator.results.writer import write_results

HOSTILE = (
    "<script>window.__pwned = 1; alert('answer')</script> </td></tr></table> "
    '<a href="javascript:window.__pwned = 2">click me</a> '
    '<img src=x onerror="window.__pwned = 3"> ]]> <!-- \u2028 \u2029 &amp; </script>'
)


@dataclass(frozen=True)
class Question:
    number: int
    question: str
    ground_truth: str
    answer: str
    scores: tuple[int, int, int] | None = (1, 1, 1)  # None: the judge failed
    reasoning: str = "Correct and complete."
    votes: tuple[tuple[int, int, int] | None, ...] = ()  # a consensus: the three votes
    first: tuple[int, int, int] | None = None  # the hedging first verdict of a consensus
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    contexts: Sequence[str] | None = None
    relevant_contexts: Sequence[str] | None = None


def _judge_result(question: Question) -> JudgeResult:
    if question.scores is None:
        return JudgeResult(error="the model refused to judge", failure="question", calls=3)
    consensus = bool(question.votes)
    return JudgeResult(
        scores=Scores(*question.scores),
        summary=question.reasoning,
        consensus=consensus,
        initial_scores=Scores(*(question.first or question.scores)) if consensus else None,
        votes=tuple(
            Vote(None if v is None else Scores(*v), None if v else "x") for v in question.votes
        ),
        hedge_phrases=("borderline",) if consensus else (),
        calls=1 + len(question.votes),
        usage=TokenUsage(1200, 80),
        cost_usd=0.0004,
    )


def write_run(
    path: Path,
    questions: Sequence[Question],
    *,
    judged: bool = True,
    model: str = "claude-haiku-5-5",
) -> Path:
    """Write ``questions`` as a results file at ``path`` (the real writer, then renamed)."""
    columns = list(dict.fromkeys(name for question in questions for name in question.metrics))
    judge = JudgeFamily("prompt", ("borderline",))
    families = [judge] if judged else []
    rows = []
    for question in questions:
        item = EvaluationItem(
            question.number,
            question.question,
            question.ground_truth,
            question.answer,
            contexts=list(question.contexts) if question.contexts is not None else None,
        )
        record = (
            QuestionRecord(question.number, {"judge": _judge_result(question)}) if judged else None
        )
        rows.append(ResultRow(item, record, dict(question.metrics)))
    facts = RunFacts(
        judged=judged,
        model_id=model,
        seed=7,
        prompt_origin="built-in default",
        usage=sum((row.record.usage for row in rows if row.record), TokenUsage()),
        calls=sum(row.record.calls for row in rows if row.record),
        cost_usd=0.0123,
        coverage=(len(rows), len(rows)),
        metric_columns=columns,
    )
    folder = path.parent / f".{path.name}.d"
    folder.mkdir(parents=True)
    written, _ = write_results(
        folder,
        datetime(2026, 11, 23, 1, 44, 12),
        build_summary(rows, facts, families),
        rows,
        families=families,
        metric_columns=columns,
    )
    written.rename(path)
    folder.rmdir()
    return path


def add_columns(path: Path, columns: Mapping[str, Mapping[int, str]]) -> None:
    """Append columns (header -> question number -> cell) to a results file's table."""
    text = path.read_text(encoding="utf-8")
    # The summary lines on top are plain text lines, kept as they are; then the CSV table.
    summary = list(itertools.takewhile(lambda line: line.startswith("#"), text.split("\n")))
    table_text = text[sum(len(line) + 1 for line in summary) :]
    header, *rows = [row for row in csv.reader(io.StringIO(table_text, newline="")) if row]
    header = header + list(columns)
    rows = [row + [columns[name].get(int(row[0]), "") for name in columns] for row in rows]
    out = io.StringIO()
    out.writelines(line + "\n" for line in summary)
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    path.write_text(out.getvalue(), encoding="utf-8")


def write_inputs(folder: Path, questions: Sequence[Question]) -> tuple[Path, Path]:
    """rag_answers.csv (with Contexts) and ground_truth.csv (with Relevant Contexts)."""
    answers = folder / "rag_answers.csv"
    truth = folder / "ground_truth.csv"
    with answers.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question Number", "RAG Answer", "Contexts"])
        for question in questions:
            contexts = "" if question.contexts is None else json.dumps(list(question.contexts))
            writer.writerow([question.number, question.answer, contexts])
    with truth.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question Number", "Ground Truth", "Relevant Contexts"])
        for question in questions:
            relevant = (
                ""
                if question.relevant_contexts is None
                else json.dumps(list(question.relevant_contexts))
            )
            writer.writerow([question.number, question.ground_truth, relevant])
    return answers, truth


def sample_questions() -> list[Question]:
    """Twelve questions covering every kind of row the report shows."""
    policy = "Section 7.5 Meals: the daily meal allowance is $60 for domestic travel."
    other = "Section 4.1 Paid time off: 25 days per calendar year."
    questions = [
        Question(
            1,
            "How many days of paid time off do employees get?",
            "25 days per calendar year.",
            "Employees get 25 days of paid time off per year.",
            metrics={
                "keyword_coverage": 1.0,
                "number_match": 1.0,
                "rouge1": 0.8,
                "context_relevance": 0.82,
                "hallucination": 0.0,
            },
            contexts=[other, policy],
            relevant_contexts=[other],
        ),
        Question(
            2,
            "What is the daily meal allowance for domestic travel?",
            "The daily meal allowance is $60 for domestic travel.",
            "The daily meal allowance is $50 for domestic travel.",
            scores=(0, 0, 1),
            reasoning="Wrong daily amount: $50 instead of $60.",
            metrics={
                "keyword_coverage": 0.9,
                "number_match": 0.0,
                "rouge1": 0.9,
                "context_relevance": 0.7,
                "hallucination": 0.5,
            },
            contexts=[policy],
            relevant_contexts=[policy],
        ),
        Question(
            3,
            "Are pets allowed in the office?",
            "No. Only registered assistance animals are allowed.",
            "I don't know.",
            scores=(1, 0, 0),
            reasoning="Says it does not know.",
            metrics={
                "keyword_coverage": 0.0,
                "number_match": None,
                "rouge1": 0.0,
                "context_relevance": 0.3,
                "hallucination": 0.0,
            },
            contexts=["Section 2.2 Office access: badges are personal."],
            relevant_contexts=["Section 2.9 Animals: only registered assistance animals."],
        ),
        Question(
            4,
            "Which class of airfare is allowed under six hours?",
            "Economy class.",
            "Economy class. Premium economy for longer flights.",
            scores=(0, 1, 1),
            reasoning="The premium economy rule is borderline.",
            votes=((0, 1, 1), (1, 1, 1), (0, 1, 1)),
            first=(1, 1, 1),
            metrics={
                "keyword_coverage": 1.0,
                "number_match": None,
                "rouge1": 0.5,
                "context_relevance": 0.6,
                "hallucination": 0.4,
            },
            contexts=[],
            relevant_contexts=[],
        ),
        Question(
            5,
            "Who approves overtime?",
            "The line manager, in advance.",
            "Overtime is approved by the line manager in advance.",
            scores=None,
            metrics={
                "keyword_coverage": 1.0,
                "number_match": None,
                "rouge1": 0.7,
                "context_relevance": 0.9,
                "hallucination": 0.0,
            },
        ),
    ]
    for number in range(6, 13):
        questions.append(
            Question(
                number,
                f"Routine question {number} about the handbook?",
                f"The handbook answer number {number} with {number * 3} days.",
                f"The handbook answer number {number} with {number * 3} days, as written.",
                metrics={
                    "keyword_coverage": 0.75 + number / 100,
                    "number_match": 1.0,
                    "rouge1": 0.6 + number / 100,
                    "context_relevance": 0.55 + number / 50,
                    "hallucination": 0.1,
                },
                contexts=[f"Handbook chunk {number}.", other],
                relevant_contexts=[f"Handbook chunk {number}."],
            )
        )
    return questions


@dataclass
class ParsedPage:
    """What an HTML parser (not a browser) finds in a report."""

    tags: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    scripts: list[tuple[dict[str, str | None], str]] = field(default_factory=list)
    body_rows: dict[str, int] = field(default_factory=dict)  # "t0" -> question rows of run 0
    text: str = ""


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = ParsedPage()
        self._script: dict[str, str | None] | None = None
        self._script_text: list[str] = []
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.page.tags.append((tag, attributes))
        if tag == "script":
            self._script = attributes
            self._script_text = []
        elif tag == "tr" and (found := re.fullmatch(r"r(\d+)q\d+", attributes.get("id") or "")):
            key = f"t{found.group(1)}"
            self.page.body_rows[key] = self.page.body_rows.get(key, 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.page.scripts.append((self._script, "".join(self._script_text)))
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script_text.append(data)
        else:
            self._text.append(data)

    def close(self) -> None:
        super().close()
        self.page.text = "".join(self._text)


def parse_page(html: str) -> ParsedPage:
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector.page

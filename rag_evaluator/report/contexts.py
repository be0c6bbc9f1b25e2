"""The contexts a report shows on demand: taken from the input files where they agree with
the results, and stored once each however many questions or runs retrieved them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_evaluator.inputs.fields import GROUND_TRUTH, RAG_ANSWER
from rag_evaluator.inputs.records import AnswerRow, GroundTruthRow
from rag_evaluator.results.run_scores import TableRow


@dataclass(frozen=True)
class RunContexts:
    """The retrieved chunks of each question (rag_answers.csv) and the golden ones."""

    retrieved: Mapping[int, Sequence[str]] = field(default_factory=dict)
    golden: Mapping[int, Sequence[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ContextsData:
    """Every distinct chunk once (``pool``), and per run and question the indices of its
    retrieved chunks (with whether each matches a golden chunk) and of its golden chunks
    (with whether one of the retrieved chunks is it)."""

    pool: tuple[str, ...]
    retrieved: tuple[Mapping[int, tuple[tuple[int, bool], ...]], ...]
    golden: tuple[Mapping[int, tuple[tuple[int, bool], ...]], ...]


def _normalised(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class MatchedContexts:
    """A run's contexts taken from the input files, and the questions left without them
    because the file's text differs from the results' (another run's answers, an edited
    golden set)."""

    contexts: RunContexts
    answers_differ: tuple[int, ...]
    ground_truth_differs: tuple[int, ...]


def match_contexts(
    rows: Sequence[TableRow],
    answers: Mapping[int, AnswerRow],
    ground_truth: Mapping[int, GroundTruthRow],
) -> MatchedContexts:
    """The retrieved chunks of ``answers`` and the golden chunks of ``ground_truth`` for the
    questions of ``rows`` whose answer (ground truth) reads the same in both files, whitespace
    aside; a results file without the column takes them as they are."""
    retrieved: dict[int, Sequence[str]] = {}
    golden: dict[int, Sequence[str]] = {}
    answers_differ: list[int] = []
    truth_differs: list[int] = []
    for row in rows:
        number = row.question_number
        answer = answers.get(number)
        if answer is not None and answer.contexts is not None:
            shown = row.cells.get(RAG_ANSWER)
            if shown is None or _normalised(shown) == _normalised(answer.rag_answer):
                retrieved[number] = tuple(answer.contexts)
            else:
                answers_differ.append(number)
        truth = ground_truth.get(number)
        if truth is not None and truth.relevant_contexts is not None:
            shown = row.cells.get(GROUND_TRUTH)
            if shown is None or _normalised(shown) == _normalised(truth.ground_truth):
                golden[number] = tuple(truth.relevant_contexts)
            else:
                truth_differs.append(number)
    return MatchedContexts(
        RunContexts(retrieved, golden), tuple(answers_differ), tuple(truth_differs)
    )


def contexts_data(
    runs: Sequence[tuple[Sequence[int], RunContexts | None]],
) -> ContextsData | None:
    """Every chunk of every run once, referenced by index (a chunk retrieved for many
    questions, or by several runs, is stored once). ``runs``: each run's question numbers
    and contexts."""
    if not any(contexts for _, contexts in runs):
        return None
    pool: dict[str, int] = {}
    normalised: dict[str, str] = {}

    def index_of(text: str) -> int:
        return pool.setdefault(text, len(pool))

    def normal_form(text: str) -> str:
        found = normalised.get(text)
        if found is None:
            found = normalised[text] = _normalised(text)
        return found

    retrieved_runs: list[dict[int, tuple[tuple[int, bool], ...]]] = []
    golden_runs: list[dict[int, tuple[tuple[int, bool], ...]]] = []
    for numbers, run_contexts in runs:
        contexts = run_contexts or RunContexts()
        golden: dict[int, tuple[tuple[int, bool], ...]] = {}
        retrieved: dict[int, tuple[tuple[int, bool], ...]] = {}
        for number in sorted(set(numbers)):
            golden_texts = contexts.golden.get(number) or ()
            chunks = contexts.retrieved.get(number)
            wanted = {normal_form(text) for text in golden_texts}
            found = {normal_form(text) for text in chunks or ()}
            if number in contexts.golden:
                golden[number] = tuple(
                    (index_of(text), normal_form(text) in found) for text in golden_texts
                )
            if chunks is not None:
                retrieved[number] = tuple(
                    (index_of(text), normal_form(text) in wanted) for text in chunks
                )
        retrieved_runs.append(retrieved)
        golden_runs.append(golden)
    return ContextsData(tuple(pool), tuple(retrieved_runs), tuple(golden_runs))

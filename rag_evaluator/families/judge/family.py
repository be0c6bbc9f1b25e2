"""The precision/recall/accuracy judge as a task: one call, three more when the judge hedges."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from rag_evaluator.families.base import (
    CallEstimate,
    CellValue,
    JudgedFamily,
    Stage,
    SummaryTally,
    TaskRun,
    reference_for_models,
)
from rag_evaluator.families.defaults import JUDGE_FAMILY as JUDGE_FAMILY
from rag_evaluator.families.judge.prompts import build_user_message
from rag_evaluator.families.judge.results import JudgeResult, Scores, Vote
from rag_evaluator.families.judge.verdicts import VERDICT_SCHEMA, verdict_from_payload
from rag_evaluator.families.judge.voting import (
    CONSENSUS_VOTES,
    combine_outcomes,
    find_hedge_phrases,
)
from rag_evaluator.families.jury.voting import (
    common_value,
    first_failure,
    majority_rate,
    nearest_juror,
)
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.requests import ModelRequest
from rag_evaluator.results.summary import SummaryLine, fraction_line
from rag_evaluator.text.no_information import both_say_no_information, no_information_result

JUDGE_MAX_TOKENS = 2000

PRECISION = "Precision"
RECALL = "Recall"
ACCURACY = "Accuracy"
REASONING = "Reasoning"
CONSENSUS = "Consensus"
VOTES = "Votes"

# The judge's JSON reply: reasoning, a 1-2 sentence summary and three integers.
OUTPUT_TOKENS_LOW = 150
OUTPUT_TOKENS_HIGH = 500
# At the high end of an estimate every question may hedge and get the consensus calls: the
# range must hold the actual cost whatever share of verdicts hedges.
CONSENSUS_SHARE_HIGH = 1.0

SHORTCUT_NO_INFORMATION = "no_information"
SHORTCUT_MISSING_ANSWER = "missing_answer"


class JudgeFamily(JudgedFamily[JudgeResult]):
    """Binary precision, recall and accuracy of the answer against the ground truth."""

    name = JUDGE_FAMILY
    version = 2
    columns = (PRECISION, RECALL, ACCURACY, REASONING, CONSENSUS, VOTES)
    metric_columns = (PRECISION, RECALL, ACCURACY)
    rate_columns = metric_columns
    reasoning_column = REASONING

    def __init__(
        self, system_prompt: str, hedge_phrases: Sequence[str], *, consensus: bool = True
    ) -> None:
        """``consensus=False`` never asks the consensus votes: the first verdict stands even
        when it hedges (a jury's jurors judge once each; the jury is the consensus)."""
        self.system_prompt = system_prompt
        self.hedge_phrases = tuple(hedge_phrases)
        self.consensus = consensus

    # -- the task ---------------------------------------------------------------------------

    def request(self, item: EvaluationItem) -> ModelRequest:
        return ModelRequest(
            system=self.system_prompt,
            user=build_user_message(item.question, reference_for_models(item), item.rag_answer),
            schema=VERDICT_SCHEMA,
            max_tokens=JUDGE_MAX_TOKENS,
            purpose="judge",
            parse=verdict_from_payload,
        )

    def run(self, item: EvaluationItem) -> TaskRun[JudgeResult]:
        if both_say_no_information(item.rag_answer, item.ground_truth):
            return _with_shortcut(no_information_result(), SHORTCUT_NO_INFORMATION)
        request = self.request(item)
        (first,) = yield (request,)
        hedges: tuple[str, ...] = ()
        if first.ok and self.consensus:
            hedges = find_hedge_phrases(first.value.reasoning, self.hedge_phrases)  # type: ignore[union-attr]
        votes: tuple = ()
        if hedges:
            votes = yield (request,) * CONSENSUS_VOTES
        return combine_outcomes(first, hedges, votes)

    def unscored(self, error: str, failure: str) -> JudgeResult:
        return JudgeResult(error=error, failure=failure)

    def missing_answer(self, note: str) -> JudgeResult:
        return _with_shortcut(
            JudgeResult(
                scores=Scores(0, 0, 0),
                summary="No answer was given for this question.",
                note=note,
            ),
            SHORTCUT_MISSING_ANSWER,
        )

    # -- identity, cost ---------------------------------------------------------------------

    def identity(self) -> Mapping[str, Any]:
        identity: dict[str, Any] = {
            "prompt_sha256": hashlib.sha256(self.system_prompt.encode("utf-8")).hexdigest(),
            "hedge_phrases": sorted(phrase.casefold() for phrase in self.hedge_phrases),
            "consensus_votes": CONSENSUS_VOTES,
            "max_tokens": JUDGE_MAX_TOKENS,
            "schema": VERDICT_SCHEMA,
        }
        # Only when off, so that the cache keys of every run with consensus stay as they were.
        if not self.consensus:
            identity["consensus"] = False
        return identity

    def cache_inputs(self, item: EvaluationItem) -> Mapping[str, Any]:
        return {
            "question": item.question,
            "ground_truth": reference_for_models(item),
            "rag_answer": item.rag_answer,
        }

    def estimate(self, item: EvaluationItem, first_stage: Stage) -> CallEstimate:
        if not first_stage:
            return CallEstimate.none()
        request = first_stage[0]
        asks_votes = self.consensus and self.hedge_phrases
        consensus_calls = CONSENSUS_SHARE_HIGH * CONSENSUS_VOTES if asks_votes else 0.0
        calls_high = 1 + consensus_calls
        return CallEstimate(
            calls_low=1,
            calls_high=calls_high,
            input_tokens_low=request.input_tokens_low(),
            input_tokens_high=request.input_tokens_high() * calls_high,
            output_tokens_low=OUTPUT_TOKENS_LOW,
            output_tokens_high=OUTPUT_TOKENS_HIGH * calls_high,
            system_characters=len(request.system),
        )

    # -- reporting --------------------------------------------------------------------------

    def cells(self, result: JudgeResult | None) -> list[CellValue]:
        if result is None:
            return ["", "", "", "", "", ""]
        values = self.metric_values(result)
        return [
            _cell(values[PRECISION]),
            _cell(values[RECALL]),
            _cell(values[ACCURACY]),
            result.summary,
            "yes" if result.consensus else "no",
            result.votes_label(),
        ]

    def note_text(self, result: JudgeResult) -> str:
        parts = []
        if result.hedge_phrases:
            quoted = ", ".join(f"'{phrase}'" for phrase in result.hedge_phrases)
            parts.append(f"consensus of {CONSENSUS_VOTES} votes: the first reasoning said {quoted}")
        if result.note:
            parts.append(result.note)
        return "; ".join(parts)

    def tally(self) -> JudgeTally:
        return JudgeTally()

    def metric_values(self, result: JudgeResult) -> Mapping[str, float | None]:
        scores = result.scores
        if scores is None:
            return {PRECISION: None, RECALL: None, ACCURACY: None}
        return {PRECISION: scores.precision, RECALL: scores.recall, ACCURACY: scores.accuracy}

    def progress_scores(self, result: JudgeResult) -> Mapping[str, int]:
        scores = result.scores
        if scores is None:
            return {}
        found = {
            "precision": scores.precision,
            "recall": scores.recall,
            "accuracy": scores.accuracy,
        }
        return {name: score for name, score in found.items() if score is not None}

    # -- a jury -----------------------------------------------------------------------------

    def jury_verdict(self, results: Sequence[JudgeResult]) -> JudgeResult:
        """Each metric by the majority of the jurors that scored (a tie leaves it empty); the
        summary of the first juror agreeing with the verdict's precision."""
        if all(result.scores is None for result in results):
            return self.unscored(*first_failure(results))
        values = [self.metric_values(result) for result in results]
        verdict = {
            column: majority_rate([value[column] for value in values])
            for column in self.metric_columns
        }
        scores = Scores.shared(*(_whole(verdict[column]) for column in self.metric_columns))
        siding = nearest_juror([value[PRECISION] for value in values], verdict[PRECISION])
        return JudgeResult(
            scores=scores,
            summary="" if siding is None else results[siding].summary,
            note=common_value(result.note for result in results),
            shortcut=common_value(result.shortcut for result in results),
        )

    # -- checkpoint JSON --------------------------------------------------------------------

    def to_json(self, result: JudgeResult) -> dict[str, Any]:
        # Compact: what every unhedged row shares is left out (a checkpoint may hold
        # millions of lines, and a resume reads them all).
        data: dict[str, Any] = {"scores": _scores_to_json(result.scores)}
        if result.summary:
            data["summary"] = result.summary
        if result.consensus:
            data["consensus"] = True
            data["initial_scores"] = _scores_to_json(result.initial_scores)
            data["votes"] = [
                {"scores": _scores_to_json(vote.scores), "error": vote.error}
                for vote in result.votes
            ]
            data["hedge_phrases"] = list(result.hedge_phrases)
        if result.note is not None:
            data["note"] = result.note
        if result.shortcut is not None:
            data["shortcut"] = result.shortcut
        return data

    def from_json(self, data: Mapping[str, Any], **common: Any) -> JudgeResult:
        if len(data) <= 2 and "scores" in data:
            # The usual line: scores and a summary (a resume reads a million of them).
            summary = data.get("summary", "")
            if type(summary) is not str:
                raise ValueError("expected text")
            return JudgeResult(scores=_scores_from_json(data["scores"]), summary=summary, **common)
        votes = data.get("votes") or ()
        phrases = data.get("hedge_phrases") or ()
        return JudgeResult(
            scores=_scores_from_json(data["scores"]),
            summary=_text(data.get("summary", "")),
            consensus=_flag(data.get("consensus", False)),
            initial_scores=_scores_from_json(data.get("initial_scores")),
            votes=tuple(
                Vote(_scores_from_json(vote["scores"]), _optional_text(vote["error"]))
                for vote in votes
            ),
            hedge_phrases=tuple(_text(phrase) for phrase in phrases),
            note=_optional_text(data.get("note")),
            shortcut=_optional_text(data.get("shortcut")),
            **common,
        )


def _cell(score: int | None) -> CellValue:
    return "" if score is None else score


def _whole(score: float | None) -> int | None:
    return None if score is None else int(score)


def _with_shortcut(result: JudgeResult, shortcut: str) -> JudgeResult:
    return replace(result, shortcut=shortcut)


def _scores_to_json(scores: Scores | None) -> list[int | None] | None:
    if scores is None:
        return None
    return [scores.precision, scores.recall, scores.accuracy]


def _score(value: Any) -> int | None:
    # None: a jury's verdict on a metric where its jurors tied.
    if value is None or (type(value) is int and value in (0, 1)):
        return value
    raise ValueError("scores must be 0 or 1")


def _scores_from_json(data: Any) -> Scores | None:
    """Scores written as ``[1, 0, 1]`` (or, in format 1 checkpoints, as an object)."""
    if data is None:
        return None
    if isinstance(data, dict):
        data = [data["precision"], data["recall"], data["accuracy"]]
    if not isinstance(data, list) or len(data) != 3:
        raise ValueError("scores must be three 0/1 values (or null)")
    return Scores.shared(_score(data[0]), _score(data[1]), _score(data[2]))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ValueError("expected text")


def _optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError("expected text or null")


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("expected true or false")


class JudgeTally(SummaryTally[JudgeResult]):
    """Rates over scored questions; unscored, consensus and no-call counts.

    Each rate counts the questions with a score for its metric: every scored question, but
    for a jury's verdict where the jurors tied on that metric."""

    def __init__(self) -> None:
        self.precision = self.recall = self.accuracy = 0
        self.precision_scored = self.recall_scored = self.accuracy_scored = 0
        self.unscored = self.consensus = self.no_information = 0

    def add(self, result: JudgeResult) -> None:
        scores = result.scores
        if scores is None:
            self.unscored += 1
        else:
            if scores.precision is not None:
                self.precision_scored += 1
                self.precision += scores.precision
            if scores.recall is not None:
                self.recall_scored += 1
                self.recall += scores.recall
            if scores.accuracy is not None:
                self.accuracy_scored += 1
                self.accuracy += scores.accuracy
        self.consensus += result.consensus
        self.no_information += result.shortcut == SHORTCUT_NO_INFORMATION

    def lines(self) -> list[SummaryLine]:
        return [
            fraction_line(PRECISION, self.precision, self.precision_scored),
            fraction_line(RECALL, self.recall, self.recall_scored),
            fraction_line(ACCURACY, self.accuracy, self.accuracy_scored),
            SummaryLine("Unscored", str(self.unscored)),
            SummaryLine("Consensus", str(self.consensus)),
            SummaryLine("No Information (no call)", str(self.no_information)),
        ]

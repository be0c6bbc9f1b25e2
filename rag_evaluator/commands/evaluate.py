"""``rag-eval evaluate``: parse the options, run the pipeline, show what happened."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rag_evaluator import console
from rag_evaluator.core.gates import describe_failures, parse_thresholds
from rag_evaluator.core.models import DEFAULT_MODEL_ALIAS
from rag_evaluator.core.voting import DEFAULT_HEDGE_PHRASES, parse_hedge_phrases
from rag_evaluator.errors import QualityGateError
from rag_evaluator.logs import configure_logging
from rag_evaluator.pipeline.evaluate import (
    EvaluateRequest,
    RunPlan,
    run_evaluation,
)
from rag_evaluator.pipeline.metric_families import JUDGE_FAMILY
from rag_evaluator.pipeline.metrics import MetricOptions
from rag_evaluator.settings import load_settings

_DEFAULT_METRIC_OPTIONS = MetricOptions()


def _dollar_range(low: float, high: float) -> str:
    """``$0.0803 to $0.2900``: cents for real money, more digits for fractions of a cent.

    Both ends get the same number of decimals so the range reads as one figure.
    """
    decimals = 2 if low >= 0.1 else 4
    return f"${low:.{decimals}f} to ${high:.{decimals}f}"


class ConsoleInteraction:
    """The pipeline's questions and reports, on the terminal."""

    def __init__(self, assume_yes: bool) -> None:
        self.assume_yes = assume_yes

    def confirm(self, question: str, *, default: bool) -> bool:
        return console.confirm(question, assume_yes=self.assume_yes, default=default)

    def info(self, message: str) -> None:
        console.info(message)

    def progress(self, position: int, total: int, question_number: int) -> None:
        console.progress(f"Evaluating question {position}/{total}...")

    def show_plan(self, plan: RunPlan) -> None:
        console.info("Input files:")
        for file in plan.files:
            console.info(f"  {file.label}: {file.path} ({file.question_count} questions)")
        excluded = f" ({plan.excluded_count} left out)" if plan.excluded_count else ""
        console.info(f"Questions to evaluate: {plan.question_count}{excluded}")
        console.info(f"Metrics: {', '.join(plan.families.names())}")
        if plan.model is None:
            return
        console.info(f"Model: {plan.model.model_id}")
        console.info(f"Prompt: {plan.prompt_origin}")
        if plan.seed_was_drawn:
            console.info(f"Seed: {plan.seed} (repeat this order with --seed {plan.seed})")
        else:
            console.info(f"Seed: {plan.seed}")
        if plan.resumed_count:
            console.info(
                f"Resuming: {plan.resumed_count} done, {plan.pending_count} still to evaluate"
            )
        if plan.no_information_count:
            console.info(
                f"Scored 1/1/1 without a call (answer and ground truth both say there is no "
                f"information): {plan.no_information_count}"
            )
        if plan.estimate is not None:
            estimate = plan.estimate
            console.info(
                f"Estimated cost: {_dollar_range(estimate.low_usd, estimate.high_usd)} "
                f"({estimate.expected_calls_low} to {estimate.expected_calls_high} calls)"
            )


def evaluate_command(
    questions: Annotated[
        Path, typer.Option("--questions", help="CSV with columns Question Number, Question.")
    ] = Path("questions.csv"),
    ground_truth: Annotated[
        Path,
        typer.Option("--ground-truth", help="CSV with columns Question Number, Ground Truth."),
    ] = Path("ground_truth.csv"),
    answers: Annotated[
        Path, typer.Option("--answers", help="CSV with columns Question Number, RAG Answer.")
    ] = Path("rag_answers.csv"),
    model: Annotated[
        str, typer.Option("--model", help="sonnet, haiku, opus, or a full Claude model id.")
    ] = DEFAULT_MODEL_ALIAS,
    prompt: Annotated[
        Path | None,
        typer.Option(
            "--prompt",
            help="System prompt file (default: ./evaluation_prompt.txt, else the built-in one).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, help="Seed of the shuffled order (default: a fresh one)."),
    ] = None,
    delay: Annotated[
        float,
        typer.Option("--delay", min=0.0, help="Seconds between one API call and the next."),
    ] = 0.5,
    max_retries: Annotated[
        int,
        typer.Option("--max-retries", min=0, help="Extra attempts after transient API failures."),
    ] = 4,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds to wait for one API reply before retrying it.",
        ),
    ] = 120.0,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Answer yes to every prompt.")] = False,
    output_dir: Annotated[
        Path, typer.Option("--output-dir", help="Folder for the results file.")
    ] = Path("Evaluation_Runs"),
    checkpoint_dir: Annotated[
        Path | None,
        typer.Option(
            "--checkpoint-dir",
            help="Folder for checkpoints (default: $RAG_EVAL_CHECKPOINT_DIR, else the user "
            "state folder).",
        ),
    ] = None,
    metrics: Annotated[
        str,
        typer.Option(
            "--metrics",
            help="Comma list of metric families: judge, lexical, overlap, retrieval, semantic; "
            "or all.",
        ),
    ] = JUDGE_FAMILY,
    hedge_phrases: Annotated[
        str,
        typer.Option(
            "--hedge-phrases",
            help="Comma list of phrases that trigger 3 consensus votes; empty turns it off.",
        ),
    ] = ",".join(DEFAULT_HEDGE_PHRASES),
    k: Annotated[
        int, typer.Option("--k", min=1, help="Retrieval metrics: how many top contexts count.")
    ] = _DEFAULT_METRIC_OPTIONS.k,
    match: Annotated[
        str,
        typer.Option("--match", help="Retrieval metrics: how contexts match, exact or similarity."),
    ] = _DEFAULT_METRIC_OPTIONS.match,
    similarity_threshold: Annotated[
        float,
        typer.Option(
            "--similarity-threshold",
            min=0.0,
            max=1.0,
            help="Retrieval metrics with --match similarity: lowest cosine that matches.",
        ),
    ] = _DEFAULT_METRIC_OPTIONS.similarity_threshold,
    embedding_model: Annotated[
        str | None,
        typer.Option(
            "--embedding-model",
            help="Semantic metrics: a local model folder or cached model name.",
        ),
    ] = None,
    bertscore_model: Annotated[
        str | None,
        typer.Option(
            "--bertscore-model",
            help="Semantic metrics: the BERTScore model (local folder or cached name).",
        ),
    ] = None,
    fail_under: Annotated[
        str | None,
        typer.Option(
            "--fail-under",
            help="CI gate: exit with code 3 (after writing the results) when a metric's rate "
            "or mean is below its minimum, e.g. precision=0.8,rouge1=0.5.",
        ),
    ] = None,
) -> None:
    """Have Claude judge every RAG answer (precision, recall, accuracy) and write the results."""
    working_directory = Path.cwd()
    settings = load_settings(working_directory)
    configure_logging()
    thresholds = parse_thresholds(fail_under)
    request = EvaluateRequest(
        questions_path=questions,
        ground_truth_path=ground_truth,
        answers_path=answers,
        working_directory=working_directory,
        model=model,
        prompt_path=prompt,
        seed=seed,
        delay_seconds=delay,
        max_retries=max_retries,
        timeout_seconds=timeout,
        output_dir=output_dir,
        checkpoint_dir=checkpoint_dir,
        metrics=metrics,
        hedge_phrases=parse_hedge_phrases(hedge_phrases),
        metric_options=MetricOptions(
            k=k,
            match=match.strip().lower(),
            similarity_threshold=similarity_threshold,
            embedding_model=embedding_model,
            bertscore_model=bertscore_model,
        ),
        fail_under=thresholds,
    )
    outcome = run_evaluation(request, settings, ConsoleInteraction(assume_yes=yes))
    if outcome.declined:
        console.info("Nothing was evaluated.")
        raise typer.Exit(outcome.exit_code)
    console.table(
        "Summary",
        ["", "Value"],
        [[line.label, line.value] for line in outcome.summary],
    )
    console.info(f"Results written to {outcome.results_path}")
    if outcome.unscored_count:
        console.warning(
            f"{outcome.unscored_count} question(s) could not be scored; "
            "the Error column of the results file says why"
        )
    if outcome.threshold_failures:
        raise QualityGateError(
            describe_failures(outcome.threshold_failures, str(outcome.results_path))
        )
    raise typer.Exit(outcome.exit_code)

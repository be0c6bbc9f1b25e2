"""``rag-eval evaluate``: parse the options, run the pipeline, show what happened."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rag_evaluator.cli import console, options
from rag_evaluator.cli.logs import configure_logging
from rag_evaluator.cli.progress import RunConsole
from rag_evaluator.errors import BudgetExhaustedError, QualityGateError, UsageError
from rag_evaluator.families.defaults import AUTO, DEFAULT_HEDGE_PHRASES, JUDGE_FAMILY
from rag_evaluator.llm.call_options import CallOptions
from rag_evaluator.llm.models import DEFAULT_MODEL_ALIAS
from rag_evaluator.offline.options import DEFAULT_FALLBACK_PHRASES, MetricOptions
from rag_evaluator.settings import Settings, load_ci_settings, load_settings

# The pipeline, the report and the results tables are imported when the command runs, so
# that `--help` loads only what the options declare.
if TYPE_CHECKING:
    from rag_evaluator.ci.outputs import CiRequest
    from rag_evaluator.evaluate.run import EvaluateRequest, ProgressUpdate, RunOutcome, RunPlan

_DEFAULT_METRIC_OPTIONS = MetricOptions()

EVALUATE_HELP = f"""Score every RAG answer: Claude judges precision, recall and accuracy (the
judge family), and offline metric families (lexical, overlap, retrieval, semantic,
quality) score beside it. More model-judged families on request: ragas, factual_accuracy,
classify, match and rubric (--rubric FILE).

\b
Inputs (in the current folder unless given):
  questions.csv      Question Number, Question
  ground_truth.csv   Question Number, Ground Truth
                     [+ Relevant Contexts (JSON list), Required Facts]
  rag_answers.csv    Question Number, RAG Answer [+ Contexts (JSON list),
                     Retrieval Scores (JSON list of numbers, one per context)]
                     (write it from RAG JSON output with `rag-eval convert`)
or one --dataset FILE (JSON, JSON Lines or CSV) holding all three per record.
Extra columns of questions.csv (or fields of the dataset) such as Category are
carried into the results; --group-by Category summarises each value.

\b
The judge needs ANTHROPIC_API_KEY, from the environment or a .env file here.
Before paying it shows the estimated cost and asks "Proceed?" (--yes in
scripts and CI). Every finished question is checkpointed: after a crash,
Ctrl-C or kill, run the same command again and answer "Resume previous run?".
Finished results are also kept in a response cache, so an unchanged answer is
never paid for twice (--no-cache to call anyway).

\b
Exit codes: 0 all scored, 1 some questions unscored, 2 usage, input or API
error (nothing lost: resume), 130 interrupted.
Default model: {DEFAULT_MODEL_ALIAS}."""


class ConsoleInteraction(RunConsole):
    """The evaluate pipeline's questions and reports, on the terminal."""

    def progress_details(self, update: ProgressUpdate) -> str:
        rates = " ".join(
            f"{metric[0].upper()} {ones * 100 // scored}%"
            for metric, (ones, scored) in update.tallies.items()
            if scored
        )
        return super().progress_details(update) + (f" · {rates}" if rates else "")

    def show_plan(self, plan: RunPlan) -> None:
        console.info("Input files:")
        for file in plan.files:
            console.info(f"  {file.label}: {file.path} ({file.question_count} questions)")
        excluded = f" ({plan.excluded_count} left out)" if plan.excluded_count else ""
        console.info(f"Questions to evaluate: {plan.question_count}{excluded}")
        answered, answerable = plan.coverage
        console.info(f"Coverage: {answered}/{answerable} questions answered")
        if plan.limit is not None:
            console.info(
                f"Limit: the first {plan.selected_count} of {plan.question_count} questions "
                "(--limit; run again without it to evaluate the rest)"
            )
        console.info(f"Metrics: {', '.join(plan.families.names())}")
        if plan.reference_note:
            console.info(plan.reference_note)
        if plan.group_by is not None:
            console.info(f"Grouped by: {plan.group_by}")
        if plan.model is None:
            return
        for note in plan.family_notes:
            console.info(note)
        console.info(f"Model: {plan.judged_by or plan.model.key}")
        if plan.jurors:
            console.info(
                f"Jury: each of the {plan.jurors} models judges every question once; the "
                "majority per metric (the median of scores) is the verdict, without consensus "
                "votes"
            )
        console.info(f"Prompt: {plan.prompt_origin}")
        self.show_seed(plan.seed, plan.seed_was_drawn, "order")
        self.show_known(plan.resumed_count, plan.pending_count, plan.cached_count, "evaluate")
        if plan.cached_jurors:
            shown = ", ".join(f"{share} {count}" for share, count in plan.cached_jurors.items())
            console.info(f"Juror results from the response cache (no call): {shown}")
        if plan.no_information_count:
            console.info(
                f"Scored 1/1/1 without a call (answer and ground truth both say there is no "
                f"information): {plan.no_information_count}"
            )
        if plan.missing_answer_count:
            console.info(
                f"Scored 0 without a call (no answer, --score-missing): {plan.missing_answer_count}"
            )
        self.show_too_long(plan.too_long, "left unscored")
        if plan.estimate is not None:
            self.show_estimate(
                plan.estimate,
                batch=plan.batch,
                concurrency=plan.concurrency,
                max_cost=plan.max_cost,
            )


def check_dataset_options(dataset: Path | None, **files: Path | None) -> None:
    """``--dataset`` replaces the three CSVs: giving one of them too is a usage error."""
    given = [name.replace("_", "-") for name, path in files.items() if path is not None]
    if dataset is not None and given:
        raise UsageError(
            f"--dataset replaces --{', --'.join(given)}: pass either one dataset file or the "
            "CSV files, not both"
        )


@options.model_calling
def evaluate_command(
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help="CSV with columns Question Number, Question (+ metadata columns such as "
            "Category). Default: questions.csv.",
        ),
    ] = None,
    ground_truth: Annotated[
        Path | None,
        typer.Option(
            "--ground-truth",
            help="CSV with columns Question Number, Ground Truth (+ optional Relevant "
            "Contexts, Required Facts). Default: ground_truth.csv.",
        ),
    ] = None,
    answers: Annotated[
        Path | None,
        typer.Option(
            "--answers",
            help="CSV with columns Question Number, RAG Answer (+ optional Contexts). "
            "Default: rag_answers.csv.",
        ),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            help="One file instead of the three CSVs: a JSON list, JSON Lines or CSV of "
            "records with question, reference and answer fields (ragas, deepeval, RAGChecker "
            "or rag-eval names).",
        ),
    ] = None,
    group_by: Annotated[
        str | None,
        typer.Option(
            "--group-by",
            help="A metadata column (e.g. Category): summary rows and a table per value.",
        ),
    ] = None,
    calls: CallOptions = options.DEFAULT_CALLS,
    jury: Annotated[
        str | None,
        typer.Option(
            "--jury",
            metavar="MODEL,MODEL,MODEL",
            help="Judge with a jury instead of --model: an odd number of models (3 or more, "
            "any providers), each judging every question once; the majority per metric wins.",
        ),
    ] = None,
    prompt: Annotated[
        Path | None,
        typer.Option(
            "--prompt",
            help="System prompt file (default: ./evaluation_prompt.txt, else the built-in one).",
        ),
    ] = None,
    metrics: Annotated[
        str,
        typer.Option(
            "--metrics",
            help="Comma list of metric families: judge, ragas, factual_accuracy, classify, "
            "match, rubric (model-judged), lexical, overlap, retrieval, semantic, quality "
            "(offline); or all (the judge and every offline family).",
        ),
    ] = JUDGE_FAMILY,
    yes: options.Yes = False,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, help="Seed of the shuffled order (default: a fresh one)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="Evaluate only the first N questions of the seeded order (a later run "
            "without it resumes and does the rest).",
        ),
    ] = None,
    score_missing: Annotated[
        bool,
        typer.Option(
            "--score-missing",
            help="Score a question that has no answer 0 on every judge metric (no call), "
            "instead of leaving it out.",
        ),
    ] = False,
    hedge_phrases: Annotated[
        str,
        typer.Option(
            "--hedge-phrases",
            help="Comma list of phrases that trigger 3 consensus votes; empty turns it off.",
        ),
    ] = ",".join(DEFAULT_HEDGE_PHRASES),
    output_dir: Annotated[
        Path, typer.Option("--output-dir", help="Folder for the results file.")
    ] = Path("Evaluation_Runs"),
    write_json: Annotated[
        bool,
        typer.Option("--json", help="Also write the results as JSON beside the CSV."),
    ] = False,
    report: Annotated[
        bool,
        typer.Option(
            "--report", help="Also write the HTML report beside the results (rag-eval report)."
        ),
    ] = False,
    k: Annotated[
        int, typer.Option("--k", min=1, help="Retrieval metrics: how many top contexts count.")
    ] = _DEFAULT_METRIC_OPTIONS.k,
    match: Annotated[
        str,
        typer.Option(
            "--match",
            help="Retrieval metrics: how contexts match: exact, similarity (embeddings) or "
            "overlap (ROUGE-L recall of the golden chunk).",
        ),
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
    overlap_threshold: Annotated[
        float,
        typer.Option(
            "--overlap-threshold",
            min=0.0,
            max=1.0,
            help="Retrieval metrics with --match overlap: lowest share of a golden chunk's "
            "tokens (ROUGE-L recall) a retrieved chunk must cover to match it.",
        ),
    ] = _DEFAULT_METRIC_OPTIONS.overlap_threshold,
    fallback_phrases: Annotated[
        str,
        typer.Option(
            "--fallback-phrases",
            help="Quality family: comma list of phrases that fail quality_no_fallback "
            "(replaces the defaults), or @FILE with one phrase per line; empty turns the "
            "check off.",
        ),
    ] = ",".join(DEFAULT_FALLBACK_PHRASES),
    min_retrieval_score: Annotated[
        float,
        typer.Option(
            "--min-retrieval-score",
            help="Quality family: lowest retrieval score (Retrieval Scores column) that "
            "passes quality_retrieval_score.",
        ),
    ] = _DEFAULT_METRIC_OPTIONS.min_retrieval_score,
    require_citations: Annotated[
        bool,
        typer.Option(
            "--require-citations/--no-require-citations",
            help="Quality family: an answer citing no source as [n] fails quality_citations "
            "(--no-require-citations: only the numbers it cites are checked).",
        ),
    ] = _DEFAULT_METRIC_OPTIONS.require_citations,
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
    rubric: Annotated[
        Path | None,
        typer.Option(
            "--rubric",
            help="The rubric family's criteria: a .toml or .yaml file (name, description and "
            "scale per criterion).",
        ),
    ] = None,
    answer_relevance: Annotated[
        str,
        typer.Option(
            "--answer-relevance",
            help="RAGAS answer relevance: embeddings (generated questions compared with the "
            "semantic model), rating (a direct rating call), or auto (embeddings when the "
            "semantic extra is installed).",
        ),
    ] = AUTO,
    fail_under: Annotated[
        str | None,
        typer.Option(
            "--fail-under",
            help="CI gate: exit with code 3 (after writing the results) when a metric's rate "
            "or mean is below its minimum, e.g. precision=0.8,rouge1=0.5.",
        ),
    ] = None,
    fail_over: Annotated[
        str | None,
        typer.Option(
            "--fail-over",
            help="CI gate for lower-is-better metrics (dont_know, hallucination): exit with "
            "code 3 (after writing the results) when a rate or mean is above its maximum, "
            "e.g. dont_know=0.1.",
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            help="CI: also write the gates as JUnit XML to this file (a test case per gate, "
            "an error per unscored question).",
        ),
    ] = None,
) -> None:
    from rag_evaluator.evaluate.run import EvaluateRequest
    from rag_evaluator.families.judge.voting import parse_hedge_phrases
    from rag_evaluator.families.setup import LlmFamilyOptions
    from rag_evaluator.offline.families import read_fallback_phrases
    from rag_evaluator.results.gates import parse_thresholds

    working_directory = Path.cwd()
    settings = load_settings(working_directory)
    configure_logging()
    thresholds = parse_thresholds(fail_under) + parse_thresholds(fail_over, upper=True)
    check_dataset_options(dataset, questions=questions, ground_truth=ground_truth, answers=answers)
    request = EvaluateRequest(
        calls=replace(calls, jury=jury),
        questions_path=questions or Path("questions.csv"),
        ground_truth_path=ground_truth or Path("ground_truth.csv"),
        ground_truth_given=ground_truth is not None,
        answers_path=answers or Path("rag_answers.csv"),
        working_directory=working_directory,
        dataset_path=dataset,
        group_by=group_by,
        prompt_path=prompt,
        seed=seed,
        output_dir=output_dir,
        metrics=metrics,
        hedge_phrases=parse_hedge_phrases(hedge_phrases),
        metric_options=MetricOptions(
            k=k,
            match=match.strip().lower(),
            similarity_threshold=similarity_threshold,
            overlap_threshold=overlap_threshold,
            embedding_model=embedding_model,
            bertscore_model=bertscore_model,
            fallback_phrases=read_fallback_phrases(fallback_phrases),
            min_retrieval_score=min_retrieval_score,
            require_citations=require_citations,
        ),
        score_missing=score_missing,
        limit=limit,
        write_json=write_json,
        fail_under=thresholds,
        llm_options=LlmFamilyOptions(
            rubric_path=rubric,
            answer_relevance=answer_relevance,
            embedding_model=embedding_model,
        ),
    )
    from rag_evaluator.ci.outputs import CiRequest, check_junit_path

    check_junit_path(junit, list(request.input_paths))
    ci = CiRequest(junit, load_ci_settings())
    _run(request, settings, ConsoleInteraction(assume_yes=yes), report, ci)


def _run(
    request: EvaluateRequest,
    settings: Settings,
    interaction: ConsoleInteraction,
    report: bool,
    ci: CiRequest,
) -> None:
    """Run the evaluation, show what it wrote, and exit with its code (or its gate's)."""
    from rag_evaluator.evaluate.run import RunOutcome, run_evaluation
    from rag_evaluator.results.gates import describe_failures

    try:
        outcome = run_evaluation(request, settings, interaction)
    except BudgetExhaustedError as stopped:
        # What the money bought is written (marked partial): show it before the reason.
        if isinstance(stopped.outcome, RunOutcome):
            _ci_outputs(stopped.outcome, _show_results(stopped.outcome, request, report), ci)
        raise
    finally:
        interaction.finished()
    if outcome.declined:
        console.info("Nothing was evaluated.")
        raise typer.Exit(outcome.exit_code)
    report_path = _show_results(outcome, request, report)
    if outcome.remaining_after_limit:
        console.info(
            f"{outcome.remaining_after_limit} more question(s) are not evaluated yet (--limit); "
            "run the same command without --limit to evaluate them (finished ones are kept)"
        )
    if outcome.unscored_count:
        console.warning(
            f"{outcome.unscored_count} question(s) could not be scored; "
            "the Error column of the results file says why"
        )
    _ci_outputs(outcome, report_path, ci)
    if outcome.threshold_failures:
        raise QualityGateError(
            describe_failures(outcome.threshold_failures, str(outcome.results_path))
        )
    raise typer.Exit(outcome.exit_code)


def _ci_outputs(outcome: RunOutcome, report_path: Path | None, ci: CiRequest) -> None:
    """--junit, the step summary and the annotations of the results just written."""
    from rag_evaluator.ci.outputs import EvaluateRun, evaluate_ci_outputs

    if outcome.results_path is not None:
        run = EvaluateRun(outcome.results_path, outcome.summary, outcome.gate_checks, report_path)
        for command in evaluate_ci_outputs(run, ci):
            console.workflow_command(command)


def _show_results(outcome: RunOutcome, request: EvaluateRequest, report: bool) -> Path | None:
    """The summary table, the group and not-applicable tables, and where files were written;
    the report's path when one was written."""
    from rag_evaluator.families.jury.tally import is_jury_line, jury_table
    from rag_evaluator.offline.runner import not_applicable_rows
    from rag_evaluator.report.run import report_for_run
    from rag_evaluator.results.groups import group_table
    from rag_evaluator.results.kinds import METRIC_KINDS

    console.table(
        "Summary",
        ["", "Value"],
        # The kinds declaration is for the readers of the results file, not for people; the
        # jury's rows are drawn as their own table.
        [
            [line.label, line.value]
            for line in outcome.summary
            if line.label != METRIC_KINDS and not (outcome.jury and is_jury_line(line.label))
        ],
    )
    for family, agreement in outcome.jury:
        header, rows = jury_table(agreement)
        console.table(f"Jury ({family})", header, rows)
    if outcome.groups:
        header, rows = group_table(outcome.groups)
        console.table(f"By {outcome.groups[0].column}", header, rows)
    if outcome.not_applicable:
        console.table(
            "Not applicable (cells left empty, and why)",
            ["Metrics", "Empty", "Why"],
            [
                ("\n".join(metrics), empty, why)
                for metrics, empty, why in not_applicable_rows(outcome.not_applicable)
            ],
            text_columns=(2,),
        )
    console.info(f"Results written to {outcome.results_path}")
    if outcome.json_path is not None:
        console.info(f"JSON results written to {outcome.json_path}")
    if report and outcome.results_path is not None:
        written = report_for_run(
            outcome.results_path,
            request.answers_path,
            None if outcome.reference_free else request.ground_truth_path,
            dataset_path=request.dataset_path,
        )
        console.info(f"Report written to {written.path}")
        return written.path
    return None

"""The model-judged part of an evaluate run, on the shared run session.

The run supplies what is its own: the judged families, the fingerprint and seeded order of
its checkpoint, the plan of its questions, the offline scores computed before the calls, and
the results file written at the end (marked partial after a ``--max-cost`` stop).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from rag_evaluator.collector import building_long_lived
from rag_evaluator.errors import (
    BudgetExhaustedError,
    CheckpointError,
    ConfigError,
    EvaluationInterrupted,
)
from rag_evaluator.evaluate.inputs import carried_columns
from rag_evaluator.evaluate.offline import (
    OfflineScores,
    TalliedRows,
    offline_scores,
    recorded_settings,
    tally_and_write_rows,
)
from rag_evaluator.evaluate.request import (
    EXIT_ALL_SCORED,
    EXIT_SOME_UNSCORED,
    EvaluateRequest,
    InputFileInfo,
    RunInteraction,
    RunOutcome,
    RunPlan,
)
from rag_evaluator.families.base import JudgedFamily
from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.judge.prompt_file import SystemPrompt, load_system_prompt
from rag_evaluator.families.jury.family import JuryFamily
from rag_evaluator.families.jury.panel import parse_jury
from rag_evaluator.families.jury.results import Juror
from rag_evaluator.families.setup import LlmFamilySetup, build_llm_families, ragas_input_warnings
from rag_evaluator.inputs.files import file_sha256
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.inputs.selection import shuffled_order
from rag_evaluator.inputs.spool import items_among, question_numbers
from rag_evaluator.llm.checkpoint.store import (
    CheckpointHeader,
    checkpoint_path,
    remove_checkpoint,
    resolve_checkpoint_directory,
)
from rag_evaluator.llm.fingerprint import (
    InputNames,
    RunFingerprint,
    checkpoint_key,
    fingerprint_differences,
    fingerprint_digests,
)
from rag_evaluator.llm.judging import JudgedRecords
from rag_evaluator.llm.models import ModelInfo, parse_price
from rag_evaluator.llm.planning import JudgingOptions, JudgingPlan, PreparedCheckpoint, draw_seed
from rag_evaluator.llm.planning import plan_judging as plan_questions
from rag_evaluator.llm.providers import credentials_problem
from rag_evaluator.llm.response_cache import default_cache_directory
from rag_evaluator.llm.session import (
    ResumeTexts,
    RunSession,
    SessionConfig,
    call_model,
    session_config,
)
from rag_evaluator.offline.families import MetricFamilies, runnable_offline_families
from rag_evaluator.results.gates import check_thresholds, failures_of
from rag_evaluator.results.rows import ResultRows
from rag_evaluator.results.summary import RunFacts, summary_lines
from rag_evaluator.results.writer import PendingRows, prepare_output_directory
from rag_evaluator.settings import Settings

logger = logging.getLogger(__name__)

# The Prompt summary line of a run without the judge: each LLM family has its own prompts.
FAMILY_PROMPTS_ORIGIN = "built-in prompts of the families"
RESUME_TEXTS = ResumeTexts("run of these files", "inputs, model, prompt and settings")

if TYPE_CHECKING:
    # A jury's tally brings numpy, which a run without a jury never imports.
    from rag_evaluator.families.jury.tally import JuryTally


@dataclass(frozen=True)
class JudgeSetup:
    """What judging needs; absent when the run computes offline metrics only.

    ``judge`` says whether the precision/recall/accuracy judge runs (its prompt is then
    ``system_prompt``); ``llm`` holds the other model-judged families' setup.
    """

    api_key: str
    model: ModelInfo
    system_prompt: SystemPrompt
    judge: bool = True
    llm: LlmFamilySetup = field(default_factory=lambda: LlmFamilySetup((), None, "", None))
    jurors: tuple[Juror, ...] = ()  # --jury: the models that judge instead of ``model``

    @property
    def judged_by(self) -> str:
        """The model (``provider/id`` off the Anthropic API), or the jury, as the plan,
        summary and checkpoint name it."""
        if not self.jurors:
            return self.model.key
        return "jury of " + " / ".join(juror.model.key for juror in self.jurors)

    @property
    def unpriced(self) -> tuple[str, ...]:
        models = [juror.model for juror in self.jurors] or [self.model]
        return tuple(model.key for model in models if not model.priced)


def _missing_credentials_message(problem: str, families: MetricFamilies) -> str:
    if not (families.wants_all or families.offline):
        return problem
    runnable = runnable_offline_families()
    if runnable:
        problem += f", or leave the judged families out with --metrics {','.join(runnable)}"
    return problem


def judge_setup(
    request: EvaluateRequest,
    settings: Settings,
    families: MetricFamilies,
    llm: LlmFamilySetup,
) -> JudgeSetup | None:
    """The judged families' setup (credentials, model, prompt), or ``None`` for an offline
    run."""
    if not families.model_judged:
        return None
    jurors = _jurors(request)
    models = [juror.model for juror in jurors] or [call_model(request.calls)]
    for provider in dict.fromkeys(model.provider for model in models):
        problem = credentials_problem(provider, settings)
        if problem is not None:
            raise ConfigError(_missing_credentials_message(problem, families))
    api_key = settings.api_key or ""
    if not families.judge:
        if request.prompt_path is not None:
            logger.warning(
                "--prompt is the judge family's prompt and the judge does not run: it is ignored"
            )
        prompt = SystemPrompt("", FAMILY_PROMPTS_ORIGIN)
        return JudgeSetup(api_key, models[0], prompt, False, llm, jurors)
    prompt = load_system_prompt(request.prompt_path, request.working_directory)
    return JudgeSetup(api_key, models[0], prompt, True, llm, jurors)


def _jurors(request: EvaluateRequest) -> tuple[Juror, ...]:
    calls = request.calls
    if calls.jury is None:
        return ()
    return parse_jury(calls.jury, parse_price(calls.price) if calls.price else None)


def judged_families(request: EvaluateRequest, setup: JudgeSetup) -> tuple[JudgedFamily[Any], ...]:
    """The run's model-judged families in column order: the judge, then the LLM families;
    each sat on by the jury when there is one (the judge then asks no consensus votes: the
    jurors' majority replaces them)."""
    consensus = not setup.jurors
    judge = (
        [JudgeFamily(setup.system_prompt.text, request.hedge_phrases, consensus=consensus)]
        if setup.judge
        else []
    )
    families = (*judge, *build_llm_families(setup.llm))
    if not setup.jurors:
        return families
    return tuple(JuryFamily(family, setup.jurors) for family in families)


def _session_config(
    request: EvaluateRequest, settings: Settings, setup: JudgeSetup
) -> SessionConfig:
    """The session of a run over these input files (its checkpoint named after their paths)."""
    calls = request.calls
    directory = resolve_checkpoint_directory(calls.checkpoint_dir, settings.checkpoint_dir)
    paths = [str(path.resolve()) for path in request.input_paths]
    return session_config(
        calls,
        setup.model,
        setup.api_key,
        checkpoint_path(directory, checkpoint_key(paths)),
        settings.cache_dir or default_cache_directory(),
        tuple(juror.model for juror in setup.jurors),
        settings.batch_window_bytes,
    )


def _fingerprint(
    request: EvaluateRequest,
    setup: JudgeSetup,
    families: Sequence[JudgedFamily[Any]],
    files: Sequence[InputFileInfo],
) -> RunFingerprint:
    # Hashed a chunk at a time (input files of gigabytes are never held), each file once: a
    # spooled file was hashed as it was read.
    digests = {info.path: info.sha256 for info in files if info.sha256 is not None}
    for path in request.input_paths:
        if path not in digests:
            digests[path] = file_sha256(path)
    questions, ground_truth, answers = (digests[path] for path in request.input_paths)
    judge_prompt = next((getattr(family, "system_prompt", "") for family in families), "")
    return fingerprint_digests(
        (questions, ground_truth, answers),
        setup.judged_by,
        judge_prompt,
        families=[family.name for family in families],
        settings={
            "families": {
                family.name: {"version": family.version, "identity": family.identity()}
                for family in families
            },
            "score_missing": request.score_missing,
        },
    )


def _checkpoint(
    session: RunSession,
    request: EvaluateRequest,
    setup: JudgeSetup,
    families: Sequence[JudgedFamily[Any]],
    numbers: set[int],
    files: Sequence[InputFileInfo],
    started_at: datetime,
) -> PreparedCheckpoint:
    """This run's checkpoint: the unfinished one it resumes, or a new header."""
    fingerprint = _fingerprint(request, setup, families, files)
    names = InputNames(*(path.name for path in request.input_paths))
    decision = session.resume(
        lambda saved: fingerprint_differences(saved, fingerprint, names),
        {family.name: family for family in families},
        RESUME_TEXTS,
        request.seed,
    )
    path = session.config.checkpoint_path
    if decision.loaded is not None:
        if set(decision.loaded.header.order) != numbers:
            raise CheckpointError(
                f"The checkpoint {path} lists other questions than the input files. "
                f"Delete {path} to start the run over"
            )
        return PreparedCheckpoint(path, decision.loaded.header, decision.loaded, None)
    seed = request.seed if request.seed is not None else draw_seed()
    header = CheckpointHeader(
        fingerprint=fingerprint,
        seed=seed,
        order=shuffled_order(numbers, seed),
        prompt_origin=setup.system_prompt.origin,
        input_paths=[str(item.resolve()) for item in request.input_paths],
        created_at=started_at.isoformat(timespec="seconds"),
    )
    return PreparedCheckpoint(path, header, None, decision.replaces)


def judged_run(
    request: EvaluateRequest,
    settings: Settings,
    interaction: RunInteraction,
    base_plan: RunPlan,
    setup: JudgeSetup,
    items: Sequence[EvaluationItem],
    started_at: datetime,
) -> RunOutcome:
    """Plan, confirm and judge the run's questions, then write its results."""
    families = judged_families(request, setup)
    options = JudgingOptions(
        model=setup.model,
        families=families,
        limit=request.limit,
        concurrency=request.calls.concurrency,
        batch=request.calls.batch,
        use_cache=request.calls.use_cache,
    )
    with RunSession(_session_config(request, settings, setup), interaction) as session:
        numbers = set(question_numbers(items))
        checkpoint = _checkpoint(
            session, request, setup, families, numbers, base_plan.files, started_at
        )
        resumed = checkpoint.resume_from
        # The SDK's modules (imported on connecting), a job per question, the selected items.
        with building_long_lived():
            session.connect(resumed.spent_usd if resumed is not None else 0.0)
            plan = session.prepare(
                lambda window, count: plan_questions(
                    options,
                    checkpoint,
                    items,
                    session.cache,
                    answers_name=request.input_paths[2].name,
                    context_window_tokens=window,
                    count_tokens=count,
                )
            )
            selected = items_among(items, plan.selected)
        for warning in ragas_input_warnings(
            setup.llm.names, selected, references=setup.llm.references
        ):
            logger.warning(warning)
        run_plan = _run_plan(base_plan, request, setup, plan)
        if not session.confirm(plan, lambda: interaction.show_plan(run_plan)):
            return RunOutcome(declined=True, exit_code=EXIT_ALL_SCORED)
        return _judge_and_write(
            session, interaction, request, base_plan, setup, plan, options, selected, started_at
        )


def _judge_and_write(
    session: RunSession,
    interaction: RunInteraction,
    request: EvaluateRequest,
    base_plan: RunPlan,
    setup: JudgeSetup,
    plan: JudgingPlan,
    options: JudgingOptions,
    selected: Sequence[EvaluationItem],
    started_at: datetime,
) -> RunOutcome:
    """Everything after ``Proceed``: the offline scores, the calls, the results file."""
    # Found out now, not after every question has been paid for.
    prepare_output_directory(request.output_dir)
    if plan.sends_calls and setup.llm.question_embeddings is not None:
        # Loaded now, so a model that cannot load stops the run before the first call.
        setup.llm.question_embeddings.load()
    offline = offline_scores(request, base_plan, selected, interaction)
    judged_records = session.judge(plan, options)
    interaction.finished()
    try:
        outcome = _write_outcome(
            request, base_plan, setup, plan, selected, judged_records, offline, started_at, options
        )
    except KeyboardInterrupt:
        # After the last call: everything paid for is in the checkpoint, only the file is lost.
        raise EvaluationInterrupted(
            f"Interrupted while writing the results; the {len(judged_records.records)} judged "
            f"questions are saved in the checkpoint {plan.checkpoint.path}. Run the same "
            "command again to write them (no call is paid for again)"
        ) from None
    logger.info("Response cache: %d hit(s)", session.cache.hits)
    if judged_records.budget_stop is not None:
        raise _budget_stop(judged_records.budget_stop, outcome)
    return outcome


def _run_plan(
    base: RunPlan, request: EvaluateRequest, setup: JudgeSetup, plan: JudgingPlan
) -> RunPlan:
    checkpoint = plan.checkpoint
    pending = sum(1 for job in plan.jobs if job.families or job.known)
    return replace(
        base,
        model=setup.model,
        judged_by=setup.judged_by,
        jurors=len(setup.jurors),
        prompt_origin=setup.system_prompt.origin,
        seed=checkpoint.header.seed,
        seed_was_drawn=checkpoint.resume_from is None and request.seed is None,
        selected_count=len(plan.selected),
        resumed_count=len(plan.done),
        pending_count=pending,
        cached_count=plan.cached_count,
        cached_jurors=plan.cached_jurors,
        no_information_count=plan.shortcut_count,
        missing_answer_count=plan.missing_answer_count,
        too_long=plan.too_long,
        estimate=plan.estimate if plan.sends_calls else None,
        checkpoint_path=checkpoint.path,
        concurrency=request.calls.concurrency,
        batch=request.calls.batch,
        max_cost=request.calls.max_cost,
        family_notes=tuple(setup.llm.describe()),
    )


def _write_outcome(
    request: EvaluateRequest,
    base_plan: RunPlan,
    setup: JudgeSetup,
    plan: JudgingPlan,
    selected: Sequence[EvaluationItem],
    judged_records: JudgedRecords,
    offline: OfflineScores,
    started_at: datetime,
    options: JudgingOptions,
) -> RunOutcome:
    records = judged_records.records
    partial = None
    if judged_records.budget_stop is not None:
        # What the money bought: the finished questions only, marked partial.
        partial = (
            f"stopped at the --max-cost budget after {len(records)} of {len(selected)} questions"
        )
        selected = items_among(selected, records)
    # Read back from the checkpoint once, summarised as the rows are written: never held whole.
    families = options.families
    rows = ResultRows(selected, records, offline.scores)
    carried = carried_columns(base_plan, families, offline.columns)
    try:
        with PendingRows(
            request.output_dir,
            families=families,
            metric_columns=offline.columns,
            metadata_columns=carried,
            with_json=request.write_json,
        ) as pending:
            tallied = TalliedRows(pending, base_plan.group_by, families, offline.columns)
            tally_and_write_rows(rows, tallied)
            tally = tallied.tally
            facts = _facts(
                request, setup, plan, tally, base_plan, offline.columns, carried, partial
            )
            facts = _with_unfinished(facts, judged_records)
            summary = summary_lines(tally, facts)
            groups = tallied.groups()
            results_path, json_path = pending.publish(started_at, summary, groups)
    finally:
        records.close()
    logger.info("Results written to %s", results_path)
    if plan.remaining_after_limit == 0 and partial is None:
        remove_checkpoint(plan.checkpoint.path)
    unscored = tally.unscored_questions
    gate_checks = check_thresholds(request.fail_under, tally.observed_values())
    return RunOutcome(
        declined=False,
        exit_code=EXIT_SOME_UNSCORED if unscored else EXIT_ALL_SCORED,
        results_path=results_path,
        json_path=json_path,
        summary=summary,
        unscored_count=unscored,
        remaining_after_limit=plan.remaining_after_limit,
        threshold_failures=failures_of(gate_checks),
        gate_checks=gate_checks,
        groups=groups,
        reference_free=request.reference_free,
        not_applicable=offline.empty,
        jury=[
            (family.name, cast("JuryTally", family_tally).agreement())
            for family, family_tally in zip(families, tally.family_tallies, strict=True)
            if isinstance(family, JuryFamily)
        ],
    )


def _facts(
    request: EvaluateRequest,
    setup: JudgeSetup,
    plan: JudgingPlan,
    tally: Any,
    base_plan: RunPlan,
    metric_columns: Sequence[str],
    carried: Sequence[str],
    partial: str | None,
) -> RunFacts:
    """What the summary reports besides the rows: model, seed, calls, tokens, cost."""
    return RunFacts(
        judged=True,
        model_id=setup.judged_by,
        seed=plan.checkpoint.header.seed,
        prompt_origin=setup.system_prompt.origin,
        usage=tally.usage,
        calls=tally.calls,
        retries=tally.retries,
        cached_questions=tally.cached_questions,
        cost_usd=tally.cost_usd,
        estimate=_estimate_text(plan),
        batch=request.calls.batch,
        coverage=base_plan.coverage,
        metric_columns=metric_columns,
        metadata_columns=carried,
        partial=partial,
        unpriced=setup.unpriced,
        metric_settings=recorded_settings(request.metric_options, metric_columns),
    )


def _estimate_text(plan: JudgingPlan) -> str | None:
    """The estimate as the summary shows it: a resumed session's covers only what was left,
    while ``Cost`` covers every session, so it says so."""
    if not plan.sends_calls:
        return None
    text = plan.estimate.summary_dollars()
    return text if plan.checkpoint.resume_from is None else f"{text} (the calls left at the resume)"


def _with_unfinished(facts: RunFacts, judged: JudgedRecords) -> RunFacts:
    """The facts with the calls of the questions a stopped run did not finish: paid for, so
    in the run's calls, tokens and cost though no row shows them."""
    unfinished = judged.unfinished
    cost = facts.cost_usd
    return replace(
        facts,
        output_notes=judged.output_notes,
        usage=facts.usage + unfinished.usage,
        calls=facts.calls + unfinished.calls,
        cost_usd=None if cost is None else cost + unfinished.cost_usd,
    )


def _budget_stop(error: BudgetExhaustedError, outcome: RunOutcome) -> BudgetExhaustedError:
    """The budget stop, saying where the partial results are."""
    written = f"The results of the finished questions are in {outcome.results_path}"
    if outcome.json_path is not None:
        written += f" and {outcome.json_path}"
    stopped = BudgetExhaustedError(f"{error.message.rstrip('.')}. {written}, marked partial")
    stopped.outcome = outcome
    return stopped

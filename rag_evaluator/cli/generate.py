"""``rag-eval generate``: parse the options, run the pipeline, show what happened."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rag_evaluator.cli import console
from rag_evaluator.cli.logs import configure_logging
from rag_evaluator.cli.progress import RunConsole
from rag_evaluator.generate.documents import DEFAULT_CHUNK_CHARACTERS
from rag_evaluator.generate.run import PAIRING_AUTO, GeneratePlan, GenerateRequest, run_generation
from rag_evaluator.generate.sampling import DEFAULT_TYPES, QUESTION_TYPES
from rag_evaluator.inputs.selection import format_numbers
from rag_evaluator.llm.cost import dollar_range
from rag_evaluator.llm.limits import DELAY_HELP
from rag_evaluator.llm.models import DEFAULT_MODEL_ALIAS
from rag_evaluator.settings import load_settings
from rag_evaluator.text.money import format_usd

_DEFAULT_REQUEST = GenerateRequest(Path(), Path())

GENERATE_HELP = f"""Generate a golden set from your documents: questions.csv and
ground_truth.csv, ready for `rag-eval evaluate`.

\b
Reads the .txt, .md and .pdf files under --docs (PDF needs the pdf extra:
pip install 'rag-eval[pdf]'), cuts them into chunks by paragraphs, picks
chunks spread across the documents and has Claude write one question per
chunk (two related chunks for multi_hop) with its answer taken only from the
chunk, the facts it needs and the sentences that support it. Replies whose
support is not in the chunk, near-duplicate questions, questions quoting the
chunk and empty or over-long replies are dropped and replaced. Every answer
keeps its provenance: the exact chunk texts (Relevant Contexts) and their
character offsets in each file (Source Spans). Review the pairs with
`rag-eval review` before you use them.

\b
Needs ANTHROPIC_API_KEY. Shows the estimated cost and asks "Proceed?" (--yes
in scripts); checkpoints every question (run the same command again to
resume); reuses earlier replies from the response cache (--no-cache).
Question types: {", ".join(QUESTION_TYPES)}.

\b
Exit codes: 0 all --count questions written, 1 fewer written (see the
summary), 2 usage, input or API error, 130 interrupted."""


class GenerateConsoleInteraction(RunConsole):
    """The generate pipeline's questions and reports, on the terminal."""

    def __init__(self, assume_yes: bool) -> None:
        super().__init__(assume_yes, label="Generating")

    def show_plan(self, plan: GeneratePlan) -> None:
        skipped = f", {len(plan.skipped_files)} file(s) passed over" if plan.skipped_files else ""
        console.info(f"Documents: {plan.docs_dir} ({plan.documents} read{skipped})")
        console.info(
            f"Chunks: {plan.chunks} (up to the --chunk-chars limit), {plan.question_chunks} "
            "long enough to ask about"
        )
        mix = ", ".join(f"{name} {number}" for name, number in plan.type_counts.items() if number)
        console.info(f"Questions to generate: {plan.count} ({mix})")
        if plan.pairing:
            console.info(f"Multi-hop pairs: by {plan.pairing}")
        if plan.examples:
            console.info(f"Few-shot examples: {plan.examples}")
        console.info(f"Model: {plan.model.model_id}")
        if plan.seed_was_drawn:
            console.info(f"Seed: {plan.seed} (repeat this set with --seed {plan.seed})")
        else:
            console.info(f"Seed: {plan.seed}")
        console.info(f"Output: {plan.questions_path}, {plan.ground_truth_path}")
        if plan.resumed_count:
            console.info(
                f"Resuming: {plan.resumed_count} done, {plan.pending_count} still to generate"
            )
        if plan.cached_count:
            console.info(f"From the response cache (no call): {plan.cached_count}")
        if plan.too_long:
            console.warning(
                "Too long for the model's context window, dropped without a call: question "
                f"{format_numbers(plan.too_long, 10)}"
            )
        if plan.estimate is not None:
            estimate = plan.estimate
            how = []
            if plan.batch:
                how.append("Message Batches, 50% off")
            elif plan.concurrency > 1:
                how.append(f"{plan.concurrency} calls at a time")
            if estimate.prompt_caching:
                how.append("prompt caching")
            if plan.top_up_allowance:
                how.append(f"up to {plan.top_up_allowance} more to replace dropped questions")
            extra = f"; {', '.join(how)}" if how else ""
            console.info(
                f"Estimated cost: {dollar_range(estimate.low_usd, estimate.high_usd)} "
                f"({estimate.expected_calls_low} to {estimate.expected_calls_high} calls{extra})"
            )
            if plan.max_cost is not None:
                console.info(f"Budget: stops before spending more than {format_usd(plan.max_cost)}")


def generate_command(
    docs: Annotated[
        Path,
        typer.Option("--docs", help="Folder of .txt, .md and .pdf documents (read recursively)."),
    ],
    count: Annotated[
        int, typer.Option("--count", min=1, help="How many questions to write.")
    ] = _DEFAULT_REQUEST.count,
    model: Annotated[
        str, typer.Option("--model", help="sonnet, haiku, opus, or a full Claude model id.")
    ] = DEFAULT_MODEL_ALIAS,
    examples: Annotated[
        Path | None,
        typer.Option(
            "--examples",
            help="CSV of a few human pairs (Question, Ground Truth) shown as few-shot examples.",
        ),
    ] = None,
    types: Annotated[
        str,
        typer.Option(
            "--types",
            help="Question types and their weights: factual, comparison, multi_hop, "
            "unanswerable (factual=3,unanswerable=1; no weight means 1).",
        ),
    ] = DEFAULT_TYPES,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, help="Seed of the chunk sampling (default: a fresh one)."),
    ] = None,
    chunk_chars: Annotated[
        int,
        typer.Option(
            "--chunk-chars", help="Largest chunk, in characters (paragraphs are joined up to it)."
        ),
    ] = DEFAULT_CHUNK_CHARACTERS,
    pairing: Annotated[
        str,
        typer.Option(
            "--pairing",
            help="How multi_hop pairs related chunks: keywords, embeddings (semantic extra), "
            "or auto (embeddings when installed).",
        ),
    ] = PAIRING_AUTO,
    output_dir: Annotated[
        Path,
        typer.Option("--output-dir", help="Folder for questions.csv and ground_truth.csv."),
    ] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite questions.csv and ground_truth.csv.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Answer yes to every prompt (scripts, CI).")
    ] = False,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Calls in flight at once.")
    ] = _DEFAULT_REQUEST.concurrency,
    delay: Annotated[
        float | None,
        typer.Option("--delay", min=0.0, help=DELAY_HELP),
    ] = _DEFAULT_REQUEST.delay_seconds,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send the calls as Message Batches: half the price, results within hours.",
        ),
    ] = False,
    batch_poll: Annotated[
        float, typer.Option("--batch-poll", min=0.01, help="Seconds between checks of a batch.")
    ] = _DEFAULT_REQUEST.batch_poll_seconds,
    cache: Annotated[
        bool,
        typer.Option(
            "--cache/--no-cache",
            help="Reuse replies to identical earlier requests from the response cache.",
        ),
    ] = True,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            min=0.0,
            help="Stop (resumable) before the spending would pass this many dollars.",
        ),
    ] = None,
    exact_estimate: Annotated[
        bool,
        typer.Option(
            "--exact-estimate", help="Count input tokens with the API's free count_tokens endpoint."
        ),
    ] = False,
    max_retries: Annotated[
        int,
        typer.Option(
            "--max-retries", min=0, help="Retries of a call after a transient API failure."
        ),
    ] = _DEFAULT_REQUEST.max_retries,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for one API reply.")
    ] = _DEFAULT_REQUEST.timeout_seconds,
    checkpoint_dir: Annotated[
        Path | None,
        typer.Option(
            "--checkpoint-dir",
            help="Folder for checkpoints (default: $RAG_EVAL_CHECKPOINT_DIR, else the user "
            "state folder).",
        ),
    ] = None,
) -> None:
    working_directory = Path.cwd()
    settings = load_settings(working_directory)
    configure_logging()
    request = GenerateRequest(
        docs_dir=docs,
        working_directory=working_directory,
        count=count,
        model=model,
        examples_path=examples,
        types=types,
        seed=seed,
        chunk_characters=chunk_chars,
        pairing=pairing.strip().lower(),
        output_dir=output_dir,
        force=force,
        delay_seconds=delay,
        max_retries=max_retries,
        timeout_seconds=timeout,
        concurrency=concurrency,
        batch=batch,
        batch_poll_seconds=batch_poll,
        use_cache=cache,
        exact_estimate=exact_estimate,
        max_cost=max_cost,
        checkpoint_dir=checkpoint_dir,
    )
    interaction = GenerateConsoleInteraction(assume_yes=yes)
    try:
        outcome = run_generation(request, settings, interaction)
    finally:
        interaction.finished()
    if outcome.declined:
        console.info("Nothing was generated.")
        raise typer.Exit(outcome.exit_code)
    console.table("Summary", ["", "Value"], [[line.label, line.value] for line in outcome.summary])
    if outcome.questions_path is None:
        console.warning(
            "No question passed the filters, so nothing was written; rag_eval.log says why "
            "each was dropped"
        )
    else:
        console.info(
            f"Wrote {outcome.written} question(s) to {outcome.questions_path} and "
            f"{outcome.ground_truth_path}"
        )
        if outcome.written < outcome.count:
            console.warning(
                f"{outcome.count - outcome.written} fewer than the {outcome.count} asked for: "
                "too many were dropped (the summary counts why); rag_eval.log has each reason"
            )
        console.info("Review them with: rag-eval review")
    raise typer.Exit(outcome.exit_code)

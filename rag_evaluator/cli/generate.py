"""``rag-eval generate``: parse the options, run the pipeline, show what happened."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rag_evaluator.cli import console, options
from rag_evaluator.cli.logs import configure_logging
from rag_evaluator.cli.progress import RunConsole
from rag_evaluator.generate.documents import DEFAULT_CHUNK_CHARACTERS
from rag_evaluator.generate.options import (
    DEFAULT_COUNT,
    DEFAULT_TYPES,
    PAIRING_AUTO,
    QUESTION_TYPES,
)
from rag_evaluator.llm.call_options import CallOptions
from rag_evaluator.settings import load_settings

# The pipeline is imported when the command runs, so that `--help` loads only what the
# options declare.
if TYPE_CHECKING:
    from rag_evaluator.generate.run import GeneratePlan

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
        self.show_seed(plan.seed, plan.seed_was_drawn, "set")
        console.info(f"Output: {plan.questions_path}, {plan.ground_truth_path}")
        self.show_known(plan.resumed_count, plan.pending_count, plan.cached_count, "generate")
        self.show_too_long(plan.too_long, "dropped")
        if plan.estimate is not None:
            top_up = plan.top_up_allowance
            self.show_estimate(
                plan.estimate,
                batch=plan.batch,
                concurrency=plan.concurrency,
                max_cost=plan.max_cost,
                also=[f"up to {top_up} more to replace dropped questions"] if top_up else [],
            )


@options.model_calling
def generate_command(
    docs: Annotated[
        Path,
        typer.Option("--docs", help="Folder of .txt, .md and .pdf documents (read recursively)."),
    ],
    count: Annotated[
        int, typer.Option("--count", min=1, help="How many questions to write.")
    ] = DEFAULT_COUNT,
    calls: CallOptions = options.DEFAULT_CALLS,
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
    yes: options.Yes = False,
) -> None:
    from rag_evaluator.generate.run import GenerateRequest, run_generation

    working_directory = Path.cwd()
    settings = load_settings(working_directory)
    configure_logging()
    request = GenerateRequest(
        calls=calls,
        docs_dir=docs,
        working_directory=working_directory,
        count=count,
        examples_path=examples,
        types=types,
        seed=seed,
        chunk_characters=chunk_chars,
        pairing=pairing.strip().lower(),
        output_dir=output_dir,
        force=force,
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

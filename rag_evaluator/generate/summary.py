"""The summary of a generate run: what was read, asked, dropped (per filter) and kept."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_evaluator.generate.filters import FILTER_LABELS, FILTERS
from rag_evaluator.generate.sampling import QUESTION_TYPES
from rag_evaluator.generate.selection import SlotOutcome, rejection_counts
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.results.summary import STRUCTURED_OUTPUT, SummaryLine, spending_lines


@dataclass(frozen=True)
class GenerationFacts:
    """What the summary reports besides the outcomes."""

    documents: int
    chunks: int
    question_chunks: int
    count: int
    model_id: str
    seed: int
    rounds: int
    calls: int
    cached_questions: int
    usage: TokenUsage
    cost_usd: float
    estimate: str | None
    batch: bool = False
    unpriced: tuple[str, ...] = ()  # the model, when its price is unknown
    output_notes: tuple[str, ...] = ()  # the model, when asked for JSON in text


def generation_summary(
    outcomes: Sequence[SlotOutcome], facts: GenerationFacts
) -> list[SummaryLine]:
    """Summary lines in display order; every filter has its line, zero or not."""
    kept = [outcome.pair for outcome in outcomes if outcome.pair is not None]
    rejected = rejection_counts(outcomes)
    by_type = Counter(pair.question_type for pair in kept)
    extra = len(outcomes) - min(facts.count, len(outcomes))
    asked = f"{len(outcomes)}" + (
        f" ({extra} more in {facts.rounds - 1} top-up round(s) to replace dropped ones)"
        if extra
        else ""
    )
    lines = [
        SummaryLine(
            "Documents",
            f"{facts.documents} ({facts.chunks} chunks, {facts.question_chunks} long enough "
            "to ask about)",
        ),
        SummaryLine("Questions Asked", asked),
    ]
    lines += [SummaryLine(FILTER_LABELS[name], str(rejected.get(name, 0))) for name in FILTERS]
    lines.append(SummaryLine("Kept", f"{len(kept)} of {facts.count} asked for"))
    lines.append(
        SummaryLine(
            "By Type",
            ", ".join(f"{name} {by_type[name]}" for name in QUESTION_TYPES if by_type[name])
            or "none",
        )
    )
    lines += [
        SummaryLine("Model", facts.model_id),
        SummaryLine("Seed", str(facts.seed)),
        SummaryLine("Calls", str(facts.calls)),
        SummaryLine("Cached Questions", str(facts.cached_questions)),
    ]
    if facts.output_notes:
        lines.append(SummaryLine(STRUCTURED_OUTPUT, " / ".join(facts.output_notes)))
    lines += spending_lines(
        facts.usage, facts.batch, facts.estimate, facts.cost_usd, facts.unpriced
    )
    return lines

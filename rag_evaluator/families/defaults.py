"""The judge's name and the model-judged families' defaults that the command line declares
(``--metrics``, ``--hedge-phrases``, ``--answer-relevance``), in a module that imports nothing:
`rag-eval evaluate --help` shows them without loading the families."""

from __future__ import annotations

JUDGE_FAMILY = "judge"

DEFAULT_HEDGE_PHRASES: tuple[str, ...] = (
    "borderline",
    "arguably",
    "unclear",
    "could go either way",
    # The default prompt asks the judge to say so plainly when a score is a close call.
    "close call",
)

# --answer-relevance: embeddings when the semantic extra is installed, else a rating call.
AUTO = "auto"

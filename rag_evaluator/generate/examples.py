"""Reading ``--examples``: a few human-written question and answer pairs, as few-shot examples."""

from __future__ import annotations

import logging
from pathlib import Path

from rag_evaluator.errors import InputError
from rag_evaluator.generate.prompts import MAX_EXAMPLES, Example
from rag_evaluator.inputs.fields import GROUND_TRUTH, QUESTION
from rag_evaluator.inputs.tables import read_csv

logger = logging.getLogger(__name__)


def load_examples(path: Path) -> list[Example]:
    """The pairs of a CSV file with columns Question and Ground Truth (any spelling the other
    inputs accept); rows with a blank cell are passed over."""
    table = read_csv(path, required=[QUESTION, GROUND_TRUTH])
    examples = [
        Example(record.values[QUESTION].strip(), record.values[GROUND_TRUTH].strip())
        for record in table.records
        if record.values[QUESTION].strip() and record.values[GROUND_TRUTH].strip()
    ]
    blank = len(table.records) - len(examples)
    if blank:
        logger.warning(
            "%s: %d row(s) with a blank question or answer were passed over", path.name, blank
        )
    if not examples:
        raise InputError(
            f"{path.name} has no example with both a question and an answer. Fill in the "
            "Question and Ground Truth columns, or leave --examples out",
            path,
        )
    if len(examples) > MAX_EXAMPLES:
        logger.warning(
            "%s holds %d examples; the first %d are shown to the model (a few show the style)",
            path.name,
            len(examples),
            MAX_EXAMPLES,
        )
    return examples

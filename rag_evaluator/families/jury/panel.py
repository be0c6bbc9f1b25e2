"""``--jury MODEL,MODEL,MODEL``: the jurors, each a model as ``--model`` takes it."""

from __future__ import annotations

from rag_evaluator.errors import UsageError
from rag_evaluator.families.jury.results import Juror
from rag_evaluator.llm.models import resolve_model

MIN_JURORS = 3


def parse_jury(spec: str, price: tuple[float, float] | None = None) -> tuple[Juror, ...]:
    """The jurors of ``--jury``, in the order given; ``price`` (``--price``) prices every
    juror whose price the model table lacks.

    An odd number (3 or more) of different models: the majority of a rate is then always
    decided when every juror answers.
    """
    labels = [part.strip() for part in spec.split(",")]
    if any(not label for label in labels):
        raise UsageError(
            f"--jury {spec} has an empty entry. Give models separated by commas, e.g. "
            "--jury haiku,openai/gpt-4.1-mini,vertex/sonnet"
        )
    if len(labels) < MIN_JURORS or len(labels) % 2 == 0:
        raise UsageError(
            f"--jury needs an odd number of models, at least {MIN_JURORS} (got {len(labels)}), "
            "so that every majority is decided. Add or remove a juror"
        )
    jurors = []
    for label in labels:
        model = resolve_model(label)
        if price is not None and not model.priced:
            model = resolve_model(label, price)
        jurors.append(Juror(label, model))
    keys = [juror.model.key for juror in jurors]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise UsageError(
            f"--jury names {', '.join(repeated)} more than once: a juror judging twice only "
            "repeats its own verdict. Give different models"
        )
    return tuple(jurors)

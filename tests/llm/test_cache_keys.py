"""The response cache's keys computed once per run's family (``FamilyCacheKeys``) are the
keys ``family_cache_key`` gives: entries cached before stay found."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_evaluator.families.judge.family import JudgeFamily
from rag_evaluator.families.jury.family import JuryFamily
from rag_evaluator.families.jury.results import Juror
from rag_evaluator.families.ragas.family import RagasFamily
from rag_evaluator.inputs.records import EvaluationItem
from rag_evaluator.llm.models import ModelInfo, resolve_model
from rag_evaluator.llm.planning import FamilyCacheKeys, family_cache_key

TEXTS = st.text(max_size=60)


@settings(max_examples=60, deadline=None)
@given(
    prompt=TEXTS,
    hedges=st.lists(TEXTS, max_size=3),
    consensus=st.booleans(),
    question=TEXTS,
    truth=TEXTS,
    answer=TEXTS,
    contexts=st.none() | st.lists(TEXTS, max_size=3),
    model_key=st.sampled_from(["claude-haiku-4-5", 'bedrock/é "model"', "openai/x"]),
)
def test_keys_are_those_of_family_cache_key(
    prompt: str,
    hedges: list[str],
    consensus: bool,
    question: str,
    truth: str,
    answer: str,
    contexts: list[str] | None,
    model_key: str,
) -> None:
    judge = JudgeFamily(prompt, hedges, consensus=consensus)
    families = (
        judge,
        RagasFamily(),
        JuryFamily(JudgeFamily(prompt, hedges, consensus=False), [Juror("haiku", _haiku())]),
    )
    item = EvaluationItem(7, question, truth, answer, contexts=contexts)
    for family in families:
        keys = FamilyCacheKeys([family], model_key)
        assert keys.key(family, item) == family_cache_key(family, item, model_key)


def _haiku() -> ModelInfo:
    return resolve_model("haiku")

"""Which offline metric settings define which metric columns, and the results file's
``#SUMMARY: Metric Settings:`` row recording them.

Two runs made with another ``--k`` hold different metrics under one column name
(``precision_at_k``): a results file records the settings that define its metrics, so that
compare can leave out a metric whose settings differ. A setting is recorded only when it
defines a column of the run (``SETTING_SCOPES``): ``--k`` for the cut-off metrics, ``--match``
for the ranked retrieval metrics, a threshold only under its ``--match`` mode, the models for
the metrics computed with them, the quality family's settings for their checks.

The row holds ``name=value`` pairs in a fixed order, joined by ``; ``, each name the option's
without its dashes::

    #SUMMARY: Metric Settings: k=5; match=similarity; similarity-threshold=0.8

In a value, ``%``, ``;``, ``=``, every character that is not printable and a space at either
end are percent-encoded (UTF-8), so any model name or path reads back unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from rag_evaluator.offline import quality
from rag_evaluator.offline.options import DEFAULT_FALLBACK_PHRASES, MatchMode, MetricOptions
from rag_evaluator.offline.registry import SEMANTIC_METRICS

# The summary row recording the settings.
METRIC_SETTINGS = "Metric Settings"

K = "k"
MATCH = "match"
SIMILARITY_THRESHOLD = "similarity-threshold"
OVERLAP_THRESHOLD = "overlap-threshold"
EMBEDDING_MODEL = "embedding-model"
BERTSCORE_MODEL = "bertscore-model"
FALLBACK_PHRASES = "fallback-phrases"
MIN_RETRIEVAL_SCORE = "min-retrieval-score"
REQUIRE_CITATIONS = "require-citations"
# The row's order.
SETTING_NAMES = (
    K,
    MATCH,
    SIMILARITY_THRESHOLD,
    OVERLAP_THRESHOLD,
    EMBEDDING_MODEL,
    BERTSCORE_MODEL,
    FALLBACK_PHRASES,
    MIN_RETRIEVAL_SCORE,
    REQUIRE_CITATIONS,
)

# The retrieval metrics counted over the top k contexts.
CUT_OFF_METRICS = frozenset(("precision_at_k", "recall_at_k", "f1_at_k", "ndcg_at_k"))
# The retrieval metrics read from which retrieved chunk matches which golden one (every
# retrieval metric but context_overlap, ROUGE-L recall whatever --match says).
MATCHED_METRICS = CUT_OFF_METRICS | {"context_precision", "mrr", "hybrid_log_rank"}
BERTSCORE_METRICS = frozenset(name for name in SEMANTIC_METRICS if name.startswith("bert_score_"))
# The semantic metrics read from the embedding model's cosines.
EMBEDDED_METRICS = frozenset(SEMANTIC_METRICS) - BERTSCORE_METRICS


@dataclass(frozen=True)
class SettingScope:
    """The metric columns a setting defines; ``under_match``: only in a run with that
    ``--match`` mode."""

    setting: str
    columns: frozenset[str]
    under_match: str | None = None


SETTING_SCOPES = (
    SettingScope(K, CUT_OFF_METRICS),
    SettingScope(MATCH, MATCHED_METRICS),
    SettingScope(SIMILARITY_THRESHOLD, MATCHED_METRICS, MatchMode.SIMILARITY.value),
    SettingScope(OVERLAP_THRESHOLD, MATCHED_METRICS, MatchMode.OVERLAP.value),
    SettingScope(EMBEDDING_MODEL, EMBEDDED_METRICS),
    SettingScope(EMBEDDING_MODEL, MATCHED_METRICS, MatchMode.SIMILARITY.value),
    SettingScope(BERTSCORE_MODEL, BERTSCORE_METRICS),
    SettingScope(FALLBACK_PHRASES, frozenset((quality.NO_FALLBACK, quality.PASS))),
    SettingScope(MIN_RETRIEVAL_SCORE, frozenset((quality.RETRIEVAL_SCORE, quality.PASS))),
    SettingScope(REQUIRE_CITATIONS, frozenset((quality.CITATIONS, quality.PASS))),
)
# How --json types each value (the others are text).
_WHOLE_NUMBERS = frozenset((K,))
_NUMBERS = frozenset((SIMILARITY_THRESHOLD, OVERLAP_THRESHOLD, MIN_RETRIEVAL_SCORE))
_YES_NO = frozenset((REQUIRE_CITATIONS,))
YES = "yes"
NO = "no"

DEFAULT_PHRASES = "default"
NO_PHRASES = "none"
_DIGEST_LENGTH = 12


def fallback_phrases_text(phrases: Sequence[str]) -> str:
    """``default``, ``none`` (the check turned off) or ``custom sha256:<12 hex>``, the digest
    of the phrases as the check compares them (folded, each once, in any order)."""
    if tuple(phrases) == DEFAULT_FALLBACK_PHRASES:
        return DEFAULT_PHRASES
    folded = quality.FallbackPhrases.of(phrases).phrases
    if not folded:
        return NO_PHRASES
    digest = hashlib.sha256("\n".join(sorted(folded)).encode("utf-8")).hexdigest()
    return f"custom sha256:{digest[:_DIGEST_LENGTH]}"


def _number_text(value: float) -> str:
    return repr(float(value))


def setting_values(
    options: MetricOptions, embedding_model: str, bertscore_model: str
) -> dict[str, str]:
    """Every setting's value as the row writes it; the models as named in messages (the
    bundled model under one name however it was asked for)."""
    return {
        K: str(options.k),
        MATCH: options.match,
        SIMILARITY_THRESHOLD: _number_text(options.similarity_threshold),
        OVERLAP_THRESHOLD: _number_text(options.overlap_threshold),
        EMBEDDING_MODEL: embedding_model,
        BERTSCORE_MODEL: bertscore_model,
        FALLBACK_PHRASES: fallback_phrases_text(options.fallback_phrases),
        MIN_RETRIEVAL_SCORE: _number_text(options.min_retrieval_score),
        REQUIRE_CITATIONS: YES if options.require_citations else NO,
    }


def _applies(scope: SettingScope, match: str | None) -> bool:
    return scope.under_match is None or scope.under_match == match


def run_settings(columns: Iterable[str], values: Mapping[str, str]) -> dict[str, str]:
    """The settings a run with these metric columns records: those defining one of them
    (under the run's ``--match``), in the row's order."""
    present = set(columns)
    match = values.get(MATCH)
    wanted = {
        scope.setting
        for scope in SETTING_SCOPES
        if _applies(scope, match) and scope.columns & present
    }
    return {name: values[name] for name in SETTING_NAMES if name in wanted and name in values}


def defining_settings(column: str, settings: Mapping[str, str]) -> dict[str, str]:
    """The recorded settings that define ``column`` in a file recording ``settings``."""
    match = settings.get(MATCH)
    wanted = {
        scope.setting
        for scope in SETTING_SCOPES
        if column in scope.columns and _applies(scope, match)
    }
    return {name: value for name, value in settings.items() if name in wanted}


def _encode(value: str) -> str:
    last = len(value) - 1
    return "".join(
        _escaped(character) if _needs_escape(character, index in (0, last)) else character
        for index, character in enumerate(value)
    )


def _needs_escape(character: str, at_an_end: bool) -> bool:
    """The separators, ``%`` itself, what is not printable (line breaks among them) and a
    space the reader would strip."""
    return character in "%;=" or not character.isprintable() or (at_an_end and character.isspace())


def _escaped(character: str) -> str:
    # surrogatepass: a command-line argument may carry a lone surrogate; it must not crash.
    return quote(character.encode("utf-8", "surrogatepass"), safe="")


def settings_text(settings: Mapping[str, str]) -> str:
    """The row's value: ``name=value`` pairs joined by ``; ``, values encoded."""
    return "; ".join(f"{name}={_encode(value)}" for name, value in settings.items())


def parse_settings(text: str) -> dict[str, str]:
    """The settings a row's value records; a part without ``=`` or a name is left out."""
    settings: dict[str, str] = {}
    for pair in text.split(";"):
        name, separator, value = pair.strip().partition("=")
        if separator and name.strip():
            settings[name.strip()] = unquote(value)
    return settings


def declared_settings(summary: Iterable[tuple[str, str]]) -> dict[str, str] | None:
    """The settings a results file's summary records; ``None`` when it has no such row (files
    older than the row, runs without a metric any setting defines)."""
    for label, value in summary:
        if label == METRIC_SETTINGS:
            return parse_settings(value)
    return None


def settings_json(settings: Mapping[str, str]) -> dict[str, object]:
    """The settings for ``--json``: ``k`` a whole number, thresholds and the minimum score
    numbers, ``require-citations`` true or false, the others text."""
    data: dict[str, object] = {}
    for name, value in settings.items():
        typed: object = value
        try:
            if name in _WHOLE_NUMBERS:
                typed = int(value)
            elif name in _NUMBERS:
                typed = float(value)
        except ValueError:
            typed = value  # a hand-edited value stays as written
        if name in _YES_NO and value in (YES, NO):
            typed = value == YES
        data[name] = typed
    return data

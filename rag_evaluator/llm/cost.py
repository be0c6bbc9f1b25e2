"""What a run costs: a range estimated before it starts, the exact figure after it ends.

The estimate works from the texts actually sent, counted in characters (real token counts need
the API; ``--exact-estimate`` asks its free count_tokens endpoint instead, see
``with_exact_input``). Each model-judged family says, per question, how many calls it expects
and how large they are (``CallEstimate``); this module turns that into tokens and dollars:

- low: prose-like text (4 characters per token), short replies, no extra calls;
- high: dense text (3 characters per token), long replies, and every extra call a family may
  make (for the judge: every question hedging into 3 consensus votes), so that the actual
  cost falls inside the range; only answers asked again because they were unusable (rare) are
  left out, and the pre-run summary says so (``estimate_assumes``).

Prompt caching: when the system prompt is long enough to be cached for the model, the first
call of each family writes it to the cache (1.25x the input price) and every later call reads
it (0.1x); in a Message Batch, caching is best effort, so the high end assumes no cache reads.
The batch discount halves everything. Questions answered from the response cache cost nothing.
Retries are not included (failed calls are rarely billed).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_evaluator.families.base import CallEstimate
from rag_evaluator.families.defaults import JUDGE_FAMILY
from rag_evaluator.inputs.records import TokenUsage
from rag_evaluator.llm.models import (
    BATCH_DISCOUNT,
    CACHE_READ_MULTIPLIER,
    CACHE_WRITE_MULTIPLIER,
    ModelInfo,
)
from rag_evaluator.llm.requests import CHARS_PER_TOKEN_LOW, ModelRequest

# Money's one format, here too for the callers that price calls.
from rag_evaluator.text.money import dollar_range as dollar_range
from rag_evaluator.text.money import format_usd as format_usd

_PER_MILLION = 1_000_000
PRICE_UNKNOWN = "price unknown"


@dataclass(frozen=True)
class FamilyCost:
    """One model-judged family's share of an estimate (for the pre-run summary)."""

    family: str
    questions: int
    calls_low: int
    calls_high: int
    output_tokens_low: int
    output_tokens_high: int
    low_usd: float
    high_usd: float
    priced: bool = True  # False: the model's price is unknown (dollars shown as such)

    def describe(self) -> str:
        """``ragas: $0.0100 to $0.0300, 24 calls (6 per question), 960 to 3,600 output tokens``."""
        calls = (
            f"{self.calls_low}"
            if self.calls_low == self.calls_high
            else f"{self.calls_low} to {self.calls_high}"
        )
        per_question = ""
        if self.questions:
            low = self.calls_low / self.questions
            high = self.calls_high / self.questions
            shown = f"{low:.3g}" if round(low, 2) == round(high, 2) else f"{low:.3g}-{high:.3g}"
            per_question = f" ({shown} per question)"
        dollars = dollar_range(self.low_usd, self.high_usd) if self.priced else PRICE_UNKNOWN
        return (
            f"{self.family}: {dollars}, {calls} calls"
            f"{per_question}, {self.output_tokens_low:,} to {self.output_tokens_high:,} output "
            "tokens"
        )


@dataclass(frozen=True)
class CostEstimate:
    """The expected range of a run's API calls, tokens and dollars."""

    questions: int
    expected_calls_low: int
    expected_calls_high: int
    input_tokens_low: int
    input_tokens_high: int
    output_tokens_low: int
    output_tokens_high: int
    low_usd: float
    high_usd: float
    cached_questions: int = 0
    batch: bool = False
    prompt_caching: bool = False
    families: tuple[FamilyCost, ...] = ()

    @property
    def unpriced(self) -> tuple[str, ...]:
        """The families (or jurors' shares) whose model has no known price."""
        return tuple(family.family for family in self.families if not family.priced)

    def dollars(self) -> str:
        """The cost range in words: dollars, the tokens when no price is known, or dollars
        plus the shares whose price is unknown."""
        unpriced = self.unpriced
        if not unpriced:
            return dollar_range(self.low_usd, self.high_usd)
        tokens = (
            f"{self.input_tokens_low:,} to {self.input_tokens_high:,} input and "
            f"{self.output_tokens_low:,} to {self.output_tokens_high:,} output tokens"
        )
        if len(unpriced) == len(self.families):
            return f"{PRICE_UNKNOWN} (--price IN/OUT sets one); {tokens}"
        return (
            f"{dollar_range(self.low_usd, self.high_usd)} plus {', '.join(unpriced)} at a "
            "price unknown (--price IN/OUT sets one)"
        )

    def summary_dollars(self) -> str:
        """The cost range as the results' summary states it (no comma)."""
        unpriced = self.unpriced
        if not unpriced:
            return dollar_range(self.low_usd, self.high_usd)
        if len(unpriced) == len(self.families):
            return PRICE_UNKNOWN
        shares = " / ".join(unpriced)
        return f"{dollar_range(self.low_usd, self.high_usd)} plus {shares} ({PRICE_UNKNOWN})"


def caches_system_prompt(system_prompt: str, model: ModelInfo) -> bool:
    """Whether the system prompt is long enough for the API to cache it for ``model``.

    Decided on the low token estimate (4 characters per token), so the prompt is only marked
    when it surely reaches the model's minimum.
    """
    return model.caches_prompts and (
        len(system_prompt) // CHARS_PER_TOKEN_LOW >= model.cache_minimum_tokens
    )


def _input_dollars(tokens: float, model: ModelInfo) -> float:
    return tokens * (model.input_price_per_mtok or 0.0) / _PER_MILLION


def _output_dollars(tokens: float, model: ModelInfo) -> float:
    return tokens * (model.output_price_per_mtok or 0.0) / _PER_MILLION


def _cached_input_dollars(
    calls: float, input_tokens: float, system_tokens: float, model: ModelInfo
) -> float:
    """Input dollars when every call's system prompt after the first comes from the cache."""
    if calls <= 0:
        return 0.0
    system_total = system_tokens * calls
    plain = max(input_tokens - system_total, 0.0)
    written = system_tokens * CACHE_WRITE_MULTIPLIER
    read = system_tokens * max(calls - 1, 0.0) * CACHE_READ_MULTIPLIER
    return _input_dollars(plain + written + read, model)


@dataclass
class _FamilyTotals:
    """One family's calls and tokens summed over its questions (low and high ends)."""

    calls_low: float = 0.0
    calls_high: float = 0.0
    input_low: float = 0.0
    input_high: float = 0.0
    output_low: float = 0.0
    output_high: float = 0.0
    system_low: float | None = None  # the system prompt's tokens, when it has one
    system_high: float = 0.0

    def add(self, estimate: CallEstimate) -> None:
        self.calls_low += estimate.calls_low
        self.calls_high += estimate.calls_high
        self.input_low += estimate.input_tokens_low
        self.input_high += estimate.input_tokens_high
        self.output_low += estimate.output_tokens_low
        self.output_high += estimate.output_tokens_high
        if estimate.system_characters:
            self.system_low = estimate.system_tokens_low()
            self.system_high = estimate.system_tokens_high()

    def dollars(self, model: ModelInfo, *, cached: bool, batch: bool) -> tuple[float, float]:
        """The family's low and high dollars (prompt caching and the batch rate applied)."""
        if cached and self.system_low is not None:
            low = _cached_input_dollars(self.calls_low, self.input_low, self.system_low, model)
            if batch:  # caching in a batch is best effort: the high end reads nothing cached
                high = _input_dollars(self.input_high, model)
            else:
                high = _cached_input_dollars(
                    self.calls_high, self.input_high, self.system_high, model
                )
        else:
            low = _input_dollars(self.input_low, model)
            high = _input_dollars(self.input_high, model)
        low += _output_dollars(self.output_low, model)
        high += _output_dollars(self.output_high, model)
        factor = BATCH_DISCOUNT if batch else 1.0
        return low * factor, high * factor


def estimate_cost(
    estimates: Mapping[str, Sequence[CallEstimate]],
    model: ModelInfo,
    *,
    batch: bool = False,
    prompt_caching: Mapping[str, bool] | None = None,
    questions: int | None = None,
    cached_questions: int = 0,
    family_questions: Mapping[str, int] | None = None,
    models: Mapping[str, ModelInfo] | None = None,
) -> CostEstimate:
    """The cost range of the calls that ``estimates`` (family name -> one per question, or
    their running sums, with ``family_questions`` saying how many questions each covers) expect.

    ``prompt_caching`` says, per family, whether its system prompt is sent marked for caching;
    ``models`` prices a family (a juror's share) with another model than ``model``.
    """
    caching = prompt_caching or {}
    priced_by = models or {}
    totals: dict[str, _FamilyTotals] = defaultdict(_FamilyTotals)
    for family, family_estimates in estimates.items():
        for estimate in family_estimates:
            totals[family].add(estimate)
    family_costs: list[FamilyCost] = []
    for family, total in totals.items():
        family_model = priced_by.get(family, model)
        low, high = total.dollars(family_model, cached=bool(caching.get(family)), batch=batch)
        family_costs.append(
            FamilyCost(
                family=family,
                questions=(family_questions or {}).get(family, len(estimates[family])),
                calls_low=round(total.calls_low),
                calls_high=round(total.calls_high + 0.4999),
                output_tokens_low=round(total.output_low),
                output_tokens_high=round(total.output_high),
                low_usd=low,
                high_usd=high,
                priced=family_model.priced,
            )
        )
    all_totals = list(totals.values())
    return CostEstimate(
        questions=questions
        if questions is not None
        else max((len(values) for values in estimates.values()), default=0),
        expected_calls_low=round(sum(total.calls_low for total in all_totals)),
        expected_calls_high=round(sum(total.calls_high for total in all_totals) + 0.4999),
        input_tokens_low=round(sum(total.input_low for total in all_totals)),
        input_tokens_high=round(sum(total.input_high for total in all_totals)),
        output_tokens_low=round(sum(total.output_low for total in all_totals)),
        output_tokens_high=round(sum(total.output_high for total in all_totals)),
        low_usd=sum(cost.low_usd for cost in family_costs),
        high_usd=sum(cost.high_usd for cost in family_costs),
        cached_questions=cached_questions,
        batch=batch,
        prompt_caching=any(caching.get(family) for family in totals),
        families=tuple(family_costs),
    )


def call_cost(usage: TokenUsage, model: ModelInfo, *, batch: bool = False) -> float:
    """Dollars for the usage the API reported, cache writes and reads included."""
    # An unknown price counts as nothing here: what it stands for is shown as "price unknown".
    input_price = model.input_price_per_mtok or 0.0
    # Cache discounts differ off Claude: cached prompt tokens there are priced in full, a bound.
    read_multiplier = CACHE_READ_MULTIPLIER if model.caches_prompts else 1.0
    cost = (
        usage.input_tokens * input_price
        + usage.output_tokens * (model.output_price_per_mtok or 0.0)
        + usage.cache_creation_input_tokens * input_price * CACHE_WRITE_MULTIPLIER
        + usage.cache_read_input_tokens * input_price * read_multiplier
    ) / _PER_MILLION
    return cost * BATCH_DISCOUNT if batch else cost


def reserved_call_usd(request: ModelRequest, model: ModelInfo, *, batch: bool = False) -> float:
    """The most a call can cost, what ``--max-cost`` books for a call in flight so that the
    actual spending never passes the budget: its input bound (``input_tokens_bound``) at the
    prompt cache's write price, the highest input price, and a reply of its ``max_tokens``."""
    usage = TokenUsage(
        output_tokens=request.max_tokens, cache_creation_input_tokens=request.input_tokens_bound()
    )
    return call_cost(usage, model, batch=batch)


def actual_cost(usage: TokenUsage, model: ModelInfo, *, batch: bool = False) -> float:
    """Dollars for a run's summed usage (see ``call_cost``)."""
    return call_cost(usage, model, batch=batch)


def estimate_assumes(estimate: CostEstimate) -> str:
    """What the estimate's high end assumes (the judge's consensus votes only when the run
    may ask them: a jury asks none)."""
    votes = any(
        share.family == JUDGE_FAMILY and share.calls_high > share.calls_low
        for share in estimate.families
    )
    extra = " (the judge's 3 consensus votes for every question)" if votes else ""
    return (
        "The high end assumes dense text, long replies and every extra call a family may make"
        f"{extra}; unusable answers asked again are not included"
    )

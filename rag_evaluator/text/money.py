"""Dollar amounts as every message, prompt and summary shows them."""

from __future__ import annotations

import math

# Money is shown to four significant digits (at least to the cent): a budget of $0.008 or a
# spending of $0.0003 keeps its value, $12.3456 reads $12.35.
_SIGNIFICANT_DIGITS = 4


def _decimals(amount: float, significant: int) -> int:
    """Decimals showing ``amount`` to ``significant`` digits, at least 2 (the cents)."""
    if amount == 0 or not math.isfinite(amount):
        return 2
    return max(2, significant - 1 - math.floor(math.log10(abs(amount))))


def format_usd(amount: float) -> str:
    """A dollar amount as every message and summary shows it (budget, spending, cost):
    ``$5.00``, ``$12.35``, ``$0.125``, ``$0.008``: four significant digits, at least the cents,
    no trailing zero past them."""
    decimals = _decimals(amount, _SIGNIFICANT_DIGITS)
    text = f"{amount:.{decimals}f}"
    whole, _, fraction = text.partition(".")
    return f"${whole}.{fraction[:2]}{fraction[2:].rstrip('0')}"


def dollar_range(low: float, high: float) -> str:
    """``$0.0803 to $0.2900``: cents for real money, four decimals for fractions of a cent,
    more when the low end needs them to show a digit (never ``$0.0000`` for a real amount).

    Both ends get the same number of decimals so the range reads as one figure.
    """
    decimals = 2 if low >= 0.1 else max(4, _decimals(low or high, 1))
    return f"${low:.{decimals}f} to ${high:.{decimals}f}"

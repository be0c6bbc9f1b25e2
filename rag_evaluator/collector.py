"""Building many long-lived objects at once: the cyclic garbage collector paused meanwhile.

Reading 100,000 questions, or planning them, builds millions of objects (rows, items, jobs)
that hold no reference cycle and live until the run ends; importing the SDK builds its many
classes, which do too. The cyclic collector, triggered by the allocations, would walk the
growing heap over and over: about a third of the time to the first call at that size.
Reference counting still frees whatever is dropped meanwhile.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def building_long_lived() -> Iterator[None]:
    """Pause the cyclic collector in the block (it runs again after, if it ran before)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()

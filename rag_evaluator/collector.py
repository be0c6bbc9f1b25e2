"""Building many long-lived objects at once: the cyclic garbage collector paused meanwhile.

Reading 100,000 questions, or planning them, builds millions of objects (rows, items, jobs)
that hold no reference cycle and live until the run ends; importing the SDK builds its many
classes, which do too. The cyclic collector, triggered by the allocations, would walk the
growing heap over and over: about a third of the time to the first call at that size.
Reference counting still frees whatever is dropped meanwhile. When the block ends, what it
built is moved out of the collector's sight (``gc.freeze``): the first collection after the
pause would otherwise walk every object built during it, a tenth of a second at that size,
and each full collection of the run would walk them again. Reference counting still frees a
frozen object once it is dropped; only a reference cycle left unreachable during the block
is never collected.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def building_long_lived() -> Iterator[None]:
    """Pause the cyclic collector in the block (it runs again after, if it ran before), and
    leave what the block built out of its later collections."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()

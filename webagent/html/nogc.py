"""Page building with the cyclic garbage collector paused (Mercurial's ``util.nogc``).

Cleaning and segmenting a page allocate tens of thousands of containers (the CleanPage's
lists, units, groups, fragments). Every 700 allocations start a collection of the young
objects, and while the page's big lists are young each one walks them again, finding nothing:
they hold no reference cycles. Pausing the collector while a page is built saves that walking;
any cycle that does form is collected afterwards, by the next collection. Objects are freed as
before, by reference counting, the moment they are dropped. Pausing is for CPU-bound work
only: the collector is process-wide, and other threads go on allocating while it is paused.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc(pause: bool = True) -> Iterator[None]:
    """The cyclic collector paused inside the block (where ``pause``), and left as it was
    found: inside another such block, or under a caller that paused it, nothing changes."""
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()

"""Gives freed heap memory back to the operating system between invocations.

glibc raises its mmap threshold each time a large block is freed, so later megabyte-sized objects (a blob input
copied by user code, an output) come from the heap and the per-thread arenas, and their pages stay resident once
freed: a worker's private memory creeps up under a mixed workload (the 30-minute reliability soak: +90 MB in the
Python workers between minute 5 and minute 30). malloc_trim(0) returns those pages (a few ms). It runs off the event
loop, at most once per period, only after invocations ran and only at a moment when none runs, so no invocation
waits for it and a worker that stays busy is not trimmed over and over.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger("faascache_worker")

PERIOD_SETTING = "FAASCACHE_WORKER_TRIM_SECONDS"
DEFAULT_PERIOD_SECONDS = 5.0


def period_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """The least time between two trims, from FAASCACHE_WORKER_TRIM_SECONDS (0 turns trimming off)."""
    text = environ.get(PERIOD_SETTING, "").strip()
    if not text:
        return DEFAULT_PERIOD_SECONDS
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{PERIOD_SETTING}={text!r} is not a number of seconds (0 turns trimming off)") from None
    if value < 0:
        raise ValueError(f"{PERIOD_SETTING}={text!r} is negative (0 turns trimming off)")
    return value


def libc_trim() -> Callable[[], Any] | None:
    """glibc's malloc_trim(0), or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim  # a CDLL call releases the GIL while it runs
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


class IdleTrimmer:
    """Calls `trim` at most once per `period` seconds, when invocations ran since the last trim and none runs now."""

    def __init__(self, trim: Callable[[], Any] | None, period: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._trim = trim
        self._period = period
        self._clock = clock
        self._dirty = False
        self._last = clock()
        self.trims = 0

    @property
    def enabled(self) -> bool:
        return self._trim is not None and self._period > 0

    def activity(self) -> None:
        """An invocation finished: its garbage may be on the heap."""
        self._dirty = True

    def due(self, busy: bool) -> bool:
        """True when something ran since the last trim, nothing runs now, and the period has passed."""
        return self.enabled and self._dirty and not busy and self._clock() - self._last >= self._period

    def trim_now(self) -> None:
        assert self._trim is not None
        self._dirty = False
        self._last = self._clock()
        self._trim()
        self.trims += 1

    async def run(self, is_busy: Callable[[], bool]) -> None:
        """Checks every 100 ms until cancelled; the trim itself runs in the default executor."""
        if not self.enabled:
            return
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0.1)
            if self.due(is_busy()):
                started = time.perf_counter()
                await loop.run_in_executor(None, self.trim_now)
                log.debug("returned freed heap memory to the OS in %.1f ms", (time.perf_counter() - started) * 1000)

"""The heap trimmer: when it gives freed heap memory back, and that glibc's malloc_trim really does."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from faascache_worker.memory_trim import PERIOD_SETTING, IdleTrimmer, libc_trim, period_seconds


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(period: float = 5.0) -> tuple[IdleTrimmer, Clock, list[int]]:
    clock, calls = Clock(), []
    return IdleTrimmer(lambda: calls.append(1), period, clock), clock, calls


def test_trims_after_invocations_at_most_once_per_period():
    trimmer, clock, calls = make()
    clock.now += 10
    assert not trimmer.due(busy=False)  # nothing ran yet
    trimmer.activity()
    assert trimmer.due(busy=False)
    trimmer.trim_now()
    assert calls == [1] and trimmer.trims == 1
    clock.now += 10
    assert not trimmer.due(busy=False)  # nothing ran since
    trimmer.activity()
    clock.now += 1
    trimmer.trim_now()
    trimmer.activity()
    clock.now += 4.9
    assert not trimmer.due(busy=False)  # within the period of the last trim
    clock.now += 0.2
    assert trimmer.due(busy=False)


def test_never_trims_while_an_invocation_runs():
    trimmer, clock, _ = make()
    trimmer.activity()
    clock.now += 10
    assert not trimmer.due(busy=True)
    assert trimmer.due(busy=False)


def test_zero_seconds_or_no_malloc_trim_turns_it_off():
    assert not make(period=0)[0].enabled
    assert not IdleTrimmer(None, 1.0).enabled


def test_the_setting_is_read_and_a_bad_value_names_the_setting():
    assert period_seconds({}) == 5.0
    assert period_seconds({PERIOD_SETTING: "2.5"}) == 2.5
    assert period_seconds({PERIOD_SETTING: "0"}) == 0
    with pytest.raises(ValueError, match=PERIOD_SETTING + ".*'soon'"):
        period_seconds({PERIOD_SETTING: "soon"})
    with pytest.raises(ValueError, match="negative"):
        period_seconds({PERIOD_SETTING: "-1"})


# A freed 16 MB object raises glibc's mmap threshold; later 4 MB objects then come from the heap, and with small
# objects that live on between them (as a worker's records do) their pages stay resident once freed, until a trim.
SCRIPT = textwrap.dedent(
    """
    from faascache_worker.memory_trim import libc_trim

    def rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024

    del_me = bytearray(16 << 20)
    del del_me
    big, kept = [], []
    for _ in range(40):
        big.append(bytearray(4 << 20))
        kept.append(bytearray(1024))
    big.clear()
    before = rss_mb()
    libc_trim()()
    print(before, rss_mb())
    """
)


def test_malloc_trim_gives_the_freed_megabytes_back():
    assert libc_trim() is not None, "this Debian's glibc has malloc_trim"
    from conftest import WORKER_DIR

    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=WORKER_DIR, capture_output=True, text=True, check=True)
    before, after = map(int, out.stdout.split())
    assert before - after >= 100, f"resident {before} MB before the trim, {after} MB after"

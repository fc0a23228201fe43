"""Diagnostic hook for `benchmarks/run invoke-breakdown`: the FaaSCache Python worker's own timing.

Loaded by Python at start-up when this folder is on PYTHONPATH (the benchmark sets it for the worker
through the host's environment; nothing in the worker changes). It wraps four methods of
`faascache_worker.dispatcher.Dispatcher` once that module is imported and writes one line per invocation
to stderr, which the host forwards to its log:

    FAASCACHE-DIAG invocation <id> total_ms=<> prepare_ms=<> run_ms=<>

total: the InvocationRequest handed to the dispatcher (after gRPC decoding) -> the InvocationResponse queued
for the host (before gRPC encoding); prepare: binding the inputs (for a blob in shared memory: open and map
the file, build the InputStream); run: prepare + the function + encoding its outputs (a sync function's
time in the thread pool). If the dispatcher changes shape the hook says so on stderr and measures nothing.
"""

import importlib.abc
import importlib.util
import sys
import time

_TARGET = "faascache_worker.dispatcher"


def _say(line):
    sys.stderr.write(f"FAASCACHE-DIAG {line}\n")
    sys.stderr.flush()


def _patch(module):
    dispatcher = getattr(module, "Dispatcher", None)
    names = ("_on_invocation_request", "_respond", "_prepare", "_run_sync")
    if dispatcher is None or not all(callable(getattr(dispatcher, n, None)) for n in names):
        _say(f"error {_TARGET}.Dispatcher has no {', '.join(names)}: update benchmarks/diagnostics/python/sitecustomize.py")
        return
    open_calls = {}
    on_request, respond, prepare, run_sync = (getattr(dispatcher, n) for n in names)

    def timed_on_request(self, request):
        open_calls[request.invocation_id] = [time.perf_counter(), 0.0, 0.0]
        return on_request(self, request)

    def timed_prepare(self, fn, request):
        started = time.perf_counter()
        try:
            return prepare(self, fn, request)
        finally:
            if (entry := open_calls.get(request.invocation_id)) is not None:
                entry[1] += time.perf_counter() - started

    def timed_run_sync(self, fn, request):
        started = time.perf_counter()
        try:
            return run_sync(self, fn, request)
        finally:
            if (entry := open_calls.get(request.invocation_id)) is not None:
                entry[2] += time.perf_counter() - started

    def timed_respond(self, invocation_id, *args, **kwargs):
        if (entry := open_calls.pop(invocation_id, None)) is not None:
            total = time.perf_counter() - entry[0]
            _say(f"invocation {invocation_id} total_ms={total * 1e3:.3f} prepare_ms={entry[1] * 1e3:.3f} run_ms={entry[2] * 1e3:.3f}")
        return respond(self, invocation_id, *args, **kwargs)

    dispatcher._on_invocation_request = timed_on_request
    dispatcher._prepare = timed_prepare
    dispatcher._run_sync = timed_run_sync
    dispatcher._respond = timed_respond
    _say("hook installed in the Python worker")


class _PatchOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _PatchOnImport())

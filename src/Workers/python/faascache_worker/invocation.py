"""Running invocations: the InvocationRequest handlers of the Dispatcher, kept apart from the stream plumbing.

`async def` functions run as tasks on the event loop, plain functions in the thread pool; both answer with one
InvocationResponse, and shared-memory regions an invocation created are discarded when it fails or is cancelled.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

from . import azure_functions, bindings, loader
from .context import RetryContext, TraceContext, context_class
from .input_stream import MemoryViewStream
from .logging_bridge import current_invocation
from .memory_trim import IdleTrimmer

log = logging.getLogger("faascache_worker")


class _UserError(Exception):
    """Wraps an exception raised by the user's function, to tell it from a worker/binding failure."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.exc = exc


@dataclass
class _Call:
    """One invocation's arguments, output boxes and the streams to close afterwards."""

    args: dict[str, Any] = field(default_factory=dict)
    outs: dict[str, Any] = field(default_factory=dict)
    streams: list[MemoryViewStream] = field(default_factory=list)


class InvocationRunner:
    """Mixin of Dispatcher: the attributes it uses are set by Dispatcher.__init__."""

    pb: ModuleType
    _shm: Any
    _policy: Any
    _invocations: dict[str, asyncio.Task[None]]
    _loading: dict[str, Any]
    _functions: dict[str, loader.LoadedFunction]
    _func_mod: ModuleType | None
    _loop: asyncio.AbstractEventLoop | None
    _pool: Any
    _sync_lock: Any
    _sync_running: int
    _terminating: bool
    _trimmer: IdleTrimmer
    send: Callable[[Any], None]
    _message: Callable[..., Any]
    _success: Callable[..., Any]
    _failure: Callable[..., Any]

    def _on_invocation_cancel(self, request: Any) -> None:
        task = self._invocations.get(request.invocation_id)
        if task is not None and not task.done():
            log.info("cancelling invocation %s", request.invocation_id)
            task.cancel()  # effective for async functions; a sync function's thread cannot be stopped

    def _on_invocation_request(self, request: Any) -> None:
        if self._terminating:
            self._respond(request.invocation_id, self._failure("the worker is shutting down"))
            return
        task = asyncio.ensure_future(self._invoke(request))
        self._invocations[request.invocation_id] = task
        task.add_done_callback(functools.partial(self._invocation_done, request.invocation_id))

    def _invocation_done(self, invocation_id: str, task: asyncio.Task[None]) -> None:
        self._invocations.pop(invocation_id, None)
        self._trimmer.activity()
        if task.cancelled():  # cancelled before it started: _invoke never ran, so answer here
            self._shm.release_invocation(invocation_id)
            self._respond(invocation_id, self.pb.StatusResult(status=self.pb.StatusResult.Cancelled, result="cancelled"))

    def _respond(self, invocation_id: str, result: Any, output_data: list[Any] | None = None,
                 return_value: Any = None) -> None:
        response = self.pb.InvocationResponse(invocation_id=invocation_id, result=result, output_data=output_data or [])
        if return_value is not None:
            response.return_value.CopyFrom(return_value)
        self.send(self._message(invocation_response=response))

    async def _in_pool(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Runs fn in the thread pool inside a copy of the current context (the invocation id for logs)."""
        assert self._loop is not None
        ctx = contextvars.copy_context()
        return await self._loop.run_in_executor(self._pool, functools.partial(ctx.run, fn, *args))

    def _functions_module(self) -> ModuleType:
        if self._func_mod is None:
            self._func_mod = azure_functions.module()
        return self._func_mod

    async def _invoke(self, request: Any) -> None:
        invocation_id = request.invocation_id
        current_invocation.set(invocation_id)  # this task's own context
        call: _Call | None = None
        try:
            if request.function_id in self._loading:
                await asyncio.shield(self._loading[request.function_id])
            fn = self._functions.get(request.function_id)
            if fn is None:
                raise LookupError(f"function id {request.function_id} is not loaded in this worker")
            if fn.is_async:
                call = await self._in_pool(self._prepare, fn, request)
                try:
                    result = await fn.func(**call.args)
                except Exception as e:
                    raise _UserError(e) from e
                output_data, return_value = await self._in_pool(self._encode, fn, call, invocation_id, result)
            else:
                output_data, return_value, call = await self._in_pool(self._run_sync, fn, request)
            self._respond(invocation_id, self._success(), output_data, return_value)
        except asyncio.CancelledError:
            self._shm.discard_created(self._created_by(invocation_id))
            self._respond(invocation_id, self.pb.StatusResult(status=self.pb.StatusResult.Cancelled, result="cancelled"))
        except _UserError as e:
            self._shm.discard_created(self._created_by(invocation_id))
            exc = e.exc
            self._respond(
                invocation_id,
                self._failure(
                    f"{type(exc).__name__}: {exc}",
                    "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
                    exc_type=f"{type(exc).__module__}.{type(exc).__qualname__}",
                    user=True,
                ),
            )
        except Exception as e:
            self._shm.discard_created(self._created_by(invocation_id))
            log.error("invocation %s failed: %s: %s", invocation_id, type(e).__name__, e)
            self._respond(
                invocation_id,
                self._failure(f"{type(e).__name__}: {e}", traceback.format_exc(), exc_type=type(e).__qualname__),
            )
        finally:
            if call is not None:
                for stream in call.streams:
                    stream.close()
            self._shm.release_invocation(invocation_id)

    def _created_by(self, invocation_id: str) -> list[str]:
        return self._shm.created_names_for(invocation_id)

    def _run_sync(self, fn: loader.LoadedFunction, request: Any) -> tuple[list[Any], Any, _Call]:
        with self._sync_lock:
            self._sync_running += 1
        try:
            call = self._prepare(fn, request)
            try:
                result = fn.func(**call.args)
            except Exception as e:
                raise _UserError(e) from e
            output_data, return_value = self._encode(fn, call, request.invocation_id, result)
            return output_data, return_value, call
        finally:
            with self._sync_lock:
                self._sync_running -= 1

    def _prepare(self, fn: loader.LoadedFunction, request: Any) -> _Call:
        func_mod = self._functions_module()
        inputs = {b.name: b for b in request.input_data}
        call = _Call()
        for param in fn.params:
            if param.kind == loader.KIND_CONTEXT:
                call.args[param.name] = self._context(fn, request, func_mod)
            elif param.kind == loader.KIND_OUT:
                box = bindings.out_class(func_mod.Out)()
                call.outs[param.name] = box
                call.args[param.name] = box
            elif param.name in inputs:
                value = bindings.decode_input(
                    self.pb, func_mod, param, inputs[param.name],
                    invocation_id=request.invocation_id, shm=self._shm, trigger_metadata=request.trigger_metadata,
                )
                if isinstance(value, MemoryViewStream):
                    call.streams.append(value)
                call.args[param.name] = value
            else:
                call.args[param.name] = None
        return call

    def _context(self, fn: loader.LoadedFunction, request: Any, func_mod: ModuleType) -> Any:
        trace = request.trace_context
        retry = request.retry_context
        return context_class(func_mod.Context)(
            request.invocation_id,
            fn.name,
            fn.metadata.directory,
            TraceContext(trace.trace_parent, trace.trace_state, dict(trace.attributes)),
            RetryContext(retry.retry_count, retry.max_retry_count, retry.exception if retry.HasField("exception") else None),
        )

    def _encode(self, fn: loader.LoadedFunction, call: _Call, invocation_id: str, result: Any) -> tuple[list[Any], Any]:
        pb = self.pb
        output_data = []
        for name, box in call.outs.items():
            encoded = bindings.encode_output(
                pb, name, fn.metadata.bindings.get(name), box.get(),
                policy=self._policy, shm=self._shm, invocation_id=invocation_id,
            )
            if encoded is not None:
                output_data.append(bindings.to_parameter_binding(pb, name, encoded))
        return_value = None
        if fn.return_binding is not None:
            encoded = bindings.encode_output(
                pb, loader.RETURN, fn.return_binding, result,
                policy=self._policy, shm=self._shm, invocation_id=invocation_id,
            )
            if isinstance(encoded, pb.RpcSharedMemory):
                # return_value cannot carry shared memory: the region travels as output "$return" instead.
                output_data.append(bindings.to_parameter_binding(pb, loader.RETURN, encoded))
            else:
                return_value = encoded
        elif result is not None:
            raise bindings.BindingError(
                f"function '{fn.name}' returned a {type(result).__name__} but function.json has no \"$return\" binding"
            )
        return output_data, return_value

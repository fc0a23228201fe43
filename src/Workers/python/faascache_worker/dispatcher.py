"""The worker's side of FunctionRpc: one EventStream to the host, a handler per message.

Invocations run concurrently: `async def` functions as tasks on the event loop, plain functions in a
thread pool (PYTHON_THREADPOOL_THREAD_COUNT, as the real worker). Everything sent to the host goes
through one queue, so logs written during an invocation reach the host before its response.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
import os
import platform
import signal
import sys
import threading
import traceback
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

import grpc

from . import __version__, azure_functions, bindings, loader, protos
from .cli import WorkerArgs
from .context import RetryContext, TraceContext, context_class
from .input_stream import MemoryViewStream
from .logging_bridge import RpcLogHandler, current_invocation
from .shared_memory import SharedMemoryManager, roots

log = logging.getLogger("faascache_worker")

# What this worker tells the host it can do (names as the real Python worker advertises them).
WORKER_CAPABILITIES = {
    "RawHttpBodyBytes": "true",  # HTTP bodies as bytes, not re-encoded strings
    "RpcHttpBodyOnly": "true",  # no duplicate rawBody
    "RpcHttpTriggerMetadataRemoved": "true",  # no copy of the request in trigger_metadata
    "TypedDataCollection": "true",
    "WorkerStatus": "true",
    "SharedMemoryDataTransfer": "true",  # inputs may arrive, outputs may leave, as RpcSharedMemory
}
CONNECT_TIMEOUT_SECONDS = float(os.environ.get("FAASCACHE_WORKER_CONNECT_TIMEOUT", "30"))
THREADPOOL_SETTING = "PYTHON_THREADPOOL_THREAD_COUNT"


def thread_count(environ: Mapping[str, str] = os.environ) -> int:
    try:
        value = int(environ.get(THREADPOOL_SETTING, ""))
        if 1 <= value <= 32:
            return value
    except ValueError:
        pass
    return min(32, (os.cpu_count() or 1) + 4)


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


def metadata_from_proto(pb: ModuleType, request: Any) -> loader.FunctionMetadata:
    """loader.FunctionMetadata from a FunctionLoadRequest; raw_bindings fill in a missing dataType."""
    meta = request.metadata
    raw_types: dict[str, str] = {}
    for raw in meta.raw_bindings:
        try:
            item = json.loads(raw)
            if isinstance(item, dict) and item.get("name") and item.get("dataType"):
                raw_types[str(item["name"])] = str(item["dataType"]).lower()
        except ValueError:
            pass
    specs = {}
    for name, info in meta.bindings.items():
        data_type = pb.BindingInfo.DataType.Name(info.data_type)
        if data_type == "undefined":
            data_type = raw_types.get(name, "undefined")
        specs[name] = loader.BindingSpec(
            name=name,
            type=info.type,
            direction=pb.BindingInfo.Direction.Name(info.direction),
            data_type=data_type,
            properties=dict(info.properties),
        )
    return loader.FunctionMetadata(
        function_id=request.function_id or meta.function_id,
        name=meta.name,
        directory=meta.directory,
        script_file=meta.script_file,
        entry_point=meta.entry_point,
        bindings=specs,
    )


def add_app_paths(app_directory: str) -> None:
    """The app's own packages (.python_packages) and modules come before the worker's, as in Azure."""
    for path in (app_directory, os.path.join(app_directory, ".python_packages", "lib", "site-packages")):
        if os.path.isdir(path) and path not in sys.path:
            sys.path.insert(0, path)


class Dispatcher:
    def __init__(self, args: WorkerArgs) -> None:
        self.args = args
        self.pb, self.pb_grpc = protos.load()
        self._shm = SharedMemoryManager()
        self._pool = ThreadPoolExecutor(max_workers=thread_count(), thread_name_prefix="faascache-invoke")
        self._functions: dict[str, loader.LoadedFunction] = {}
        self._loading: dict[str, asyncio.Task[None]] = {}
        self._invocations: dict[str, asyncio.Task[None]] = {}
        self._sync_running = 0
        self._sync_lock = threading.Lock()
        self._host_capabilities: dict[str, str] = {}
        self._policy = bindings.OutputPolicy()
        self._app_directory: str | None = None
        self._func_mod: ModuleType | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbox: asyncio.Queue[Any] | None = None
        self._drained: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._terminating = False
        self._exit_code = 0
        self._log_handler: RpcLogHandler | None = None

    @property
    def busy_threads(self) -> int:
        """Sync invocations still running in the pool (they cannot be interrupted)."""
        return self._sync_running

    # ---- sending ------------------------------------------------------------------------------------

    def send(self, message: Any) -> None:
        """Queues a StreamingMessage for the host; callable from any thread."""
        loop, outbox = self._loop, self._outbox
        if loop is None or outbox is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            outbox.put_nowait(message)
        else:
            loop.call_soon_threadsafe(outbox.put_nowait, message)

    def _message(self, **content: Any) -> Any:
        return self.pb.StreamingMessage(request_id=self.args.request_id, **content)

    async def _outgoing(self) -> Any:
        assert self._outbox is not None and self._drained is not None
        while True:
            message = await self._outbox.get()
            if message is None:  # half-close after everything queued before it was written
                self._drained.set()
                return
            yield message

    # ---- main loop ----------------------------------------------------------------------------------

    def attach(self, loop: asyncio.AbstractEventLoop, outbox: asyncio.Queue[Any]) -> None:
        """Serves on `loop`, queueing every message for the host in `outbox`. run() attaches to the stream's
        queue; a test can attach to its own and drive the dispatcher in-process with dispatch()."""
        self._loop = loop
        self._outbox = outbox

    async def run(self) -> int:
        self.attach(asyncio.get_running_loop(), asyncio.Queue())
        self._drained = asyncio.Event()
        self._stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self._loop.add_signal_handler(sig, self._on_signal, sig)
            except (NotImplementedError, RuntimeError):
                pass

        options = [
            ("grpc.max_send_message_length", self.args.max_message_length),
            ("grpc.max_receive_message_length", self.args.max_message_length),
        ]
        log.info(
            "FaaSCache Python worker %s (Python %s, pid %d) connecting to %s as worker %s; shared memory in %s",
            __version__, platform.python_version(), os.getpid(), self.args.target, self.args.worker_id,
            ", ".join(roots()),
        )
        async with grpc.aio.insecure_channel(self.args.target, options=options) as channel:
            try:
                await asyncio.wait_for(channel.channel_ready(), CONNECT_TIMEOUT_SECONDS)
            except asyncio.TimeoutError:
                log.error("cannot reach the host at %s within %.0f s", self.args.target, CONNECT_TIMEOUT_SECONDS)
                return 1
            stub = self.pb_grpc.FunctionRpcStub(channel)
            self.send(self._message(start_stream=self.pb.StartStream(worker_id=self.args.worker_id)))
            call = stub.EventStream(self._outgoing(), wait_for_ready=True)
            self._install_log_handler()
            reader = asyncio.create_task(self._read(call))
            await self._stop.wait()
            if not reader.done():
                # Give the host a moment to end the stream after our half-close, then hang up.
                try:
                    await asyncio.wait_for(asyncio.shield(reader), 2.0)
                except (asyncio.TimeoutError, Exception):
                    pass
            call.cancel()
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self.close()
        return self._exit_code

    async def _read(self, call: Any) -> None:
        try:
            async for message in call:
                self.dispatch(message)
            if not self._terminating:
                log.info("the host closed the stream; exiting")
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as e:
            if not self._terminating:
                log.error("stream to the host failed: %s %s", e.code().name, e.details())
                self._exit_code = 1
        finally:
            if not self._terminating:
                self._terminating = True
                assert self._stop is not None
                self._stop.set()

    def _on_signal(self, sig: int) -> None:
        log.info("received %s; finishing in-flight invocations", signal.Signals(sig).name)
        asyncio.ensure_future(self._shutdown(grace=5.0))

    def _install_log_handler(self) -> None:
        self._log_handler = RpcLogHandler(self.pb, self.args.request_id, self.send)
        root = logging.getLogger()
        root.addHandler(self._log_handler)
        if root.level == logging.NOTSET or root.level > logging.INFO:
            root.setLevel(logging.INFO)

    def close(self) -> None:
        """Lets go of shared memory and the thread pool (run() does this when the stream ends)."""
        if self._log_handler is not None:
            logging.getLogger().removeHandler(self._log_handler)
        # Unclaimed outputs are deleted only when no host cache can have adopted them.
        self._shm.close_all(delete_created=not self._policy.function_data_cache)
        self._pool.shutdown(wait=False, cancel_futures=True)

    # ---- dispatch -----------------------------------------------------------------------------------

    def dispatch(self, message: Any) -> None:
        """Handles one StreamingMessage from the host (on the attached loop)."""
        kind = message.WhichOneof("content")
        handler: Callable[[Any], Any] | None = getattr(self, f"_on_{kind}", None)
        if handler is None:
            log.debug("ignoring %s from the host", kind)
            return
        result = handler(getattr(message, kind))
        if asyncio.iscoroutine(result):
            asyncio.ensure_future(result)

    def _success(self, text: str = "") -> Any:
        return self.pb.StatusResult(status=self.pb.StatusResult.Success, result=text)

    def _failure(self, message: str, stack_trace: str = "", *, exc_type: str = "", user: bool = False) -> Any:
        return self.pb.StatusResult(
            status=self.pb.StatusResult.Failure,
            result=message,
            exception=self.pb.RpcException(
                message=message, stack_trace=stack_trace, type=exc_type, is_user_exception=user, source="faascache_worker"
            ),
        )

    def _worker_metadata(self) -> Any:
        return self.pb.WorkerMetadata(
            runtime_name="python",
            runtime_version=platform.python_version(),
            worker_version=__version__,
            worker_bitness=platform.machine(),
            custom_properties={"worker": "faascache", "azure.functions": azure_functions.ensure_available()},
        )

    def _on_worker_init_request(self, request: Any) -> None:
        self._host_capabilities = dict(request.capabilities)
        self._policy = bindings.OutputPolicy.from_host(self._host_capabilities)
        if request.function_app_directory:
            self._app_directory = request.function_app_directory
            add_app_paths(request.function_app_directory)
        flavour = azure_functions.ensure_available()
        log.info(
            "host %s: FunctionDataCache %s, shared-memory outputs %s; azure.functions: %s; app %s",
            request.host_version or "(unknown version)",
            "on" if self._policy.function_data_cache else "off",
            "always" if self._policy.function_data_cache
            else ">= 1 MiB" if self._policy.shared_memory_enabled else "off",
            "FaaSCache's own" if flavour == "shim" else "the installed library",
            self._app_directory or "(not given)",
        )
        self.send(
            self._message(
                worker_init_response=self.pb.WorkerInitResponse(
                    worker_version=__version__,
                    capabilities=WORKER_CAPABILITIES,
                    result=self._success(),
                    worker_metadata=self._worker_metadata(),
                )
            )
        )

    def _on_worker_status_request(self, _request: Any) -> None:
        self.send(self._message(worker_status_response=self.pb.WorkerStatusResponse()))

    def _on_functions_metadata_request(self, _request: Any) -> None:
        # function.json apps only: the host indexes them itself.
        self.send(
            self._message(
                function_metadata_response=self.pb.FunctionMetadataResponse(
                    use_default_metadata_indexing=True, result=self._success()
                )
            )
        )

    def _on_function_environment_reload_request(self, request: Any) -> None:
        try:
            os.environ.clear()
            os.environ.update(dict(request.environment_variables))
            if request.function_app_directory:
                self._app_directory = request.function_app_directory
                os.chdir(request.function_app_directory)
                add_app_paths(request.function_app_directory)
            self._policy = bindings.OutputPolicy.from_host(self._host_capabilities)
            result = self._success()
        except Exception as e:
            result = self._failure(f"environment reload failed: {type(e).__name__}: {e}", traceback.format_exc())
        self.send(
            self._message(
                function_environment_reload_response=self.pb.FunctionEnvironmentReloadResponse(
                    worker_metadata=self._worker_metadata(), capabilities=WORKER_CAPABILITIES, result=result
                )
            )
        )

    def _on_function_load_request(self, request: Any) -> None:
        self._loading[request.function_id] = asyncio.ensure_future(self._load(request))

    async def _load(self, request: Any) -> None:
        try:
            meta = metadata_from_proto(self.pb, request)
            loaded = await self._in_pool(loader.load_function, meta, self._app_directory)
            self._functions[request.function_id] = loaded
            log.info("loaded function %s (%s, %s)", meta.name, loaded.script_path, "async" if loaded.is_async else "sync")
            result = self._success()
        except loader.FunctionLoadError as e:
            log.error("%s", e)
            result = self._failure(str(e), e.details, exc_type="FunctionLoadError", user=True)
        except Exception as e:
            log.exception("unexpected error loading function %s", request.metadata.name)
            result = self._failure(f"cannot load function '{request.metadata.name}': {type(e).__name__}: {e}",
                                   traceback.format_exc())
        finally:
            self._loading.pop(request.function_id, None)
        self.send(
            self._message(function_load_response=self.pb.FunctionLoadResponse(function_id=request.function_id, result=result))
        )

    def _on_close_shared_memory_resources_request(self, request: Any) -> None:
        results = self._shm.close_maps(list(request.map_names), delete_created=not self._policy.function_data_cache)
        self.send(
            self._message(
                close_shared_memory_resources_response=self.pb.CloseSharedMemoryResourcesResponse(close_map_results=results)
            )
        )

    def _on_worker_terminate(self, request: Any) -> None:
        grace = request.grace_period.seconds + request.grace_period.nanos / 1e9
        log.info("host asked the worker to terminate (grace period %.1f s)", grace)
        asyncio.ensure_future(self._shutdown(grace))

    async def _shutdown(self, grace: float) -> None:
        if self._terminating:
            return
        self._terminating = True
        pending = [t for t in self._invocations.values() if not t.done()]
        if pending:
            _done, still = await asyncio.wait(pending, timeout=max(grace, 0.0))
            for task in still:
                task.cancel()  # async functions stop here; sync ones keep their thread
            if still:
                await asyncio.wait(still, timeout=1.0)
        assert self._outbox is not None and self._drained is not None and self._stop is not None
        self._outbox.put_nowait(None)
        try:
            await asyncio.wait_for(self._drained.wait(), 5.0)
        except asyncio.TimeoutError:
            pass
        self._stop.set()

    # ---- invocations --------------------------------------------------------------------------------

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

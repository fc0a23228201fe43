"""The worker's side of FunctionRpc: one EventStream to the host, a handler per message.

Invocations run concurrently: `async def` functions as tasks on the event loop, plain functions in a
thread pool (PYTHON_THREADPOOL_THREAD_COUNT, as the real worker). Everything sent to the host goes
through one queue, so logs written during an invocation reach the host before its response.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import signal
import sys
import threading
import traceback
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any, Callable

import grpc

from . import __version__, azure_functions, bindings, loader, protos
from .cli import WorkerArgs
from .function_metadata import FunctionMetadataHandlers
from .invocation import InvocationRunner
from .logging_bridge import RpcLogHandler
from .memory_trim import IdleTrimmer, libc_trim, period_seconds
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


def add_app_paths(app_directory: str) -> None:
    """The app's own packages (.python_packages) and modules come before the worker's, as in Azure."""
    for path in (app_directory, os.path.join(app_directory, ".python_packages", "lib", "site-packages")):
        if os.path.isdir(path) and path not in sys.path:
            sys.path.insert(0, path)


class Dispatcher(InvocationRunner, FunctionMetadataHandlers):
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
        self._trimmer = IdleTrimmer(libc_trim(), period_seconds())
        self._init_indexing()

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
            trimmer = asyncio.create_task(self._trimmer.run(lambda: bool(self._invocations) or self._sync_running > 0))
            await self._stop.wait()
            trimmer.cancel()
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
            runtime_version=f"{sys.version_info.major}.{sys.version_info.minor}",  # as the real worker: 3.11, not 3.11.2
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

"""A fake host for the end-to-end tests: a grpcio FunctionRpc server on 127.0.0.1 and a session that starts
worker.py with the host's real command line and talks to it."""

from __future__ import annotations

import os
import queue
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from conftest import WORKER_DIR, function_load_request, indexed_load_request

from faascache_worker.shared_memory import DIRECTORIES_SETTING


APP = Path(__file__).resolve().parent / "apps" / "sample_app"
APP_V2 = Path(__file__).resolve().parent / "apps" / "v2_app"
TIMEOUT = 30.0


def _is_log(message: Any) -> bool:
    return message.WhichOneof("content") == "rpc_log"


class FakeHost:
    """The host's half of EventStream: what the worker sends lands in `inbound`; `send` writes to it."""

    def __init__(self, pb: Any, pb_grpc: Any) -> None:
        self.pb = pb
        self.inbound: queue.Queue[Any] = queue.Queue()
        self.outbound: queue.Queue[Any] = queue.Queue()
        self.logs: list[Any] = []
        self.stash: list[Any] = []
        self.stream_ended = threading.Event()
        host = self

        class Servicer(pb_grpc.FunctionRpcServicer):
            def EventStream(self, request_iterator: Iterator[Any], context: Any) -> Iterator[Any]:  # noqa: N802
                def pump() -> None:
                    try:
                        for message in request_iterator:
                            host.inbound.put(message)
                    except grpc.RpcError:
                        pass
                    finally:  # the worker half-closed: end our side too, as the host does on terminate
                        host.inbound.put(None)
                        host.outbound.put(None)

                threading.Thread(target=pump, daemon=True).start()
                while (message := host.outbound.get()) is not None:
                    yield message
                host.stream_ended.set()

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        pb_grpc.add_FunctionRpcServicer_to_server(Servicer(), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def send(self, **content: Any) -> None:
        self.outbound.put(self.pb.StreamingMessage(request_id="host", **content))

    def _receive(self, timeout: float, waiting_for: str) -> Any:
        """The worker's next message within `timeout` (None when none came); a log is also collected in self.logs."""
        try:
            message = self.inbound.get(timeout=timeout)
        except queue.Empty:
            return None
        if message is None:
            raise AssertionError(f"the worker closed the stream while the test waited for {waiting_for}")
        if _is_log(message):
            self.logs.append(message.rpc_log)
        return message

    def _next(self, deadline: float, waiting_for: str) -> Any:
        if self.stash:
            return self.stash.pop(0)
        while (remaining := deadline - time.monotonic()) > 0:
            message = self._receive(remaining, waiting_for)
            if message is not None and not _is_log(message):
                return message
        raise AssertionError(f"no {waiting_for} from the worker in time")

    def expect(self, kind: str, timeout: float = TIMEOUT) -> Any:
        """The next message other than a log (logs are collected on the way); it must be of `kind`."""
        message = self._next(time.monotonic() + timeout, kind)
        which = message.WhichOneof("content")
        assert which == kind, f"expected {kind}, got {which}: {message}"
        return message

    def expect_log(self, text: str, timeout: float = TIMEOUT) -> Any:
        """Waits for a log whose message contains `text`; other messages are kept for expect()."""
        deadline = time.monotonic() + timeout
        while True:
            for log in self.logs:
                if text in log.message:
                    return log
            while (remaining := deadline - time.monotonic()) > 0:
                message = self._receive(min(remaining, 0.05), f"log {text!r}")
                if message is None or _is_log(message):
                    break
                self.stash.append(message)
            if time.monotonic() >= deadline:
                raise AssertionError(f"no log containing {text!r} in time")

    def stop(self) -> None:
        self.outbound.put(None)
        self.server.stop(0)


def http_binding(pb: Any, binding_name: str = "req", body: bytes = b"{}", **query: str) -> Any:
    return pb.ParameterBinding(
        name=binding_name,
        data=pb.TypedData(
            http=pb.RpcHttp(
                method="POST",
                url="http://127.0.0.1:7071/api/f",
                headers={"content-type": "application/json"},
                body=pb.TypedData(bytes=body),
                query=query,
            )
        ),
    )


class Session:
    """A worker subprocess connected to a FakeHost, after the handshake."""

    def __init__(self, pb: Any, pb_grpc: Any, shm_root: Path, log_path: Path, *, function_data_cache: bool,
                 shared_memory_enabled: bool = False, app: Path = APP) -> None:
        self.pb = pb
        self.host = FakeHost(pb, pb_grpc)
        self.request_id = uuid.uuid4().hex
        self.worker_id = uuid.uuid4().hex
        env = {k: v for k, v in os.environ.items() if not k.startswith("FUNCTIONS_")}
        env[DIRECTORIES_SETTING] = str(shm_root)
        if shared_memory_enabled:
            env["FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED"] = "1"
        port = self.host.port
        self.log_file = open(log_path, "wb")
        # The host's real command line: both forms, as the Functions host appends them.
        self.proc = subprocess.Popen(
            [
                sys.executable, str(WORKER_DIR / "worker.py"),
                "--host", "127.0.0.1", "--port", str(port), "--workerId", self.worker_id,
                "--requestId", self.request_id, "--grpcMaxMessageLength", "2147483647",
                "--functions-uri", f"http://127.0.0.1:{port}/", "--functions-worker-id", self.worker_id,
                "--functions-request-id", self.request_id, "--functions-grpc-max-message-length", "2147483647",
            ],
            env=env,
            cwd=str(WORKER_DIR),
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
        )
        start = self.host.expect("start_stream")
        assert start.request_id == self.request_id
        assert start.start_stream.worker_id == self.worker_id
        self.host.send(
            worker_init_request=pb.WorkerInitRequest(
                host_version="faascache-test",
                capabilities={"FunctionDataCache": "true"} if function_data_cache else {},
                worker_directory=str(WORKER_DIR),
                function_app_directory=str(app),
            )
        )
        self.init = self.host.expect("worker_init_response").worker_init_response

    def load(self, name: str, function_id: str | None = None, app: Path = APP) -> Any:
        function_id = function_id or f"id-{name}"
        self.host.send(function_load_request=function_load_request(self.pb, name, function_id, app))
        response = self.host.expect("function_load_response").function_load_response
        assert response.function_id == function_id
        return response

    def metadata(self, app: Path) -> Any:
        """FunctionsMetadataRequest for `app`, as the host sends it once after the handshake; the response."""
        self.host.send(functions_metadata_request=self.pb.FunctionsMetadataRequest(function_app_directory=str(app)))
        return self.host.expect("function_metadata_response").function_metadata_response

    def load_indexed(self, metadata: Any) -> Any:
        """Loads a function the worker indexed (an entry of a FunctionMetadataResponse), as the host does."""
        self.host.send(function_load_request=indexed_load_request(self.pb, metadata))
        response = self.host.expect("function_load_response").function_load_response
        assert response.function_id == metadata.function_id
        return response

    def invoke(self, function_id: str, *inputs: Any, invocation_id: str | None = None,
               trigger_metadata: dict[str, Any] | None = None) -> Any:
        self.send_invocation(function_id, *inputs, invocation_id=invocation_id, trigger_metadata=trigger_metadata)
        return self.host.expect("invocation_response").invocation_response

    def send_invocation(self, function_id: str, *inputs: Any, invocation_id: str | None = None,
                        trigger_metadata: dict[str, Any] | None = None) -> str:
        invocation_id = invocation_id or uuid.uuid4().hex
        self.host.send(
            invocation_request=self.pb.InvocationRequest(
                invocation_id=invocation_id, function_id=function_id, input_data=list(inputs),
                trigger_metadata=trigger_metadata or {},
            )
        )
        return invocation_id

    def terminate(self) -> int:
        self.host.send(worker_terminate=self.pb.WorkerTerminate(grace_period={"seconds": 5}))
        return self.proc.wait(timeout=TIMEOUT)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=TIMEOUT)
        self.host.stop()
        self.log_file.close()

    def worker_output(self) -> str:
        self.log_file.flush()
        return Path(self.log_file.name).read_text(errors="replace")


def read_map_file(path: Path) -> bytes:
    raw = path.read_bytes()
    assert raw[0] == 0x01
    (length,) = struct.unpack_from("<q", raw, 1)
    assert len(raw) == 9 + length
    return raw[9:]

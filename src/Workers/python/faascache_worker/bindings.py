"""Converts binding values between FunctionRpc messages and the Python objects a function sees.

Inputs: a ParameterBinding carries TypedData or an RpcSharedMemory region. A shared-memory region is
mapped, not copied; the parameter's annotation decides what the function gets:
  func.InputStream  a read-only stream over the mapping (no copy until read)
  memoryview        the mapping itself, read-only (no copy; valid during the invocation)
  bytes             one explicit copy
  str               decoded (UTF-8)
  func.HttpRequest  for HTTP triggers
  func.TimerRequest for timer triggers (from the host's JSON {"Schedule": ..., "ScheduleStatus": ..., "IsPastDue": ...})
  func.QueueMessage for queue triggers (the text and the trigger metadata: queue_messages.py)
  no annotation     by function.json "dataType" (binary -> bytes, string -> str, stream -> InputStream),
                    else by the data's own type

Outputs (func.Out[...].set(value) or the return value): bytes-like and str go into a new
shared-memory map when the host has FunctionDataCache (any size) or when shared-memory transfer is
enabled and the value is at least 1 MiB; otherwise inline as TypedData. func.HttpResponse becomes
TypedData.http. Queue outputs are always inline (queue_messages.py).
"""

from __future__ import annotations

import importlib
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

from . import loader, queue_messages
from .input_stream import make_input_stream
from .shared_memory import MAX_BYTES_FOR_SHARED_MEMORY, MIN_BYTES_FOR_SHARED_MEMORY, SharedMemoryManager

SHARED_MEMORY_SETTING = "FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED"


class BindingError(Exception):
    """A value cannot be converted for a binding; the message names the binding and the types."""


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class OutputPolicy:
    """When an output goes over shared memory instead of inline in the gRPC message."""

    function_data_cache: bool = False
    shared_memory_enabled: bool = False

    @classmethod
    def from_host(cls, host_capabilities: Mapping[str, str], environ: Mapping[str, str] | None = None) -> OutputPolicy:
        env = environ if environ is not None else os.environ
        return cls(
            function_data_cache=_truthy(host_capabilities.get("FunctionDataCache")),
            shared_memory_enabled=_truthy(env.get(SHARED_MEMORY_SETTING)),
        )

    def use_shared_memory(self, size: int) -> bool:
        if self.function_data_cache:  # the cachelet adopts the map: no copy whatever the size
            return True
        return self.shared_memory_enabled and MIN_BYTES_FOR_SHARED_MEMORY <= size <= MAX_BYTES_FOR_SHARED_MEMORY


# ---- inputs ----------------------------------------------------------------------------------------

def _typed_value(td: Any) -> tuple[str, Any]:
    """(kind, value) of a TypedData: kind is bytes, string, json, http, int, double, collection or none."""
    which = td.WhichOneof("data")
    if which is None:
        return "none", None
    if which in ("bytes", "stream"):
        return "bytes", getattr(td, which)
    if which in ("string", "json", "http", "int", "double"):
        return which, getattr(td, which)
    if which == "collection_bytes":
        return "collection", list(td.collection_bytes.bytes)
    if which == "collection_string":
        return "collection", list(td.collection_string.string)
    if which == "collection_double":
        return "collection", list(td.collection_double.double)
    if which == "collection_sint64":
        return "collection", list(td.collection_sint64.sint64)
    return which, getattr(td, which)


def _incoming(pb: ModuleType, binding: Any, invocation_id: str, shm: SharedMemoryManager) -> tuple[str, Any]:
    if binding.WhichOneof("rpc_data") == "rpc_shared_memory":
        region = binding.rpc_shared_memory
        view = shm.open_input(invocation_id, region.name, region.offset, region.count)
        kind = pb.RpcDataType.Name(region.type)
        return ("string" if kind == "string" else "json" if kind == "json" else "bytes"), view
    if binding.WhichOneof("rpc_data") == "data":
        return _typed_value(binding.data)
    return "none", None


def _as_buffer(kind: str, value: Any, name: str) -> bytes | memoryview:
    if isinstance(value, (bytes, memoryview)):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise BindingError(f"binding '{name}' received {kind} data, which is not bytes or text")


def _metadata_text(trigger_metadata: Mapping[str, Any], key: str) -> str | None:
    td = trigger_metadata.get(key)
    if td is None:
        return None
    kind, value = _typed_value(td)
    if kind == "json":
        try:
            value = json.loads(value)
        except ValueError:
            pass
    return value if isinstance(value, str) else None


def http_request_from_rpc(func_mod: ModuleType, http: Any) -> Any:
    """func.HttpRequest from RpcHttp (query -> params, params -> route_params, as the real worker)."""
    body: bytes = b""
    for source in (http.body, http.rawBody):
        kind, value = _typed_value(source)
        if kind == "bytes":
            body = value
        elif kind in ("string", "json"):
            body = value.encode("utf-8")
        else:
            continue
        break
    return func_mod.HttpRequest(
        method=http.method,
        url=http.url,
        headers=dict(http.headers),
        params=dict(http.query),
        route_params=dict(http.params),
        body=body,
    )


def timer_request(func_mod: ModuleType, name: str, kind: str, value: Any) -> Any:
    """azure.functions.timer.TimerRequest (concrete in the real library and ours) from the host's timer JSON."""
    if kind not in ("json", "string"):
        raise BindingError(f"timer trigger '{name}' received {kind} data; expected the host's timer JSON "
                           '({"Schedule": ..., "ScheduleStatus": ..., "IsPastDue": ...})')
    text = value if isinstance(value, str) else str(value, "utf-8")
    try:
        info = json.loads(text)
    except ValueError as e:
        raise BindingError(f"timer trigger '{name}' received text that is not JSON ({e}): {text[:200]!r}") from e
    if not isinstance(info, dict):
        raise BindingError(f"timer trigger '{name}' received JSON that is not an object: {text[:200]!r}")
    timer_class = importlib.import_module(func_mod.__name__ + ".timer").TimerRequest
    return timer_class(
        past_due=bool(info.get("IsPastDue", False)),
        schedule_status=info.get("ScheduleStatus") or {},
        schedule=info.get("Schedule") or {},
    )


def decode_input(
    pb: ModuleType,
    func_mod: ModuleType,
    param: loader.ParamSpec,
    binding: Any,
    *,
    invocation_id: str,
    shm: SharedMemoryManager,
    trigger_metadata: Mapping[str, Any] | None = None,
) -> Any:
    """The value of one input parameter from its ParameterBinding."""
    kind, value = _incoming(pb, binding, invocation_id, shm)
    spec = param.binding
    target = param.kind
    if target == loader.KIND_AUTO and spec is not None and spec.is_timer:
        target = loader.KIND_TIMER
    if target == loader.KIND_AUTO and spec is not None and spec.is_queue_trigger:
        target = loader.KIND_QUEUE
    if target == loader.KIND_AUTO and spec is not None:
        target = {"binary": loader.KIND_BYTES, "string": loader.KIND_STR, "stream": loader.KIND_STREAM}.get(
            spec.data_type, loader.KIND_AUTO
        )
    if kind == "http":
        if target not in (loader.KIND_HTTP, loader.KIND_AUTO):
            raise BindingError(f"binding '{param.name}' received an HTTP request but the parameter wants {target}")
        return http_request_from_rpc(func_mod, value)
    if target == loader.KIND_HTTP:
        raise BindingError(f"binding '{param.name}' is annotated func.HttpRequest but received {kind} data")
    if kind == "none":
        return None
    if target == loader.KIND_TIMER:
        return timer_request(func_mod, param.name, kind, value)
    if target == loader.KIND_QUEUE:
        try:
            return queue_messages.message_from_rpc(func_mod, param.name, kind, value, trigger_metadata)
        except queue_messages.QueueBindingError as e:
            raise BindingError(str(e)) from None
    if target == loader.KIND_STREAM:
        data = _as_buffer(kind, value, param.name)
        name = uri = None
        if spec is not None and spec.type.lower() == "blobtrigger" and trigger_metadata:
            name = _metadata_text(trigger_metadata, "BlobTrigger")
            uri = _metadata_text(trigger_metadata, "Uri")
        return make_input_stream(func_mod.InputStream, data, name=name, uri=uri, length=len(data))
    if target == loader.KIND_MEMORYVIEW:
        data = _as_buffer(kind, value, param.name)
        return data if isinstance(data, memoryview) else memoryview(data).toreadonly()
    if target == loader.KIND_BYTES:
        data = _as_buffer(kind, value, param.name)
        return data if isinstance(data, bytes) else bytes(data)  # the one explicit copy
    if target == loader.KIND_STR:
        if isinstance(value, str):
            return value
        return str(_as_buffer(kind, value, param.name), "utf-8")
    # Passed through by the data's own type.
    if isinstance(value, memoryview):
        return str(value, "utf-8") if kind in ("string", "json") else bytes(value)
    return value


# ---- outputs ---------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def out_class(base: type) -> type:
    """A concrete func.Out (the real library's is abstract)."""

    class Out(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            self._value: Any = None

        def set(self, val: Any) -> None:
            self._value = val

        def get(self) -> Any:
            return self._value

        def __repr__(self) -> str:
            return f"<Out {type(self._value).__name__}>"

    Out.__module__ = __name__
    return Out


def _is_http_response(value: Any) -> bool:
    return callable(getattr(value, "get_body", None)) and hasattr(value, "status_code") and hasattr(value, "headers")


def http_response_to_rpc(pb: ModuleType, response: Any) -> Any:
    headers = {str(k): str(v) for k, v in dict(response.headers).items()}
    if not any(k.lower() == "content-type" for k in headers):
        mimetype = getattr(response, "mimetype", None) or "text/plain"
        charset = getattr(response, "charset", None) or "utf-8"
        headers["content-type"] = f"{mimetype}; charset={charset}" if mimetype.startswith("text/") else mimetype
    return pb.TypedData(
        http=pb.RpcHttp(
            status_code=str(int(response.status_code)),
            headers=headers,
            body=pb.TypedData(bytes=response.get_body()),
        )
    )


def _readable_content(value: Any) -> bytes | memoryview | None:
    """Bytes of a file-like output (e.g. passing an input stream through) without copying our own streams."""
    if isinstance(value, io.IOBase) or callable(getattr(value, "read", None)):
        getbuffer = getattr(value, "getbuffer", None)
        if callable(getbuffer) and callable(getattr(value, "tell", None)):
            return getbuffer()[value.tell():]
        data = value.read()
        return data.encode("utf-8") if isinstance(data, str) else data
    return None


def encode_output(
    pb: ModuleType,
    name: str,
    spec: loader.BindingSpec | None,
    value: Any,
    *,
    policy: OutputPolicy,
    shm: SharedMemoryManager,
    invocation_id: str,
) -> Any | None:
    """TypedData or RpcSharedMemory for one output value (None when there is nothing to send)."""
    if value is None:
        return None
    if spec is not None and spec.is_queue_output:
        try:
            return queue_messages.encode_output(pb, name, value)
        except queue_messages.QueueBindingError as e:
            raise BindingError(str(e)) from None
    if _is_http_response(value):
        return http_response_to_rpc(pb, value)
    if spec is not None and spec.is_http:
        if isinstance(value, str):
            return pb.TypedData(string=value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return pb.TypedData(bytes=bytes(value))
        raise BindingError(
            f"HTTP output '{name}' must be func.HttpResponse, str or bytes, not {type(value).__name__}"
        )
    if not isinstance(value, (str, bytes, bytearray, memoryview)):
        content = _readable_content(value)
        if content is not None:
            value = content
    if isinstance(value, (bytes, bytearray, memoryview)):
        size = memoryview(value).nbytes
        if policy.use_shared_memory(size):
            map_name, count = shm.put(value, invocation_id)
            return pb.RpcSharedMemory(name=map_name, offset=0, count=count, type=pb.RpcDataType.Value("bytes"))
        return pb.TypedData(bytes=bytes(value))
    if isinstance(value, str):
        if policy.function_data_cache or policy.shared_memory_enabled:
            encoded = value.encode("utf-8")
            if policy.use_shared_memory(len(encoded)):
                map_name, count = shm.put(encoded, invocation_id)
                return pb.RpcSharedMemory(name=map_name, offset=0, count=count, type=pb.RpcDataType.Value("string"))
        return pb.TypedData(string=value)
    if isinstance(value, bool):
        return pb.TypedData(json=json.dumps(value))
    if isinstance(value, int):
        return pb.TypedData(int=value)
    if isinstance(value, float):
        return pb.TypedData(double=value)
    if isinstance(value, (dict, list, tuple)):
        try:
            return pb.TypedData(json=json.dumps(value))
        except (TypeError, ValueError) as e:
            raise BindingError(f"output '{name}' is not JSON-serializable: {e}") from e
    raise BindingError(
        f"output '{name}' cannot send a {type(value).__name__}; use bytes, str, a readable stream, "
        "int, float, dict/list (JSON) or func.HttpResponse"
    )


def to_parameter_binding(pb: ModuleType, name: str, encoded: Any) -> Any:
    if isinstance(encoded, pb.RpcSharedMemory):
        return pb.ParameterBinding(name=name, rpc_shared_memory=encoded)
    return pb.ParameterBinding(name=name, data=encoded)

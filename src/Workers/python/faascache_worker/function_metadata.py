"""FunctionsMetadataRequest and FunctionLoadRequest: the Dispatcher's handlers that find and load functions.

v2 apps (function_app.py) are indexed by the worker: the metadata response describes every function, as the real
Python worker builds it, and registers it at once, so a later load of it is a no-op. A process that gets a load of
a worker-indexed function it has not indexed (an extra process: the host sends it no metadata request) indexes
metadata.directory first. Any other load is a function.json function, imported by path.
"""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from types import ModuleType
from typing import Any, Callable

from google.protobuf.duration_pb2 import Duration

from . import indexing, loader

log = logging.getLogger("faascache_worker")


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


def metadata_to_proto(pb: ModuleType, fn: indexing.IndexedFunction) -> Any:
    """RpcFunctionMetadata of a worker-indexed function, field for field as the real Python worker fills it."""
    bindings = {
        name: pb.BindingInfo(
            type=spec.type,
            direction=pb.BindingInfo.Direction.Value(spec.direction),
            data_type=pb.BindingInfo.DataType.Value(spec.data_type),
        )
        for name, spec in fn.bindings.items()
    }
    metadata = pb.RpcFunctionMetadata(
        name=fn.name,
        function_id=fn.function_id,
        managed_dependency_enabled=False,
        directory=fn.directory,
        script_file=fn.script_file,
        entry_point=fn.entry_point,
        is_proxy=False,
        language="python",
        bindings=bindings,
        raw_bindings=fn.raw_bindings,
        properties=fn.properties,
    )
    if fn.retry is not None:
        retry = metadata.retry_options
        retry.max_retry_count = fn.retry.max_retry_count
        retry.retry_strategy = pb.RpcRetryOptions.RetryStrategy.Value(fn.retry.strategy)
        for key in ("delay_interval", "minimum_interval", "maximum_interval"):
            seconds = getattr(fn.retry, key)
            if seconds is not None:
                getattr(retry, key).CopyFrom(Duration(seconds=seconds))
    return metadata


class FunctionMetadataHandlers:
    """Mixin of Dispatcher: the attributes it uses are set by Dispatcher.__init__."""

    pb: ModuleType
    _functions: dict[str, loader.LoadedFunction]
    _loading: dict[str, asyncio.Task[None]]
    _app_directory: str | None
    send: Callable[[Any], None]
    _message: Callable[..., Any]
    _success: Callable[..., Any]
    _failure: Callable[..., Any]
    _in_pool: Callable[..., Any]

    def _init_indexing(self) -> None:
        # App directory -> its functions (None: no function_app.py), or why indexing failed.
        self._indexed: dict[str, list[indexing.IndexedFunction] | None | Exception] = {}
        self._index_lock = asyncio.Lock()

    async def _index(self, app_directory: str) -> list[indexing.IndexedFunction] | None:
        """Indexes an app once per process, failure included, as the real worker: a script imports once, and the
        library refuses to list an app's functions a second time."""
        async with self._index_lock:
            if app_directory not in self._indexed:
                try:
                    functions = await self._in_pool(indexing.index, app_directory)
                except Exception as e:
                    self._indexed[app_directory] = e
                    raise
                for fn in functions or []:
                    self._functions[fn.function_id] = fn.loaded
                self._indexed[app_directory] = functions
                if functions is not None:
                    log.info("indexed %s in %s: %s", indexing.script_file_name(), app_directory,
                             ", ".join(f"{fn.name} ({fn.function_id})" for fn in functions) or "no functions")
            known = self._indexed[app_directory]
            if isinstance(known, Exception):
                raise known
            return known

    def _indexing_failure(self, e: Exception) -> Any:
        cause = e.cause if isinstance(e, indexing.IndexingError) else e
        message = str(e) if isinstance(e, indexing.IndexingError) else f"{type(e).__name__}: {e}"
        log.error("indexing the app failed: %s", message)
        return self._failure(message, "".join(traceback.format_exception(type(cause), cause, cause.__traceback__)),
                             exc_type=f"{type(cause).__module__}.{type(cause).__qualname__}", user=True)

    async def _on_functions_metadata_request(self, request: Any) -> None:
        directory = request.function_app_directory or self._app_directory or ""
        response = self.pb.FunctionMetadataResponse()
        try:
            if not directory:
                raise ValueError("FunctionsMetadataRequest has no function_app_directory and WorkerInitRequest gave none")
            functions = await self._index(directory)
            if functions:
                response.function_metadata_results.extend(metadata_to_proto(self.pb, fn) for fn in functions)
            else:  # no function_app.py, or an app without functions: the host indexes function.json folders
                response.use_default_metadata_indexing = True
            response.result.CopyFrom(self._success())
        except Exception as e:
            response.result.CopyFrom(self._indexing_failure(e))
        self.send(self._message(function_metadata_response=response))

    def _on_function_load_request(self, request: Any) -> None:
        self._loading[request.function_id] = asyncio.ensure_future(self._load(request))

    async def _load(self, request: Any) -> None:
        name = request.metadata.name
        try:
            if request.function_id not in self._functions and indexing.WORKER_INDEXED in request.metadata.properties:
                # A worker-indexed function this process has not indexed: an extra process of the app.
                await self._index(request.metadata.directory)
                if request.function_id not in self._functions:
                    raise LookupError(
                        f"function '{name}' (id {request.function_id}) is not among the functions of "
                        f"{indexing.script_file_name()} in {request.metadata.directory}"
                    )
            if request.function_id in self._functions:
                result = self._success()  # indexed: nothing left to do
            else:
                meta = metadata_from_proto(self.pb, request)
                loaded = await self._in_pool(loader.load_function, meta, self._app_directory)
                self._functions[request.function_id] = loaded
                log.info("loaded function %s (%s, %s)", meta.name, loaded.script_path, "async" if loaded.is_async else "sync")
                result = self._success()
        except loader.FunctionLoadError as e:
            log.error("%s", e)
            result = self._failure(str(e), e.details or traceback.format_exc(), exc_type="FunctionLoadError", user=True)
        except (indexing.IndexingError, indexing.InvalidFileNameError, ValueError) as e:
            result = self._indexing_failure(e)
        except Exception as e:
            log.exception("unexpected error loading function %s", name)
            result = self._failure(f"cannot load function '{name}': {type(e).__name__}: {e}", traceback.format_exc())
        finally:
            self._loading.pop(request.function_id, None)
        self.send(
            self._message(function_load_response=self.pb.FunctionLoadResponse(function_id=request.function_id, result=result))
        )

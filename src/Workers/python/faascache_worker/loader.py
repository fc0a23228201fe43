"""Loads a function of the function.json programming model: imports its script by path, finds the entry
point, and matches its parameters with the bindings. Every failure says which file and why. (Functions of
the v2 model are found by indexing.py and matched with their bindings here too, by bind_function.)"""

from __future__ import annotations

import collections.abc
import importlib.util
import inspect
import os
import sys
import threading
import traceback
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

from . import azure_functions

DEFAULT_SCRIPT = "__init__.py"
DEFAULT_ENTRY_POINT = "main"
RETURN = "$return"
APP_PACKAGE = "__app__"  # as the real worker: the app is a package, so `from . import x` works in a function

# How a parameter receives its value; chosen once at load time from its annotation and binding.
KIND_CONTEXT = "context"
KIND_OUT = "out"
KIND_HTTP = "http"
KIND_STREAM = "stream"
KIND_BYTES = "bytes"
KIND_STR = "str"
KIND_MEMORYVIEW = "memoryview"
KIND_TIMER = "timer"  # func.TimerRequest from the host's timer JSON
KIND_QUEUE = "queue"  # func.QueueMessage from a queue trigger's text and metadata
KIND_AUTO = "auto"  # unannotated (or a type we pass through): decided by dataType and the data itself

_BLOB_TYPES = {"blob", "blobtrigger"}

# Loads run in the thread pool; one import at a time so a shared package __init__ runs once.
import_lock = threading.RLock()


@dataclass(frozen=True)
class BindingSpec:
    name: str
    type: str
    direction: str = "in"  # in | out | inout
    data_type: str = "undefined"  # undefined | string | binary | stream
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def is_blob(self) -> bool:
        return self.type.lower() in _BLOB_TYPES

    @property
    def is_http(self) -> bool:
        return self.type.lower() in ("http", "httptrigger")

    @property
    def is_timer(self) -> bool:
        return self.type.lower() == "timertrigger"

    @property
    def is_queue_trigger(self) -> bool:
        return self.type.lower() == "queuetrigger"

    @property
    def is_queue_output(self) -> bool:
        return self.type.lower() == "queue" and self.direction != "in"


@dataclass(frozen=True)
class FunctionMetadata:
    """What FunctionLoadRequest.metadata carries, without protobuf types."""

    function_id: str
    name: str
    directory: str
    script_file: str = ""
    entry_point: str = ""
    bindings: dict[str, BindingSpec] = field(default_factory=dict)


@dataclass(frozen=True)
class ParamSpec:
    name: str
    kind: str
    binding: BindingSpec | None
    annotation: Any = None
    out_type: Any = None  # T of func.Out[T]


@dataclass
class LoadedFunction:
    metadata: FunctionMetadata
    func: Callable[..., Any]
    is_async: bool
    params: list[ParamSpec]
    return_binding: BindingSpec | None
    script_path: str

    @property
    def name(self) -> str:
        return self.metadata.name


class FunctionLoadError(Exception):
    """A function cannot be loaded; str() is the message for the host, `details` the traceback if any."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details


def script_path(meta: FunctionMetadata) -> str:
    script = meta.script_file or DEFAULT_SCRIPT
    return os.path.normpath(script if os.path.isabs(script) else os.path.join(meta.directory, script))


def load_function(meta: FunctionMetadata, app_directory: str | None = None) -> LoadedFunction:
    """Imports meta's script and checks its entry point against the bindings."""
    path = script_path(meta)
    prefix = f"cannot load function '{meta.name}'"
    if not os.path.isfile(path):
        raise FunctionLoadError(
            f"{prefix}: script file {path} does not exist "
            f"(function.json \"scriptFile\" is {meta.script_file or '(default ' + DEFAULT_SCRIPT + ')'!s}, "
            f"function directory {meta.directory})"
        )
    if not path.endswith(".py"):
        raise FunctionLoadError(f"{prefix}: script file {path} is not a .py file")
    try:
        with import_lock:
            module = _import_script(meta, path, app_directory or os.path.dirname(os.path.normpath(meta.directory)))
    except SyntaxError as e:
        raise FunctionLoadError(
            f"{prefix}: syntax error in {e.filename or path}, line {e.lineno}: {e.msg}",
            traceback.format_exc(),
        ) from e
    except Exception as e:  # the script raised while importing (missing module, bad top-level code)
        raise FunctionLoadError(
            f"{prefix}: importing {path} raised {type(e).__name__}: {e}", traceback.format_exc()
        ) from e

    entry = meta.entry_point or DEFAULT_ENTRY_POINT
    fn = getattr(module, entry, None)
    if fn is None:
        raise FunctionLoadError(
            f"{prefix}: {path} has no function '{entry}' "
            f"(function.json \"entryPoint\"; Python functions default to '{DEFAULT_ENTRY_POINT}')"
        )
    if not callable(fn):
        raise FunctionLoadError(f"{prefix}: '{entry}' in {path} is a {type(fn).__name__}, not a function")

    return bind_function(meta, fn, path)


def bind_function(meta: FunctionMetadata, fn: Callable[..., Any], path: str, source: str = "function.json") -> LoadedFunction:
    """Matches fn's parameters with meta's bindings (declared in `source`: function.json, or the decorators of a
    v2 function); raises FunctionLoadError naming what does not match."""
    params, return_binding = _match_bindings(meta, fn, f"cannot load function '{meta.name}'", source)
    return LoadedFunction(
        metadata=meta,
        func=fn,
        is_async=inspect.iscoroutinefunction(fn),
        params=params,
        return_binding=return_binding,
        script_path=path,
    )


# ---- importing -------------------------------------------------------------------------------------

def _module_name(path: str, app_directory: str) -> str:
    rel = os.path.relpath(path, app_directory)
    if rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        # Outside the app: a unique top-level name (relative imports then do not apply).
        return "_faascache_function_" + "".join(c if c.isalnum() else "_" for c in os.path.splitext(path)[0])
    parts = os.path.splitext(rel)[0].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([APP_PACKAGE, *parts])


def _ensure_package(name: str, directory: str) -> None:
    """Registers `name` as a package on `directory`, running its __init__.py when it has one."""
    if name in sys.modules:
        return
    parent = name.rpartition(".")[0]
    if parent:
        _ensure_package(parent, os.path.dirname(directory))
    init = os.path.join(directory, "__init__.py")
    if os.path.isfile(init):
        _exec_file(name, init, package_dir=directory)
    else:
        package = types.ModuleType(name)
        package.__path__ = [directory]  # type: ignore[attr-defined]
        sys.modules[name] = package


def _exec_file(name: str, path: str, package_dir: str | None) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[package_dir] if package_dir else None
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"no loader for {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_script(meta: FunctionMetadata, path: str, app_directory: str) -> types.ModuleType:
    azure_functions.ensure_available()
    name = _module_name(path, os.path.normpath(app_directory))
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == path:
        return sys.modules[name]  # two functions sharing one script
    is_package = os.path.basename(path) == "__init__.py"
    parent = name.rpartition(".")[0]
    if parent:
        _ensure_package(parent, os.path.dirname(path) if not is_package else os.path.dirname(os.path.dirname(path)))
    return _exec_file(name, path, package_dir=os.path.dirname(path) if is_package else None)


# ---- parameters and bindings -----------------------------------------------------------------------

def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except Exception:  # an annotation that does not evaluate: keep it as text
        return inspect.signature(fn)


def _kind(name: str, annotation: Any, binding: BindingSpec | None, func_mod: types.ModuleType) -> tuple[str, Any]:
    origin = typing.get_origin(annotation)
    if annotation is func_mod.Out or (isinstance(origin, type) and issubclass(origin, func_mod.Out)):
        args = typing.get_args(annotation)
        return KIND_OUT, (args[0] if args else None)
    if isinstance(annotation, type):
        if issubclass(annotation, func_mod.Context):
            return KIND_CONTEXT, None
        if issubclass(annotation, func_mod.HttpRequest):
            return KIND_HTTP, None
        if issubclass(annotation, func_mod.InputStream):
            return KIND_STREAM, None
        timer_request = getattr(func_mod, "TimerRequest", None)
        if isinstance(timer_request, type) and issubclass(annotation, timer_request):
            return KIND_TIMER, None
        if _is_queue_message_type(annotation, func_mod):
            return KIND_QUEUE, None
        if annotation is bytes:
            return KIND_BYTES, None
        if annotation is str:
            return KIND_STR, None
        if annotation is memoryview:
            return KIND_MEMORYVIEW, None
    if binding is None and name == "context":
        return KIND_CONTEXT, None
    if binding is not None and binding.direction == "out":
        return KIND_OUT, None
    if binding is not None and binding.type.lower() == "httptrigger" and annotation is inspect.Parameter.empty:
        return KIND_HTTP, None
    if binding is not None and binding.is_timer and annotation is inspect.Parameter.empty:
        return KIND_TIMER, None
    if binding is not None and binding.is_queue_trigger and annotation is inspect.Parameter.empty:
        return KIND_QUEUE, None
    return KIND_AUTO, None


def _is_queue_message_type(annotation: Any, func_mod: types.ModuleType) -> bool:
    """func.QueueMessage or a subclass (the real library's azure.functions.queue.QueueMessage is one)."""
    queue_message = getattr(func_mod, "QueueMessage", None)
    return isinstance(annotation, type) and isinstance(queue_message, type) and issubclass(annotation, queue_message)


def _is_queue_output_type(out_type: Any, func_mod: types.ModuleType) -> bool:
    """What the real library's queue output accepts in func.Out[...]: str, bytes, func.QueueMessage, or a list
    (any iterable type) of them; None when func.Out has no type argument."""
    if out_type is None or out_type is Any:
        return True
    if isinstance(out_type, type) and (issubclass(out_type, (str, bytes)) or _is_queue_message_type(out_type, func_mod)):
        return True
    origin = typing.get_origin(out_type)
    args = typing.get_args(out_type)
    if isinstance(origin, type) and issubclass(origin, collections.abc.Iterable) and len(args) == 1:
        item = args[0]
        return isinstance(item, type) and (issubclass(item, str) or _is_queue_message_type(item, func_mod))
    return False


def _describe(annotation: Any) -> str:
    if typing.get_args(annotation):  # typing.List[int], not "List"
        return repr(annotation)
    return getattr(annotation, "__qualname__", None) or repr(annotation)


def _match_bindings(
    meta: FunctionMetadata, fn: Callable[..., Any], prefix: str, source: str = "function.json"
) -> tuple[list[ParamSpec], BindingSpec | None]:
    func_mod = azure_functions.module()
    signature = _signature(fn)
    bindings = {k: v for k, v in meta.bindings.items() if k != RETURN}
    params: list[ParamSpec] = []
    extra: list[str] = []
    for p in signature.parameters.values():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise FunctionLoadError(f"{prefix}: parameter *{p.name} is not supported; declare one parameter per binding")
        binding = bindings.get(p.name)
        kind, out_type = _kind(p.name, p.annotation, binding, func_mod)
        if binding is None:
            if kind == KIND_CONTEXT:
                params.append(ParamSpec(p.name, kind, None, p.annotation))
            elif p.default is inspect.Parameter.empty:
                extra.append(p.name)
            continue
        _check(prefix, p.name, p.annotation, kind, binding, source, out_type, func_mod)
        params.append(ParamSpec(p.name, kind, binding, p.annotation, out_type))
    missing = sorted(set(bindings) - {p.name for p in params})
    if extra:
        raise FunctionLoadError(
            f"{prefix}: the following parameters are declared in Python but not in {source}: {', '.join(sorted(extra))}"
        )
    if missing:
        raise FunctionLoadError(
            f"{prefix}: the following bindings are declared in {source} but are not parameters of "
            f"'{getattr(fn, '__name__', '?')}': {', '.join(missing)}"
        )
    return params, meta.bindings.get(RETURN)


def _check(prefix: str, name: str, annotation: Any, kind: str, binding: BindingSpec, source: str, out_type: Any,
           func_mod: types.ModuleType) -> None:
    if binding.direction == "out" and kind != KIND_OUT:
        raise FunctionLoadError(
            f"{prefix}: binding '{name}' has direction \"out\" in {source}, so its parameter must be "
            f"annotated func.Out[...] (it is {_describe(annotation)})"
        )
    if binding.direction != "out" and kind == KIND_OUT:
        raise FunctionLoadError(
            f"{prefix}: parameter '{name}' is annotated func.Out but binding '{name}' has direction "
            f"\"{binding.direction}\" in {source}"
        )
    if binding.is_blob and binding.direction != "out":
        allowed = (KIND_STREAM, KIND_BYTES, KIND_STR, KIND_MEMORYVIEW)
        if not (kind in allowed or annotation is inspect.Parameter.empty):
            raise FunctionLoadError(
                f"{prefix}: blob binding '{name}' cannot be passed as {_describe(annotation)}; "
                "annotate it func.InputStream, bytes, str or memoryview"
            )
    if binding.type.lower() == "httptrigger" and kind not in (KIND_HTTP, KIND_AUTO):
        raise FunctionLoadError(
            f"{prefix}: HTTP trigger '{name}' is annotated {_describe(annotation)}; annotate it func.HttpRequest"
        )
    if binding.is_timer and kind not in (KIND_TIMER, KIND_STR, KIND_BYTES, KIND_AUTO):
        raise FunctionLoadError(
            f"{prefix}: timer trigger '{name}' is annotated {_describe(annotation)}; annotate it func.TimerRequest"
        )
    if kind == KIND_TIMER and not binding.is_timer:
        raise FunctionLoadError(
            f"{prefix}: parameter '{name}' is annotated func.TimerRequest but binding '{name}' is a {binding.type}, "
            "not a timerTrigger"
        )
    if binding.is_queue_trigger and kind not in (KIND_QUEUE, KIND_STR, KIND_BYTES):  # unannotated is KIND_QUEUE
        raise FunctionLoadError(
            f"{prefix}: queue trigger '{name}' is annotated {_describe(annotation)}; annotate it func.QueueMessage "
            "(or str for the message text)"
        )
    if kind == KIND_QUEUE and not binding.is_queue_trigger:
        raise FunctionLoadError(
            f"{prefix}: parameter '{name}' is annotated func.QueueMessage but binding '{name}' is a {binding.type}, "
            "not a queueTrigger (a queue output is annotated func.Out[func.QueueMessage])"
        )
    if binding.is_queue_output and kind == KIND_OUT and not _is_queue_output_type(out_type, func_mod):
        raise FunctionLoadError(
            f"{prefix}: queue output '{name}' is annotated func.Out[{_describe(out_type)}]; annotate it func.Out[str], "
            "func.Out[bytes], func.Out[func.QueueMessage] or func.Out[typing.List[str]] (or List[func.QueueMessage])"
        )

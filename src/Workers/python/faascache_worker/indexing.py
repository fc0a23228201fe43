"""Worker indexing of the v2 programming model, as the real Python worker does it (its loader.index_function_app
and process_indexed_function): import function_app.py by its stem, find its one top-level FunctionApp, and
describe each of its functions for the host.

No script means a function.json app (the host indexes it itself). The functions are matched with their bindings
here too, so a parameter without a binding fails the indexing, as in the real worker.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import azure_functions, loader

SCRIPT_SETTING = "PYTHON_SCRIPT_FILE_NAME"
DEFAULT_SCRIPT = "function_app.py"
WORKER_INDEXED = "worker_indexed"  # RpcFunctionMetadata.properties key: the host sends it back in loads
_SCRIPT_NAME = re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9_\-]*\.py$")
_DIRECTIONS = {0: "in", 1: "out", 2: "inout"}
_DATA_TYPES = {0: "undefined", 1: "string", 2: "binary", 3: "stream"}
RETRY_STRATEGIES = ("exponential_backoff", "fixed_delay")


class InvalidFileNameError(Exception):
    """PYTHON_SCRIPT_FILE_NAME is not a Python file name the worker may import."""

    def __init__(self, file_name: str) -> None:
        super().__init__(
            f"Invalid file name: {file_name} ({SCRIPT_SETTING} must match {_SCRIPT_NAME.pattern}, e.g. {DEFAULT_SCRIPT})"
        )


class IndexingError(Exception):
    """The app's script failed to import; str() names the script and the original error."""

    def __init__(self, message: str, cause: BaseException) -> None:
        super().__init__(message)
        self.cause = cause


@dataclass(frozen=True)
class RetryOptions:
    strategy: str  # exponential_backoff | fixed_delay
    max_retry_count: int
    delay_interval: int | None = None  # seconds
    minimum_interval: int | None = None
    maximum_interval: int | None = None


@dataclass(frozen=True)
class IndexedFunction:
    """One function as RpcFunctionMetadata describes it, plus what the worker needs to invoke it."""

    function_id: str
    name: str
    directory: str
    script_file: str
    raw_bindings: list[str]
    bindings: dict[str, loader.BindingSpec]
    retry: RetryOptions | None
    loaded: loader.LoadedFunction
    properties: dict[str, str] = field(default_factory=lambda: {WORKER_INDEXED: "True"})

    @property
    def entry_point(self) -> str:
        return self.name


def script_file_name(environ: Mapping[str, str] = os.environ) -> str:
    name = environ.get(SCRIPT_SETTING) or DEFAULT_SCRIPT
    if not _SCRIPT_NAME.match(name):
        raise InvalidFileNameError(name)
    return name


def function_id(name: str) -> str:
    """The same in every worker process of the app: extra processes load by it without a metadata request."""
    return str(uuid.uuid5(uuid.NAMESPACE_OID, name))


def index(app_directory: str, environ: Mapping[str, str] = os.environ) -> list[IndexedFunction] | None:
    """The functions of <app_directory>/function_app.py (PYTHON_SCRIPT_FILE_NAME), or None when there is no such
    script. Raises InvalidFileNameError, IndexingError (import failed), ValueError (no or several apps, duplicate
    names: the library's words) or loader.FunctionLoadError (a parameter does not match the bindings)."""
    name = script_file_name(environ)
    path = os.path.join(app_directory, name)
    if not os.path.isfile(path):
        return None
    with loader.import_lock:
        module = _import_script(path, app_directory)
        app = _the_app(module, name)
        functions = app.get_functions()
    return [_describe(fn, app_directory, path) for fn in functions]


def _import_script(path: str, app_directory: str) -> Any:
    azure_functions.ensure_available()
    for folder in (os.path.join(app_directory, ".python_packages", "lib", "site-packages"), app_directory):
        if os.path.isdir(folder) and folder not in sys.path:
            sys.path.insert(0, folder)
    stem = os.path.splitext(os.path.basename(path))[0]
    known = sys.modules.get(stem)
    if known is not None and os.path.realpath(getattr(known, "__file__", "") or "") != os.path.realpath(path):
        del sys.modules[stem]  # another app's script of the same name (tests index several apps in one process)
    importlib.invalidate_caches()
    try:
        return importlib.import_module(stem)
    except SyntaxError as e:
        raise IndexingError(f"SyntaxError: {e.msg} ({e.filename or path}, line {e.lineno})", e) from e
    except Exception as e:
        raise IndexingError(f"{type(e).__name__}: {e} (while importing {path})", e) from e


def _the_app(module: Any, script_name: str) -> Any:
    register = azure_functions.module().FunctionRegister
    app = None
    for attribute in dir(module):
        value = getattr(module, attribute, None)
        if isinstance(value, register):
            if app is not None and value is not app:
                raise ValueError(
                    f"More than one {type(app).__name__} or other top level function app instances are defined."
                )
            app = value
    if app is None:
        raise ValueError(f"Could not find top level function app instances in {script_name}.")
    return app


def _describe(fn: Any, app_directory: str, script_path: str) -> IndexedFunction:
    name = fn.get_function_name()
    specs: dict[str, loader.BindingSpec] = {}
    for binding in fn.get_bindings():
        specs[binding.name] = loader.BindingSpec(
            name=binding.name,
            type=binding.type,
            direction=_DIRECTIONS.get(binding.direction, "in"),
            data_type=_DATA_TYPES.get(binding.data_type or 0, "undefined"),
        )
    fid = function_id(name)
    meta = loader.FunctionMetadata(
        function_id=fid, name=name, directory=app_directory, script_file=script_path, entry_point=name, bindings=specs
    )
    user_function = fn.get_user_function()
    loaded = loader.bind_function(meta, user_function, _source_file(user_function, script_path), "its decorators")
    return IndexedFunction(
        function_id=fid,
        name=name,
        directory=app_directory,
        script_file=fn.function_script_file,
        raw_bindings=list(fn.get_raw_bindings()),
        bindings=specs,
        retry=retry_options(name, fn.get_settings_dict("retry_policy")),
        loaded=loaded,
    )


def _source_file(user_function: Any, default: str) -> str:
    try:
        return inspect.getfile(user_function)
    except TypeError:
        return default


def _seconds(function_name: str, key: str, text: Any) -> int:
    try:
        parsed = time.strptime(str(text), "%H:%M:%S")
    except ValueError:
        raise ValueError(f"function {function_name}: @retry {key} {text!r} is not a duration \"HH:MM:SS\"") from None
    return parsed.tm_hour * 3600 + parsed.tm_min * 60 + parsed.tm_sec


def retry_options(function_name: str, settings: Mapping[str, Any] | None) -> RetryOptions | None:
    """RpcRetryOptions' values from the @retry setting (intervals "HH:MM:SS" -> seconds), checked."""
    if not settings:
        return None
    strategy = settings.get("strategy")
    if strategy not in RETRY_STRATEGIES:
        raise ValueError(f"function {function_name}: @retry strategy {strategy!r} is not one of {', '.join(RETRY_STRATEGIES)}")
    try:
        count = int(settings.get("max_retry_count"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(
            f"function {function_name}: @retry max_retry_count {settings.get('max_retry_count')!r} is not a whole number"
        ) from None
    keys = ("delay_interval",) if strategy == "fixed_delay" else ("minimum_interval", "maximum_interval")
    for key in keys:
        if settings.get(key) is None:
            raise ValueError(f"function {function_name}: @retry strategy {strategy} needs {' and '.join(keys)}")
    seconds = {key: _seconds(function_name, key, settings[key]) for key in keys}
    return RetryOptions(strategy=strategy, max_retry_count=count, **seconds)

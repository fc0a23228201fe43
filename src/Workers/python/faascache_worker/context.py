"""The `context` argument: a concrete func.Context for one invocation."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class TraceContext:
    trace_parent: str = ""
    trace_state: str = ""
    attributes: dict[str, str] = field(default_factory=dict)

    # The real library names these Traceparent/Tracestate/Attributes too.
    @property
    def Traceparent(self) -> str:  # noqa: N802
        return self.trace_parent

    @property
    def Tracestate(self) -> str:  # noqa: N802
        return self.trace_state

    @property
    def Attributes(self) -> dict[str, str]:  # noqa: N802
        return self.attributes


@dataclass(frozen=True)
class RetryContext:
    retry_count: int = 0
    max_retry_count: int = 0
    exception: Any = None


@lru_cache(maxsize=None)
def context_class(base: type) -> type:
    """InvocationContext as a subclass of the app's func.Context (ours or the real, abstract one)."""

    class InvocationContext(base):  # type: ignore[misc, valid-type]
        def __init__(
            self,
            invocation_id: str,
            function_name: str,
            function_directory: str,
            trace_context: TraceContext | None = None,
            retry_context: RetryContext | None = None,
        ) -> None:
            self._invocation_id = invocation_id
            self._function_name = function_name
            self._function_directory = function_directory
            self._trace_context = trace_context or TraceContext()
            self._retry_context = retry_context or RetryContext()
            self._thread_local_storage = threading.local()

        @property
        def invocation_id(self) -> str:
            return self._invocation_id

        @property
        def function_name(self) -> str:
            return self._function_name

        @property
        def function_directory(self) -> str:
            return self._function_directory

        @property
        def trace_context(self) -> TraceContext:
            return self._trace_context

        @property
        def retry_context(self) -> RetryContext:
            return self._retry_context

        @property
        def thread_local_storage(self) -> threading.local:
            return self._thread_local_storage

        def log(self, message: str, *args: Any, level: int = logging.INFO) -> None:
            """Logs to the host for this invocation (like Node's context.log; the logging module works too)."""
            logging.getLogger(f"Function.{self._function_name}.User").log(level, message, *args)

        def __repr__(self) -> str:
            return f"<Context {self._function_name} {self._invocation_id}>"

    InvocationContext.__module__ = __name__
    return InvocationContext

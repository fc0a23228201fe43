"""Sends Python log records to the host as RpcLog, tagged with the invocation that produced them.

The invocation id travels in a ContextVar: asyncio tasks inherit it, and the worker runs sync
functions in the thread pool inside a copy of the invocation's context.
"""

from __future__ import annotations

import contextvars
import logging
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Any

current_invocation: contextvars.ContextVar[str | None] = contextvars.ContextVar("faascache_invocation", default=None)

WORKER_LOGGER = "faascache_worker"


def rpc_level(levelno: int) -> str:
    if levelno >= logging.CRITICAL:
        return "Critical"
    if levelno >= logging.ERROR:
        return "Error"
    if levelno >= logging.WARNING:
        return "Warning"
    if levelno >= logging.INFO:
        return "Information"
    if levelno >= logging.DEBUG:
        return "Debug"
    return "Trace"


class RpcLogHandler(logging.Handler):
    """A logging handler whose `send` enqueues a StreamingMessage(rpc_log=...) (thread-safe, never blocks)."""

    def __init__(self, pb: ModuleType, request_id: str, send: Callable[[Any], None]) -> None:
        super().__init__(logging.NOTSET)
        self._pb = pb
        self._request_id = request_id
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        try:
            pb = self._pb
            system = record.name == WORKER_LOGGER or record.name.startswith(WORKER_LOGGER + ".")
            log = pb.RpcLog(
                invocation_id=current_invocation.get() or "",
                category=record.name,
                level=pb.RpcLog.Level.Value(rpc_level(record.levelno)),
                message=record.getMessage(),
                log_category=pb.RpcLog.RpcLogCategory.Value("System" if system else "User"),
            )
            if record.exc_info and record.exc_info[1] is not None:
                exc = record.exc_info[1]
                log.exception.CopyFrom(
                    pb.RpcException(
                        message=f"{type(exc).__name__}: {exc}",
                        stack_trace="".join(traceback.format_exception(*record.exc_info)),
                        type=type(exc).__qualname__,
                        is_user_exception=not system,
                    )
                )
            self._send(pb.StreamingMessage(request_id=self._request_id, rpc_log=log))
        except Exception:  # a log must never break the invocation that wrote it
            self.handleError(record)

"""The abstract types user code annotates with; the worker supplies the implementations."""

from __future__ import annotations

import abc
import datetime
import io
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Out(abc.ABC, Generic[T]):
    """An output binding: `out.set(value)` inside the function sends `value` to the binding.

    Unlike the real library's abstract `Out`, this one keeps the value itself, so tests of user code
    can pass `func.Out()` directly; the worker passes its own subclass."""

    def __init__(self) -> None:
        self._value: T | None = None

    def set(self, val: T) -> None:
        self._value = val

    def get(self) -> T:
        return self._value  # type: ignore[return-value]


class InputStream(io.BufferedIOBase, abc.ABC):
    """A read-only binary stream over a blob input, with the blob's name, length and uri."""

    @abc.abstractmethod
    def read(self, size: int | None = -1) -> bytes:
        """Reads and returns up to `size` bytes (all remaining bytes when `size` is -1 or None)."""

    @property
    @abc.abstractmethod
    def name(self) -> str | None:
        """The blob's path (container/name), when known."""

    @property
    @abc.abstractmethod
    def length(self) -> int | None:
        """The blob's size in bytes."""

    @property
    @abc.abstractmethod
    def uri(self) -> str | None:
        """The blob's primary location, when known."""


class TimerRequest(abc.ABC):
    """A timer trigger's invocation (the worker passes azure.functions.timer.TimerRequest)."""

    @property
    @abc.abstractmethod
    def past_due(self) -> bool:
        """Whether this invocation comes later than its schedule said (e.g. after the app was down)."""


class QueueMessage(abc.ABC):
    """A message of an Azure Storage queue: what a queue trigger receives (the worker passes
    azure.functions.queue.QueueMessage), or what a queue output sends."""

    @property
    @abc.abstractmethod
    def id(self) -> str | None:
        """The message id."""

    @abc.abstractmethod
    def get_body(self) -> bytes:
        """The message content."""

    @abc.abstractmethod
    def get_json(self) -> Any:
        """The message content decoded as JSON (ValueError when it is not JSON)."""

    @property
    @abc.abstractmethod
    def dequeue_count(self) -> int | None:
        """How many times the message has been dequeued."""

    @property
    @abc.abstractmethod
    def expiration_time(self) -> datetime.datetime | None:
        """When the message expires."""

    @property
    @abc.abstractmethod
    def insertion_time(self) -> datetime.datetime | None:
        """When the message was added to the queue."""

    @property
    @abc.abstractmethod
    def time_next_visible(self) -> datetime.datetime | None:
        """When the message becomes visible again."""

    @property
    @abc.abstractmethod
    def pop_receipt(self) -> str | None:
        """The pop receipt of this dequeue."""


class Context(abc.ABC):
    """What a function can learn about its invocation (declare a parameter named `context`)."""

    @property
    @abc.abstractmethod
    def invocation_id(self) -> str:
        """The invocation id."""

    @property
    @abc.abstractmethod
    def function_name(self) -> str:
        """The function's name."""

    @property
    @abc.abstractmethod
    def function_directory(self) -> str:
        """The folder holding the function's function.json."""

    @property
    def trace_context(self) -> Any:
        """W3C trace context of the invocation (trace_parent, trace_state, attributes)."""
        return None

    @property
    def retry_context(self) -> Any:
        """Retry count, max retry count and the exception that caused the retry."""
        return None

    @property
    def thread_local_storage(self) -> Any:
        """A threading.local of the thread running the invocation."""
        return None

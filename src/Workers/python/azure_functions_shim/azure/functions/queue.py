"""A queue message: what the worker passes to a queue-triggered function, and what a queue output can send.

As in the real library, azure.functions.queue.QueueMessage is the class the worker builds from the host's trigger
metadata; our azure.functions.QueueMessage is the same class (the real one's constructor takes id, body and
pop_receipt only, which this one accepts too)."""

from __future__ import annotations

import datetime
import json
from typing import Any

from ._abc import QueueMessage as _AbstractQueueMessage


class QueueMessage(_AbstractQueueMessage):
    """A queue message; `body` is str (encoded UTF-8) or bytes."""

    def __init__(self, *, id: str | None = None, body: str | bytes | bytearray | None = None,
                 dequeue_count: int | None = None, expiration_time: datetime.datetime | None = None,
                 insertion_time: datetime.datetime | None = None,
                 time_next_visible: datetime.datetime | None = None, pop_receipt: str | None = None) -> None:
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif body is None:
            body = b""
        elif not isinstance(body, (bytes, bytearray)):
            raise TypeError(f"a QueueMessage body is str, bytes or bytearray, not {type(body).__name__}")
        self.__id = id
        self.__body = bytes(body)
        self.__dequeue_count = dequeue_count
        self.__expiration_time = expiration_time
        self.__insertion_time = insertion_time
        self.__time_next_visible = time_next_visible
        self.__pop_receipt = pop_receipt

    @property
    def id(self) -> str | None:
        return self.__id

    def get_body(self) -> bytes:
        return self.__body

    def get_json(self) -> Any:
        return json.loads(self.__body)

    @property
    def dequeue_count(self) -> int | None:
        return self.__dequeue_count

    @property
    def expiration_time(self) -> datetime.datetime | None:
        return self.__expiration_time

    @property
    def insertion_time(self) -> datetime.datetime | None:
        return self.__insertion_time

    @property
    def time_next_visible(self) -> datetime.datetime | None:
        return self.__time_next_visible

    @property
    def pop_receipt(self) -> str | None:
        return self.__pop_receipt

    def __repr__(self) -> str:
        return (f"<azure.QueueMessage id={self.__id} dequeue_count={self.__dequeue_count} "
                f"insertion_time={self.__insertion_time} expiration_time={self.__expiration_time} at 0x{id(self):0x}>")

"""Azure Storage queue trigger and output bindings."""

from __future__ import annotations

from typing import Any

from .constants import QUEUE, QUEUE_TRIGGER
from .core import DataType, OutputBinding, Trigger


def _fields(kind: str, name: str, queue_name: str, connection: str) -> list[tuple[str, Any]]:
    if not isinstance(queue_name, str) or not queue_name.strip():
        raise ValueError(f"{kind} '{name}' needs a queue_name (the queue's name, or %AppSetting%), got {queue_name!r}")
    return [("queue_name", queue_name), ("connection", connection)]


class QueueTrigger(Trigger):
    @staticmethod
    def get_binding_name() -> str:
        return QUEUE_TRIGGER

    def __init__(self, name: str, queue_name: str, connection: str, data_type: DataType | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name, data_type, _fields("queue trigger", name, queue_name, connection), kwargs)


class QueueOutput(OutputBinding):
    @staticmethod
    def get_binding_name() -> str:
        return QUEUE

    def __init__(self, name: str, queue_name: str, connection: str, data_type: DataType | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name, data_type, _fields("queue output", name, queue_name, connection), kwargs)

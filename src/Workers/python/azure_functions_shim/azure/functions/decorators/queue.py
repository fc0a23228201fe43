"""Azure Storage queue trigger and output bindings."""

from __future__ import annotations

from typing import Any

from .constants import QUEUE, QUEUE_TRIGGER
from .core import DataType, OutputBinding, Trigger


class _QueueBinding:
    """What QueueTrigger and QueueOutput share: the queue's name (required) and the connection setting. It comes
    first among their bases; the next one, Trigger or OutputBinding, gives the direction."""

    def __init__(self, name: str, queue_name: str, connection: str, data_type: DataType | str | None = None,
                 **kwargs: Any) -> None:
        if not isinstance(queue_name, str) or not queue_name.strip():
            kind = "queue trigger" if isinstance(self, Trigger) else "queue output"
            raise ValueError(f"{kind} '{name}' needs a queue_name (the queue's name, or %AppSetting%), got {queue_name!r}")
        fields = [("queue_name", queue_name), ("connection", connection)]
        super().__init__(name, data_type, fields, kwargs)  # type: ignore[call-arg]


class QueueTrigger(_QueueBinding, Trigger):
    @staticmethod
    def get_binding_name() -> str:
        return QUEUE_TRIGGER


class QueueOutput(_QueueBinding, OutputBinding):
    @staticmethod
    def get_binding_name() -> str:
        return QUEUE

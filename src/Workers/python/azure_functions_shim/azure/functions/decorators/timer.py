"""Timer trigger (a CRON schedule)."""

from __future__ import annotations

from typing import Any

from .constants import TIMER_TRIGGER
from .core import DataType, Trigger


class TimerTrigger(Trigger):
    @staticmethod
    def get_binding_name() -> str:
        return TIMER_TRIGGER

    def __init__(self, name: str, schedule: str, run_on_startup: bool | None = None, use_monitor: bool | None = None,
                 data_type: DataType | str | None = None, **kwargs: Any) -> None:
        if not isinstance(schedule, str) or not schedule.strip():
            raise ValueError(f"timer trigger '{name}' needs a schedule (a CRON expression such as '0 */5 * * * *'), "
                             f"got {schedule!r}")
        fields = [("schedule", schedule), ("run_on_startup", run_on_startup), ("use_monitor", use_monitor)]
        super().__init__(name, data_type, fields, kwargs)

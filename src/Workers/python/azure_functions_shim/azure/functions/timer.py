"""The timer trigger's value: what the worker passes to a function decorated with @app.schedule."""

from __future__ import annotations

from typing import Any

from ._abc import TimerRequest as _AbstractTimerRequest


class TimerRequest(_AbstractTimerRequest):
    """The host's timer information: past_due, schedule_status and schedule (the JSON's IsPastDue,
    ScheduleStatus and Schedule)."""

    def __init__(self, *, past_due: bool = False, schedule_status: dict[str, Any] | None = None,
                 schedule: dict[str, Any] | None = None) -> None:
        self.__past_due = bool(past_due)
        self.__schedule_status = schedule_status or {}
        self.__schedule = schedule or {}

    @property
    def past_due(self) -> bool:
        return self.__past_due

    @property
    def schedule_status(self) -> dict[str, Any]:
        return self.__schedule_status

    @property
    def schedule(self) -> dict[str, Any]:
        return self.__schedule

    def __repr__(self) -> str:
        return f"<TimerRequest past_due={self.__past_due}>"

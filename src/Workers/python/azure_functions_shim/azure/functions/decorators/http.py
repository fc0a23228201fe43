"""HTTP trigger and output bindings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .constants import HTTP_OUTPUT, HTTP_TRIGGER
from .core import AuthLevel, DataType, OutputBinding, Trigger
from .utils import StringifyEnum


class HttpMethod(StringifyEnum):
    GET = "GET"
    POST = "POST"
    DELETE = "DELETE"
    HEAD = "HEAD"
    PATCH = "PATCH"
    PUT = "PUT"
    OPTIONS = "OPTIONS"


class HttpTrigger(Trigger):
    @staticmethod
    def get_binding_name() -> str:
        return HTTP_TRIGGER

    def __init__(self, name: str, methods: Iterable[HttpMethod] | None = None, data_type: DataType | str | None = None,
                 auth_level: AuthLevel | None = None, route: str | None = None, **kwargs: Any) -> None:
        fields = [("methods", None if methods is None else list(methods)), ("auth_level", auth_level), ("route", route)]
        super().__init__(name, data_type, fields, kwargs)


class HttpOutput(OutputBinding):
    @staticmethod
    def get_binding_name() -> str:
        return HTTP_OUTPUT

    def __init__(self, name: str, data_type: DataType | str | None = None, **kwargs: Any) -> None:
        super().__init__(name, data_type, (), kwargs)

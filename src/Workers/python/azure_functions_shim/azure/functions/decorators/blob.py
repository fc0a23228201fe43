"""Blob trigger, input and output bindings."""

from __future__ import annotations

from typing import Any

from .constants import BLOB, BLOB_TRIGGER
from .core import BlobSource, DataType, InputBinding, OutputBinding, Trigger


class BlobTrigger(Trigger):
    @staticmethod
    def get_binding_name() -> str:
        return BLOB_TRIGGER

    def __init__(self, name: str, path: str, connection: str, source: BlobSource | str | None = None,
                 data_type: DataType | str | None = None, **kwargs: Any) -> None:
        source_text = source.value if isinstance(source, BlobSource) else source
        super().__init__(name, data_type, [("path", path), ("connection", connection), ("source", source_text)], kwargs)


class BlobInput(InputBinding):
    @staticmethod
    def get_binding_name() -> str:
        return BLOB

    def __init__(self, name: str, path: str, connection: str, data_type: DataType | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name, data_type, [("path", path), ("connection", connection)], kwargs)


class BlobOutput(OutputBinding):
    @staticmethod
    def get_binding_name() -> str:
        return BLOB

    def __init__(self, name: str, path: str, connection: str, data_type: DataType | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name, data_type, [("path", path), ("connection", connection)], kwargs)

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


class _BlobBinding:
    """What BlobInput and BlobOutput share: the type "blob", the blob's path and the connection setting. It comes
    first among their bases; the next one, InputBinding or OutputBinding, gives the direction."""

    @staticmethod
    def get_binding_name() -> str:
        return BLOB

    def __init__(self, name: str, path: str, connection: str, data_type: DataType | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name, data_type, [("path", path), ("connection", connection)], kwargs)  # type: ignore[call-arg]


class BlobInput(_BlobBinding, InputBinding):
    """The blob at `path`, read for the function (@app.blob_input)."""


class BlobOutput(_BlobBinding, OutputBinding):
    """What the function sets, written to the blob at `path` (@app.blob_output)."""

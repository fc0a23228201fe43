"""Azure Storage queue bindings: the trigger's func.QueueMessage from the host's data and trigger metadata, and
what a queue output sends, as the real library's QueueMessageInConverter / QueueMessageOutConverter do.

Trigger (the host's wire format): the data is TypedData string (the message text) or bytes; the metadata has
QueueTrigger (the text), Id, DequeueCount (int), InsertionTime, ExpirationTime, NextVisibleTime (json: a quoted
ISO 8601 date) and PopReceipt. The message is built with azure.functions.queue.QueueMessage, a public class with
the same keywords in the real library and ours.

Output: str -> TypedData string, bytes -> bytes, a QueueMessage -> json {"id": ..., "body": ...}, a list (any
iterable) of str / QueueMessage -> a json array, one message each. Queue messages are at most 64 KiB, so they
always travel inline, never through shared memory (the cache would otherwise adopt a map that is not a blob).
"""

from __future__ import annotations

import datetime
import importlib
import json
import re
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

QUEUE_TRIGGER = "queuetrigger"
QUEUE_OUTPUT = "queue"

# .NET writes up to 7 fractional digits; Python takes 6.
_TOO_FRACTIONAL = re.compile(r"^(.*\.\d{6})\d+(.*)$")


class QueueBindingError(ValueError):
    """A queue message cannot be read or sent; the message names the binding, the field or the value."""


def is_queue_message(value: Any) -> bool:
    """A func.QueueMessage of either library, told by its public surface."""
    return callable(getattr(value, "get_body", None)) and hasattr(value, "id") and hasattr(value, "pop_receipt")


# ---- trigger ---------------------------------------------------------------------------------------

def _metadata_value(trigger_metadata: Mapping[str, Any], field: str) -> Any:
    """The plain value of one trigger metadata field (json decoded), or None when absent."""
    td = trigger_metadata.get(field)
    if td is None:
        return None
    which = td.WhichOneof("data")
    if which is None:
        return None
    value = getattr(td, which)
    if which == "json":
        try:
            return json.loads(value)
        except ValueError as e:
            raise QueueBindingError(f"trigger metadata {field!r} is not JSON ({e}): {value[:200]!r}") from e
    if which in ("bytes", "stream"):
        return value.decode("utf-8", errors="replace")
    return value


def _text_field(trigger_metadata: Mapping[str, Any], field: str) -> str | None:
    value = _metadata_value(trigger_metadata, field)
    return None if value is None else str(value)


def _int_field(trigger_metadata: Mapping[str, Any], field: str) -> int | None:
    value = _metadata_value(trigger_metadata, field)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise QueueBindingError(f"trigger metadata {field!r} is not an integer: {value!r}") from None


def parse_datetime(text: str) -> datetime.datetime:
    """An aware datetime from the host's ISO 8601 text (a time without an offset is UTC, as the host writes it)."""
    value = text.strip()
    match = _TOO_FRACTIONAL.match(value)
    if match:
        value = match.group(1) + match.group(2)
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    parsed = datetime.datetime.fromisoformat(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=datetime.timezone.utc)


def _datetime_field(trigger_metadata: Mapping[str, Any], field: str) -> datetime.datetime | None:
    value = _metadata_value(trigger_metadata, field)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise QueueBindingError(f"trigger metadata {field!r} is not a date: {value!r}")
    try:
        return parse_datetime(value)
    except ValueError:
        raise QueueBindingError(
            f"trigger metadata {field!r} is not an ISO 8601 date such as 2026-11-29T10:00:00+00:00: {value!r}"
        ) from None


def message_from_rpc(func_mod: ModuleType, name: str, kind: str, value: Any,
                     trigger_metadata: Mapping[str, Any] | None) -> Any:
    """azure.functions.queue.QueueMessage for a queue trigger's data (kind string or bytes) and metadata."""
    if kind in ("string", "json"):
        body: str | bytes = value if isinstance(value, str) else str(value, "utf-8")
    elif kind == "bytes":
        body = value if isinstance(value, bytes) else bytes(value)
    else:
        raise QueueBindingError(f"queue trigger '{name}' received {kind} data; expected the message as string or bytes")
    metadata = trigger_metadata or {}
    try:
        fields = {
            "id": _text_field(metadata, "Id"),
            "dequeue_count": _int_field(metadata, "DequeueCount"),
            "expiration_time": _datetime_field(metadata, "ExpirationTime"),
            "insertion_time": _datetime_field(metadata, "InsertionTime"),
            "time_next_visible": _datetime_field(metadata, "NextVisibleTime"),
            "pop_receipt": _text_field(metadata, "PopReceipt"),
        }
    except QueueBindingError as e:
        raise QueueBindingError(f"queue trigger '{name}': {e}") from None
    message_class = importlib.import_module(func_mod.__name__ + ".queue").QueueMessage
    return message_class(body=body, **fields)


# ---- output ----------------------------------------------------------------------------------------

def _as_json_message(message: Any, name: str) -> dict[str, Any]:
    body = message.get_body()
    try:
        text = body.decode("utf-8") if isinstance(body, (bytes, bytearray)) else str(body)
    except UnicodeDecodeError as e:
        raise QueueBindingError(
            f"queue output '{name}': a QueueMessage body must be UTF-8 text to be sent with its id ({e}); "
            "send bytes instead"
        ) from None
    return {"id": message.id, "body": text}


def encode_output(pb: ModuleType, name: str, value: Any) -> Any:
    """TypedData for what a queue output was set to."""
    if isinstance(value, str):
        return pb.TypedData(string=value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return pb.TypedData(bytes=bytes(value))
    if is_queue_message(value):
        return pb.TypedData(json=json.dumps(_as_json_message(value, name)))
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        messages: list[Any] = []
        for i, item in enumerate(value):
            if isinstance(item, str):
                messages.append(item)
            elif is_queue_message(item):
                messages.append(_as_json_message(item, name))
            else:
                raise QueueBindingError(
                    f"queue output '{name}': item {i} of the list is a {type(item).__name__}; a list of messages "
                    "holds str or func.QueueMessage"
                )
        return pb.TypedData(json=json.dumps(messages))
    hint = " (use json.dumps(value) to send it as one JSON message)" if isinstance(value, (Mapping, int, float)) else ""
    raise QueueBindingError(
        f"queue output '{name}' cannot send a {type(value).__name__}{hint}; set a str, bytes, func.QueueMessage "
        "or a list of str / func.QueueMessage"
    )

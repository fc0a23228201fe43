"""Bindings, triggers and settings of a function, and the enums their JSON uses.

A binding's JSON (one `raw_bindings` entry for the host) is what function.json would hold, built as the real
library builds it: "direction", "dataType", "type", "name", then the binding's own fields in the order its
constructor declares them, then any extra keyword arguments; keys camelCased, None values left out, enums by
NAME ("IN", "BINARY", "ANONYMOUS").
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any

from .utils import StringifyEnum, parse_enum, to_camel_case, without_nones

SCRIPT_FILE_NAME = "function_app.py"


class BindingDirection(StringifyEnum):
    IN = 0
    OUT = 1
    INOUT = 2


class DataType(StringifyEnum):
    """function.json "dataType": how the host hands the value over."""

    UNDEFINED = 0
    STRING = 1
    BINARY = 2
    STREAM = 3


class AuthLevel(StringifyEnum):
    """Which key, if any, an HTTP request needs."""

    FUNCTION = "function"
    ANONYMOUS = "anonymous"
    ADMIN = "admin"


class BlobSource(StringifyEnum):
    """Where a blob trigger learns of new blobs."""

    EVENT_GRID = "EventGrid"
    LOGS_AND_CONTAINER_SCAN = "LogsAndContainerScan"


# Constructor arguments that are never fields of the JSON (they have keys of their own or none).
_NOT_FIELDS = frozenset({"self", "kwargs", "type", "data_type", "direction", "name"})


class Binding(abc.ABC):
    """One binding of a function. `name` is the parameter (or "$return") it binds."""

    @staticmethod
    @abc.abstractmethod
    def get_binding_name() -> str:
        """The binding's type as function.json spells it ("blob", "httpTrigger", ...)."""

    def __init__(self, name: str, direction: BindingDirection, data_type: DataType | str | None = None,
                 fields: Iterable[tuple[str, Any]] = (), extra: dict[str, Any] | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.get_binding_name()} binding needs a non-empty name (the argument it binds), got {name!r}")
        self.type = self.get_binding_name()
        self.name = name
        self._direction = direction
        self._data_type = parse_enum(data_type, DataType)
        self._field_names: list[str] = []
        for key, value in fields:
            self._add_field(key, value)
        for key, value in (extra or {}).items():  # more fields for the JSON, after the declared ones
            if key in _NOT_FIELDS or key in self._field_names:
                continue
            if hasattr(self, key):
                raise ValueError(f"extra binding field {key!r} clashes with an attribute of {type(self).__name__}")
            self._add_field(key, value)

    def _add_field(self, key: str, value: Any) -> None:
        to_camel_case(key)  # a bad name fails here, when the decorator runs
        setattr(self, key, value)
        if key not in self._field_names:
            self._field_names.append(key)

    @property
    def direction(self) -> int:
        """0 in, 1 out, 2 inout (BindingInfo.Direction)."""
        return self._direction.value

    @property
    def data_type(self) -> int | None:
        """BindingInfo.DataType's number, or None when not given."""
        return self._data_type.value if self._data_type is not None else None

    def get_dict_repr(self) -> dict[str, Any]:
        """The binding as function.json holds it (enums still as members; json.dumps them by name)."""
        result: dict[str, Any] = {
            "direction": self._direction,
            "dataType": self._data_type,
            "type": self.type,
            "name": self.name,
        }
        for key in self._field_names:
            result[to_camel_case(key)] = getattr(self, key, None)
        return without_nones(result)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {self.get_dict_repr()}>"


class Trigger(Binding, abc.ABC):
    """The binding that starts the function: exactly one per function, direction in."""

    @staticmethod
    def is_supported_trigger_type(trigger: Trigger, trigger_type: type[Trigger]) -> bool:
        return isinstance(trigger, trigger_type) or trigger.type == trigger_type.get_binding_name()

    def __init__(self, name: str, data_type: DataType | str | None = None,
                 fields: Iterable[tuple[str, Any]] = (), extra: dict[str, Any] | None = None) -> None:
        super().__init__(name, BindingDirection.IN, data_type, fields, extra)


class InputBinding(Binding, abc.ABC):
    def __init__(self, name: str, data_type: DataType | str | None = None,
                 fields: Iterable[tuple[str, Any]] = (), extra: dict[str, Any] | None = None) -> None:
        super().__init__(name, BindingDirection.IN, data_type, fields, extra)


class OutputBinding(Binding, abc.ABC):
    def __init__(self, name: str, data_type: DataType | str | None = None,
                 fields: Iterable[tuple[str, Any]] = (), extra: dict[str, Any] | None = None) -> None:
        super().__init__(name, BindingDirection.OUT, data_type, fields, extra)


class Setting(abc.ABC):
    """Something about a function that is not a binding (its name, its retry policy). Keys stay snake_case."""

    def __init__(self, setting_name: str, fields: Iterable[tuple[str, Any]] = (),
                 extra: dict[str, Any] | None = None) -> None:
        self.setting_name = setting_name
        self._field_names: list[str] = []
        for key, value in [*fields, *(extra or {}).items()]:
            if key in ("self", "kwargs", "setting_name"):
                continue
            setattr(self, key, value)
            if key not in self._field_names:
                self._field_names.append(key)

    def get_setting_name(self) -> str:
        return self.setting_name

    def get_dict_repr(self) -> dict[str, Any]:
        result: dict[str, Any] = {"setting_name": self.setting_name}
        for key in self._field_names:
            result[key] = getattr(self, key, None)
        return without_nones(result)

    def get_settings_value(self, key: str) -> Any:
        return self.get_dict_repr().get(key)

"""Helpers of the decorator API: enums written by name, snake_case keys camelCased, None left out."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable
from typing import Any, TypeVar

E = TypeVar("E", bound=enum.Enum)

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class StringifyEnum(enum.Enum):
    """An enum whose text is its member's NAME: binding JSON says "IN", "BINARY", "ANONYMOUS", "GET"."""

    def __str__(self) -> str:
        return self.name


class StringifyEnumJsonEncoder(json.JSONEncoder):
    """json.dumps(..., cls=this) writes StringifyEnum members by name."""

    def default(self, o: Any) -> Any:
        if isinstance(o, StringifyEnum):
            return o.name
        return super().default(o)


def to_camel_case(key: str) -> str:
    """A binding parameter's name as function.json spells it: run_on_startup -> runOnStartup."""
    if not key or not _IDENTIFIER.match(key):
        raise ValueError(f"binding field name {key!r} is not a Python identifier in snake_case or one word")
    first, *rest = key.split("_")
    return first + "".join(word.title() for word in rest)


def without_nones(value: Any) -> Any:
    """The value with every None removed from its dicts and lists, recursively (optional fields stay out of the JSON)."""
    if isinstance(value, dict):
        return {k: without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nones(v) for v in value if v is not None]
    return value


def parse_enum(value: Any, enum_type: type[E], *, any_case: bool = True) -> E | None:
    """A member of enum_type from a member or its name (in any case, unless any_case is False); None stays None."""
    if value is None or isinstance(value, enum_type):
        return value
    if isinstance(value, str):
        member = enum_type.__members__.get(value.upper() if any_case else value)
        if member is not None:
            return member
    raise KeyError(
        f"Can not parse {value!r} to {enum_type.__name__}. Allowed values are {list(enum_type.__members__)}"
    )


def parse_enums(values: Iterable[Any] | None, enum_type: type[E]) -> list[E] | None:
    """A list of enum_type members from members or names; None stays None."""
    if values is None:
        return None
    if isinstance(values, str):
        raise TypeError(f"expected a list of {enum_type.__name__} values, got the string {values!r}")
    return [parse_enum(v, enum_type) for v in values]  # type: ignore[misc]

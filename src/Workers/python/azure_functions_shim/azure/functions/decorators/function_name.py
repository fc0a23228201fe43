"""@app.function_name: the function's name, when it is not the Python function's."""

from __future__ import annotations

from typing import Any

from .core import Setting

FUNCTION_NAME = "function_name"


class FunctionName(Setting):
    def __init__(self, function_name: str, **kwargs: Any) -> None:
        if not isinstance(function_name, str) or not function_name:
            raise ValueError(f"@function_name needs a non-empty name, got {function_name!r}")
        super().__init__(FUNCTION_NAME, [("function_name", function_name)], kwargs)

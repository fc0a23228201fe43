"""The v2 programming model's decorator API (FunctionApp, Blueprint and the enums their arguments take)."""

from .core import AuthLevel, BlobSource, DataType
from .function_app import (
    BindingApi,
    Blueprint,
    DecoratorApi,
    Function,
    FunctionApp,
    FunctionRegister,
    SettingsApi,
    TriggerApi,
)
from .http import HttpMethod

__all__ = [
    "AuthLevel",
    "BindingApi",
    "BlobSource",
    "Blueprint",
    "DataType",
    "DecoratorApi",
    "Function",
    "FunctionApp",
    "FunctionRegister",
    "HttpMethod",
    "SettingsApi",
    "TriggerApi",
]

"""The v2 programming model: `app = func.FunctionApp()`, decorators that describe each function's trigger,
bindings and settings, Blueprints, and `get_functions()`, which the worker calls when it indexes the app.

Decorators run bottom-up and each returns a FunctionBuilder (callable like the function), so the bindings
of a function are listed innermost decorator first, as in the real library.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Iterable
from typing import Any, Callable

from .blob import BlobInput, BlobOutput, BlobTrigger
from .core import SCRIPT_FILE_NAME, AuthLevel, Binding, BlobSource, DataType, Setting, Trigger
from .function_name import FUNCTION_NAME, FunctionName
from .http import HttpMethod, HttpOutput, HttpTrigger
from .queue import QueueOutput, QueueTrigger
from .retry_policy import RetryPolicy
from .timer import TimerTrigger
from .utils import StringifyEnumJsonEncoder, parse_enum, parse_enums

__all__ = [
    "AuthLevel", "BindingApi", "Blueprint", "BlobSource", "DataType", "DecoratorApi", "Function", "FunctionApp",
    "FunctionBuilder", "FunctionRegister", "SettingsApi", "TriggerApi",
]

# The storage account setting of queue bindings that name none (the real library requires one; the host's default).
DEFAULT_CONNECTION = "AzureWebJobsStorage"

SUPPORTED_DECORATORS = (
    "route", "blob_trigger", "timer_trigger", "schedule", "queue_trigger", "blob_input", "blob_output", "queue_output",
    "function_name", "retry", "http_type",
)
# Decorators of the real library that this one does not have: using one names the alternatives.
_REAL_ONLY_DECORATORS = frozenset({
    "orchestration_trigger", "entity_trigger", "activity_trigger", "warm_up_trigger", "service_bus_queue_trigger",
    "service_bus_topic_trigger", "event_hub_message_trigger", "cosmos_db_trigger_v3", "cosmos_db_trigger",
    "event_grid_trigger", "kafka_trigger", "sql_trigger", "generic_trigger",
    "dapr_service_invocation_trigger", "dapr_binding_trigger", "dapr_topic_trigger", "assistant_skill_trigger",
    "durable_client_input", "service_bus_queue_output", "service_bus_topic_output", "event_hub_output",
    "cosmos_db_output_v3", "cosmos_db_output", "cosmos_db_input_v3", "cosmos_db_input",
    "event_grid_output", "kafka_output", "table_input", "table_output", "sql_input", "sql_output",
    "generic_input_binding", "generic_output_binding", "dapr_state_input", "dapr_secret_input", "dapr_state_output",
    "dapr_invoke_output", "dapr_publish_output", "dapr_binding_output", "text_completion_input",
    "assistant_create_output", "assistant_query_input", "assistant_post_input", "embeddings_input",
    "semantic_search_input", "embeddings_store_output",
})


class Function:
    """One function of the app: the user's callable, its trigger, bindings and settings."""

    def __init__(self, func: Callable[..., Any], script_file: str) -> None:
        self._name: str = func.__name__
        self._func = func
        self._trigger: Trigger | None = None
        self._bindings: list[Binding] = []
        self._settings: list[Setting] = []
        self.function_script_file = script_file
        self.http_type = "function"
        self._is_http_function = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._func(*args, **kwargs)

    def __str__(self) -> str:
        return self.get_function_json()

    def add_binding(self, binding: Binding) -> None:
        self._bindings.append(binding)

    def add_trigger(self, trigger: Trigger) -> None:
        if self._trigger is not None:
            raise ValueError(
                f"A trigger was already registered to this function. Adding another trigger is not the correct "
                f"behavior as a function can only have one trigger. Existing registered trigger is "
                f"{self._trigger.get_dict_repr()} and New trigger being added is {trigger.get_dict_repr()}"
            )
        self._trigger = trigger
        self._bindings.append(trigger)  # function.json lists the trigger among the bindings

    def add_setting(self, setting: Setting) -> None:
        self._settings.append(setting)

    def set_http_type(self, http_type: str) -> None:
        self.http_type = http_type

    def is_http_function(self) -> bool:
        return self._is_http_function

    def get_trigger(self) -> Trigger | None:
        return self._trigger

    def get_bindings(self) -> list[Binding]:
        return self._bindings

    def get_setting(self, setting_name: str) -> Setting | None:
        return next((s for s in self._settings if s.setting_name == setting_name), None)

    def get_settings_dict(self, setting_name: str) -> dict[str, Any] | None:
        setting = self.get_setting(setting_name)
        return setting.get_dict_repr() if setting is not None else None

    def get_function_name(self) -> str:
        setting = self.get_setting(FUNCTION_NAME)
        return setting.get_settings_value(FUNCTION_NAME) if setting is not None else self._name

    def get_raw_bindings(self) -> list[str]:
        """Each binding as JSON text: what the worker sends as RpcFunctionMetadata.raw_bindings."""
        return [json.dumps(b.get_dict_repr(), cls=StringifyEnumJsonEncoder) for b in self._bindings]

    def get_bindings_dict(self) -> dict[str, Any]:
        return {"bindings": [b.get_dict_repr() for b in self._bindings]}

    def get_dict_repr(self) -> dict[str, Any]:
        return {"scriptFile": self.function_script_file, **self.get_bindings_dict()}

    def get_user_function(self) -> Callable[..., Any]:
        return self._func

    def get_function_json(self) -> str:
        return json.dumps(self.get_dict_repr(), cls=StringifyEnumJsonEncoder)


class FunctionBuilder:
    """What a decorator returns: collects a Function's parts; build() checks and completes it."""

    def __init__(self, func: Callable[..., Any], function_script_file: str) -> None:
        self._function = Function(func, function_script_file)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def configure_http_type(self, http_type: str) -> FunctionBuilder:
        self._function.set_http_type(http_type)
        return self

    def add_trigger(self, trigger: Trigger) -> FunctionBuilder:
        self._function.add_trigger(trigger)
        return self

    def add_binding(self, binding: Binding) -> FunctionBuilder:
        self._function.add_binding(binding)
        return self

    def add_setting(self, setting: Setting) -> FunctionBuilder:
        self._function.add_setting(setting)
        return self

    def build(self, auth_level: AuthLevel | str | None = None) -> Function:
        """The Function, after checking it has a trigger; an HTTP trigger without a route gets the function's
        name, and one without an auth level the app's."""
        function = self._function
        name = function.get_function_name()
        trigger = function.get_trigger()
        if trigger is None:
            raise ValueError(
                f"Function {name} does not have a trigger. A valid function must have one and only one trigger registered."
            )
        if Trigger.is_supported_trigger_type(trigger, HttpTrigger):
            if getattr(trigger, "route", None) is None:
                trigger.route = name  # type: ignore[attr-defined]
            if getattr(trigger, "auth_level", None) is None and auth_level is not None:
                trigger.auth_level = parse_enum(auth_level, AuthLevel)  # type: ignore[attr-defined]
            function._is_http_function = True
        return function


class DecoratorApi(abc.ABC):
    """What FunctionApp and Blueprint share: the list of functions being decorated."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._function_builders: list[FunctionBuilder] = []
        self._app_script_file: str = SCRIPT_FILE_NAME

    @property
    def app_script_file(self) -> str:
        return self._app_script_file

    def __getattr__(self, name: str) -> Any:
        if name in _REAL_ONLY_DECORATORS:
            raise AttributeError(
                f"{type(self).__name__}.{name} is a decorator of the azure-functions library that FaaSCache's own "
                f"azure.functions does not provide (it has {', '.join(SUPPORTED_DECORATORS)}); ship azure-functions "
                "in the app's .python_packages/lib/site-packages to use it"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _decorator(self, configure: Callable[[FunctionBuilder], Any]) -> Callable[[Any], FunctionBuilder]:
        """A decorator that applies `configure` to the function's builder (made on first use) and returns it."""

        def decorate(target: Any) -> FunctionBuilder:
            if isinstance(target, FunctionBuilder):
                builder = target
                if any(b is builder for b in self._function_builders):
                    self._function_builders = [b for b in self._function_builders if b is not builder]
            elif callable(target):
                builder = FunctionBuilder(target, self._app_script_file)
            else:
                raise ValueError("Unsupported type for function app decorator found.")
            self._function_builders.append(builder)
            configure(builder)
            return builder

        return decorate

    def function_name(self, name: str, setting_extra_fields: dict[str, Any] | None = None) -> Callable[..., Any]:
        """The function's name, instead of the Python function's."""
        return self._decorator(lambda fb: fb.add_setting(FunctionName(function_name=name, **(setting_extra_fields or {}))))

    def http_type(self, http_type: str) -> Callable[..., Any]:
        return self._decorator(lambda fb: fb.configure_http_type(http_type))


class TriggerApi(DecoratorApi, abc.ABC):
    def route(self, route: str | None = None, trigger_arg_name: str = "req", binding_arg_name: str = "$return",
              methods: Iterable[str | HttpMethod] | None = None, auth_level: AuthLevel | str | None = None,
              trigger_extra_fields: dict[str, Any] | None = None,
              binding_extra_fields: dict[str, Any] | None = None) -> Callable[..., Any]:
        """An HTTP trigger on /api/<route> (default: the function's name) and its response as `binding_arg_name`."""

        def configure(fb: FunctionBuilder) -> None:
            fb.add_trigger(HttpTrigger(
                name=trigger_arg_name, methods=parse_enums(methods, HttpMethod), auth_level=parse_enum(auth_level, AuthLevel),
                route=route, **(trigger_extra_fields or {}),
            ))
            fb.add_binding(HttpOutput(name=binding_arg_name, **(binding_extra_fields or {})))

        return self._decorator(configure)

    def timer_trigger(self, arg_name: str, schedule: str, run_on_startup: bool | None = None,
                      use_monitor: bool | None = None, data_type: DataType | str | None = None,
                      **kwargs: Any) -> Callable[..., Any]:
        """A timer trigger on a CRON `schedule`; the function gets a func.TimerRequest as `arg_name`."""
        return self._decorator(lambda fb: fb.add_trigger(TimerTrigger(
            name=arg_name, schedule=schedule, run_on_startup=run_on_startup, use_monitor=use_monitor,
            data_type=parse_enum(data_type, DataType), **kwargs,
        )))

    schedule = timer_trigger

    def blob_trigger(self, arg_name: str, path: str, connection: str, source: BlobSource | str | None = None,
                     data_type: DataType | str | None = None, **kwargs: Any) -> Callable[..., Any]:
        """A blob trigger on `path` ("container/{name}") in the account of the `connection` setting."""
        return self._decorator(lambda fb: fb.add_trigger(BlobTrigger(
            name=arg_name, path=path, connection=connection, source=source, data_type=parse_enum(data_type, DataType),
            **kwargs,
        )))

    def queue_trigger(self, arg_name: str, queue_name: str, connection: str = DEFAULT_CONNECTION,
                      data_type: DataType | str | None = None, **kwargs: Any) -> Callable[..., Any]:
        """A trigger on new messages of the Azure Storage queue `queue_name` in the account of the `connection`
        setting; the function gets a func.QueueMessage (or the text, when annotated str) as `arg_name`."""
        return self._decorator(lambda fb: fb.add_trigger(QueueTrigger(
            name=arg_name, queue_name=queue_name, connection=connection, data_type=parse_enum(data_type, DataType),
            **kwargs,
        )))


class BindingApi(DecoratorApi, abc.ABC):
    def blob_input(self, arg_name: str, path: str, connection: str, data_type: DataType | str | None = None,
                   **kwargs: Any) -> Callable[..., Any]:
        """The blob at `path` as the function's `arg_name` argument."""
        return self._decorator(lambda fb: fb.add_binding(BlobInput(
            name=arg_name, path=path, connection=connection, data_type=parse_enum(data_type, DataType), **kwargs,
        )))

    def blob_output(self, arg_name: str, path: str, connection: str, data_type: DataType | str | None = None,
                    **kwargs: Any) -> Callable[..., Any]:
        """What the function sets on `arg_name` (a func.Out, or "$return") is written to the blob at `path`."""
        return self._decorator(lambda fb: fb.add_binding(BlobOutput(
            name=arg_name, path=path, connection=connection, data_type=parse_enum(data_type, DataType), **kwargs,
        )))

    def queue_output(self, arg_name: str, queue_name: str, connection: str = DEFAULT_CONNECTION,
                     data_type: DataType | str | None = None, **kwargs: Any) -> Callable[..., Any]:
        """What the function sets on `arg_name` (a func.Out, or "$return") is added to the queue `queue_name`: a str,
        bytes, a func.QueueMessage, or a list of str / func.QueueMessage (one message each)."""
        return self._decorator(lambda fb: fb.add_binding(QueueOutput(
            name=arg_name, queue_name=queue_name, connection=connection, data_type=parse_enum(data_type, DataType),
            **kwargs,
        )))


class SettingsApi(DecoratorApi, abc.ABC):
    def retry(self, strategy: str, max_retry_count: str, delay_interval: str | None = None,
              minimum_interval: str | None = None, maximum_interval: str | None = None,
              setting_extra_fields: dict[str, Any] | None = None) -> Callable[..., Any]:
        """The host's retry policy for failed invocations: fixed_delay (delay_interval) or exponential_backoff
        (minimum_interval, maximum_interval), intervals as "HH:MM:SS"."""
        return self._decorator(lambda fb: fb.add_setting(RetryPolicy(
            strategy=strategy, max_retry_count=max_retry_count, delay_interval=delay_interval,
            minimum_interval=minimum_interval, maximum_interval=maximum_interval, **(setting_extra_fields or {}),
        )))


class FunctionRegister(DecoratorApi, abc.ABC):
    """A top-level app the worker indexes: exactly one per function_app.py."""

    def __init__(self, auth_level: AuthLevel | str, *args: Any, **kwargs: Any) -> None:
        DecoratorApi.__init__(self, *args, **kwargs)
        self._auth_level = parse_enum(auth_level, AuthLevel, any_case=False)

    @property
    def auth_level(self) -> AuthLevel:
        """The auth level of HTTP triggers that do not set their own."""
        return self._auth_level  # type: ignore[return-value]

    def get_functions(self) -> list[Function]:
        """Every function of the app (its own and its Blueprints'), built and checked; names must be unique."""
        functions = [builder.build(self.auth_level) for builder in self._function_builders]
        seen: set[str] = set()
        for function in functions:
            name = function.get_function_name()
            if name in seen:
                raise ValueError(
                    f"Function {name} does not have a unique function name. Please change @app.function_name() or "
                    "the function method name to be unique."
                )
            seen.add(name)
        return functions

    def register_functions(self, function_container: DecoratorApi) -> None:
        """Adds the functions of a Blueprint (or another DecoratorApi) to this app."""
        if isinstance(function_container, FunctionRegister):
            raise TypeError("functions can not be type of FunctionRegister!")
        if not isinstance(function_container, DecoratorApi):
            raise TypeError(
                f"register_functions expects a Blueprint, got {type(function_container).__name__}"
            )
        self._function_builders.extend(function_container._function_builders)

    register_blueprint = register_functions


class FunctionApp(FunctionRegister, TriggerApi, BindingApi, SettingsApi):
    """The app of function_app.py: `app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)`."""

    def __init__(self, http_auth_level: AuthLevel | str = AuthLevel.FUNCTION) -> None:
        super().__init__(auth_level=http_auth_level)


class Blueprint(TriggerApi, BindingApi, SettingsApi):
    """Functions declared apart (e.g. in another module) and added with app.register_functions(bp)."""

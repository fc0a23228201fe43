"""Our azure.functions' v2 decorators: the binding JSON they write is the real library's, string for string.

The expected strings are what azure-functions 1.22.0b4 wrote for the same declarations (the reference app of
worker-indexing.md §2, and the other literals below, produced by running that library)."""

from __future__ import annotations

import json

import pytest
from indexing_reference import COPY_BLOB_RAW_BINDINGS, ON_BLOB_RAW_BINDINGS


def reference_app(func):
    app = func.FunctionApp()

    @app.route(route="copy/{name}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
    @app.blob_input(arg_name="src", path="in/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
    @app.blob_output(arg_name="dst", path="out/{name}", connection="AzureWebJobsStorage")
    def copy_blob(req, src, dst):
        return f"copied {src}"

    bp = func.Blueprint()

    @bp.blob_trigger(arg_name="myblob", path="in/{name}", connection="AzureWebJobsStorage")
    def on_blob(myblob):
        return None

    return app, bp, copy_blob


def test_the_reference_app_gives_the_real_librarys_json(func):
    app, bp, copy_blob = reference_app(func)
    assert [f.get_function_name() for f in app.get_functions()] == ["copy_blob"]  # the Blueprint is not registered yet
    app.register_functions(bp)
    copy, on_blob = app.get_functions()
    assert copy.get_raw_bindings() == COPY_BLOB_RAW_BINDINGS
    assert on_blob.get_raw_bindings() == ON_BLOB_RAW_BINDINGS
    assert (copy.get_function_name(), on_blob.get_function_name()) == ("copy_blob", "on_blob")
    assert copy.function_script_file == on_blob.function_script_file == "function_app.py"
    # What the worker reads for RpcFunctionMetadata.bindings: BindingInfo's direction and data type numbers.
    assert [(b.name, b.type, b.direction, b.data_type) for b in copy.get_bindings()] == [
        ("dst", "blob", 1, None), ("src", "blob", 0, 2), ("req", "httpTrigger", 0, None), ("$return", "http", 1, None),
    ]
    assert copy.get_trigger().name == "req" and copy.is_http_function() and not on_blob.is_http_function()
    assert copy_blob("x", "blob", None) == "copied blob"  # a decorated function stays callable
    assert json.loads(str(copy))["scriptFile"] == "function_app.py"


def test_defaults_of_the_app_and_of_route(func):
    app = func.FunctionApp()  # http_auth_level FUNCTION

    @app.function_name("Hello")
    @app.route()
    def hello(req):
        return None

    anonymous = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)

    @anonymous.route(route="r", methods=[func.HttpMethod.POST, "put"], auth_level="admin")
    def explicit(req):
        return None

    @anonymous.route(trigger_arg_name="request", binding_arg_name="response")
    def named(request, response):
        return None

    (hello_fn,) = app.get_functions()
    assert hello_fn.get_raw_bindings() == [
        '{"direction": "IN", "type": "httpTrigger", "name": "req", "authLevel": "FUNCTION", "route": "Hello"}',
        '{"direction": "OUT", "type": "http", "name": "$return"}',
    ]
    explicit_fn, named_fn = anonymous.get_functions()
    assert explicit_fn.get_raw_bindings()[0] == (
        '{"direction": "IN", "type": "httpTrigger", "name": "req", "methods": ["POST", "PUT"], "authLevel": "ADMIN", '
        '"route": "r"}'
    )
    assert named_fn.get_raw_bindings() == [
        '{"direction": "IN", "type": "httpTrigger", "name": "request", "authLevel": "ANONYMOUS", "route": "named"}',
        '{"direction": "OUT", "type": "http", "name": "response"}',
    ]


def test_timer_retry_extra_fields_and_blob_source(func):
    """Literals from the real library for the same declarations."""
    app = func.FunctionApp()

    @app.function_name("Timer")
    @app.schedule(schedule="0 */5 * * * *", arg_name="tmr", run_on_startup=True, use_monitor=False)
    @app.retry(strategy="fixed_delay", max_retry_count="3", delay_interval="00:00:10")
    def timer(tmr):
        return None

    @app.route(methods=("post", func.HttpMethod.PUT), trigger_arg_name="r", binding_arg_name="res",
               trigger_extra_fields={"my_field": 1, "otherThing": [None, 2]}, binding_extra_fields={"x_y": None})
    def noop(r, res):
        return None

    @app.blob_trigger("t", "c/{n}", "Conn", source=func.BlobSource.EVENT_GRID, data_type="string", extra_one="e")
    @app.blob_output("$return", "o/{n}", "Conn", data_type=func.DataType.STRING)
    def trig(t):
        return None

    timer_fn, noop_fn, trig_fn = app.get_functions()
    assert timer_fn.get_function_name() == "Timer"
    assert timer_fn.get_raw_bindings() == [
        '{"direction": "IN", "type": "timerTrigger", "name": "tmr", "schedule": "0 */5 * * * *", "runOnStartup": true, '
        '"useMonitor": false}'
    ]
    assert timer_fn.get_settings_dict("retry_policy") == {
        "setting_name": "retry_policy", "strategy": "fixed_delay", "max_retry_count": "3", "delay_interval": "00:00:10",
    }
    assert noop_fn.get_raw_bindings() == [
        '{"direction": "IN", "type": "httpTrigger", "name": "r", "methods": ["POST", "PUT"], "authLevel": "FUNCTION", '
        '"route": "noop", "myField": 1, "otherThing": [2]}',
        '{"direction": "OUT", "type": "http", "name": "res"}',
    ]
    assert trig_fn.get_raw_bindings() == [
        '{"direction": "OUT", "dataType": "STRING", "type": "blob", "name": "$return", "path": "o/{n}", "connection": "Conn"}',
        '{"direction": "IN", "dataType": "STRING", "type": "blobTrigger", "name": "t", "path": "c/{n}", "connection": "Conn", '
        '"source": "EventGrid", "extraOne": "e"}',
    ]
    assert app.get_functions()[0].get_settings_dict("function_name") == {"setting_name": "function_name",
                                                                         "function_name": "Timer"}


def test_register_blueprint_is_register_functions(func):
    app = func.FunctionApp()
    bp = func.Blueprint()

    @bp.schedule(schedule="* * * * * *", arg_name="t")
    def every_second(t):
        return None

    app.register_blueprint(bp)
    assert [f.get_function_name() for f in app.get_functions()] == ["every_second"]
    assert isinstance(app, func.FunctionRegister) and not isinstance(bp, func.FunctionRegister)
    with pytest.raises(TypeError, match="functions can not be type of FunctionRegister!"):
        app.register_functions(func.FunctionApp())
    with pytest.raises(TypeError, match="expects a Blueprint, got list"):
        app.register_functions([])


def test_duplicate_names_no_trigger_and_two_triggers_are_refused(func):
    app = func.FunctionApp()

    @app.route(route="a")
    def same(req):
        return None

    bp = func.Blueprint()

    @bp.function_name("same")
    @bp.schedule(schedule="* * * * * *", arg_name="t")
    def other(t):
        return None

    app.register_functions(bp)
    with pytest.raises(ValueError, match="Function same does not have a unique function name. Please change "
                                         r"@app.function_name\(\) or the function method name to be unique."):
        app.get_functions()

    lonely = func.FunctionApp()

    @lonely.blob_input(arg_name="b", path="c/b", connection="AzureWebJobsStorage")
    def no_trigger(b):
        return None

    with pytest.raises(ValueError, match="Function no_trigger does not have a trigger. A valid function must have one "
                                         "and only one trigger registered."):
        lonely.get_functions()

    with pytest.raises(ValueError, match="A trigger was already registered to this function"):
        @app.route(route="b")
        @app.schedule(schedule="* * * * * *", arg_name="t")
        def two_triggers(req, t):
            return None


def test_bad_arguments_name_what_is_wrong(func):
    app = func.FunctionApp()
    with pytest.raises(KeyError, match=r"Can not parse 'binary-ish' to DataType. Allowed values are \['UNDEFINED', "
                                       r"'STRING', 'BINARY', 'STREAM'\]"):
        app.blob_input(arg_name="b", path="c/b", connection="AzureWebJobsStorage", data_type="binary-ish")(lambda b: b)
    with pytest.raises(KeyError, match="Can not parse 'FETCH' to HttpMethod"):
        app.route(methods=["FETCH"])(lambda req: req)
    with pytest.raises(TypeError, match="expected a list of HttpMethod values, got the string 'GET'"):
        app.route(methods="GET")(lambda req: req)
    # As the real library: the app's auth level is a member or its exact name.
    assert func.FunctionApp(http_auth_level="ANONYMOUS").auth_level is func.AuthLevel.ANONYMOUS
    with pytest.raises(KeyError, match="Can not parse 'anonymous' to AuthLevel"):
        func.FunctionApp(http_auth_level="anonymous")
    with pytest.raises(ValueError, match="needs a schedule"):
        app.schedule(schedule="", arg_name="t")(lambda t: t)
    with pytest.raises(ValueError, match="Unsupported type for function app decorator found."):
        app.route()(42)
    with pytest.raises(AttributeError, match="service_bus_queue_trigger is a decorator of the azure-functions library "
                                             "that FaaSCache's own azure.functions does not provide"):
        app.service_bus_queue_trigger
    with pytest.raises(AttributeError, match="object has no attribute 'no_such_thing'"):
        app.no_such_thing


def test_timer_request(func):
    from azure.functions.timer import TimerRequest

    assert issubclass(TimerRequest, func.TimerRequest)
    with pytest.raises(TypeError):
        func.TimerRequest()  # abstract, as in the real library
    timer = TimerRequest(past_due=True, schedule={"AdjustForDST": True})
    assert (timer.past_due, timer.schedule, timer.schedule_status) == (True, {"AdjustForDST": True}, {})

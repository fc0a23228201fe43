"""Worker indexing end to end: a worker process, started as the host starts it, indexes the v2 test app on
FunctionsMetadataRequest, loads by the ids it returned, and runs HTTP, blob-trigger and timer functions with blobs in
shared memory; an extra process indexes on its first load; function.json apps fall back to host indexing; apps that
cannot be indexed fail with the reason."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from conftest import write_host_map
from fake_host import APP, APP_V2, http_binding, read_map_file
from indexing_reference import COPY_BLOB_RAW_BINDINGS, FUNCTION_IDS, ON_BLOB_RAW_BINDINGS

from faascache_worker.shared_memory import MAP_FOLDER


def shared_memory_input(pb, name: str, map_name: str, count: int):
    return pb.ParameterBinding(
        name=name, rpc_shared_memory=pb.RpcSharedMemory(name=map_name, offset=0, count=count, type=pb.RpcDataType.Value("bytes"))
    )


def get_request(pb, route_name: str, **query: str):
    binding = http_binding(pb, body=b"", **query)
    binding.data.http.method = "GET"
    binding.data.http.params["name"] = route_name
    return binding


def test_the_v2_app_is_indexed_loaded_and_invoked(session_factory, pb, shm_root):
    s = session_factory(function_data_cache=True, app=APP_V2)
    response = s.metadata(APP_V2)
    assert response.result.status == pb.StatusResult.Success, response.result.exception.message
    assert not response.use_default_metadata_indexing
    functions = {m.name: m for m in response.function_metadata_results}
    assert sorted(functions) == ["Hello", "Tick", "copy_blob", "on_blob"]
    for name, m in functions.items():
        assert m.function_id == FUNCTION_IDS[name]
        assert (m.directory, m.script_file, m.entry_point, m.language) == (str(APP_V2), "function_app.py", name, "python")
        assert dict(m.properties) == {"worker_indexed": "True"} and not m.is_proxy
    copy = functions["copy_blob"]
    assert list(copy.raw_bindings) == COPY_BLOB_RAW_BINDINGS
    assert list(functions["on_blob"].raw_bindings) == ON_BLOB_RAW_BINDINGS
    described = {n: (b.type, pb.BindingInfo.Direction.Name(b.direction), pb.BindingInfo.DataType.Name(b.data_type))
                 for n, b in copy.bindings.items()}
    assert described == {"req": ("httpTrigger", "in", "undefined"), "$return": ("http", "out", "undefined"),
                         "src": ("blob", "in", "binary"), "dst": ("blob", "out", "undefined")}
    tick = functions["Tick"]
    assert tick.HasField("retry_options") and not copy.HasField("retry_options")
    assert tick.retry_options.max_retry_count == 2 and tick.retry_options.delay_interval.seconds == 5
    assert pb.RpcRetryOptions.RetryStrategy.Name(tick.retry_options.retry_strategy) == "fixed_delay"

    # Loads of indexed functions are no-ops that succeed.
    for m in functions.values():
        loaded = s.load_indexed(m)
        assert loaded.result.status == pb.StatusResult.Success, loaded.result.exception.message

    # HTTP with a blob input from the cachelet's map and a blob output into a new map.
    content = b"faast-v2-blob"
    input_map = write_host_map(shm_root, content)
    r = s.invoke(copy.function_id, get_request(pb, "a.txt"), shared_memory_input(pb, "src", input_map, len(content)))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    assert r.return_value.http.status_code == "201"
    assert json.loads(r.return_value.http.body.bytes) == {"read": len(content), "name": "a.txt", "zero_copy": True}
    (dst,) = r.output_data
    assert dst.name == "dst" and dst.WhichOneof("rpc_data") == "rpc_shared_memory"
    assert read_map_file(shm_root / MAP_FOLDER / dst.rpc_shared_memory.name) == content.upper()

    # The Blueprint's blob trigger (an async function), with the trigger metadata giving the stream its name.
    r = s.invoke(functions["on_blob"].function_id, shared_memory_input(pb, "myblob", input_map, len(content)),
                 trigger_metadata={"BlobTrigger": pb.TypedData(string="in/a.txt")})
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    assert any(log.message == f"on_blob in/a.txt: {len(content)} bytes" for log in s.host.logs)

    # The timer: TimerRequest from the host's JSON; its str $return goes to a blob through shared memory.
    timer_info = {"Schedule": {"AdjustForDST": True}, "ScheduleStatus": None, "IsPastDue": True}
    r = s.invoke(tick.function_id, pb.ParameterBinding(name="timer", data=pb.TypedData(json=json.dumps(timer_info))))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    (ret,) = r.output_data
    assert ret.name == "$return" and pb.RpcDataType.Name(ret.rpc_shared_memory.type) == "string"
    tick_map = shm_root / MAP_FOLDER / ret.rpc_shared_memory.name
    assert read_map_file(tick_map) == b'past_due=True schedule={"AdjustForDST": true}'

    # An HTTP function with the app's defaults, a context and a str answer.
    r = s.invoke(functions["Hello"].function_id, get_request(pb, "", who="ada"))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    assert r.return_value.string == "hello ada from Hello"

    outputs = [dst.rpc_shared_memory.name, ret.rpc_shared_memory.name]
    s.host.send(close_shared_memory_resources_request=pb.CloseSharedMemoryResourcesRequest(map_names=outputs))
    closed = s.host.expect("close_shared_memory_resources_response").close_shared_memory_resources_response
    assert dict(closed.close_map_results) == {name: True for name in outputs}
    assert s.terminate() == 0, s.worker_output()
    for name in outputs:  # adopted by the host's cache: the worker left them; the test (the host) removes them
        (shm_root / MAP_FOLDER / name).unlink()
    assert [p.name for p in (shm_root / MAP_FOLDER).iterdir()] == [input_map]


def test_an_extra_process_indexes_on_its_first_load(session_factory, pb, shm_root):
    first = session_factory(function_data_cache=False, app=APP_V2)
    functions = {m.name: m for m in first.metadata(APP_V2).function_metadata_results}
    assert first.terminate() == 0

    extra = session_factory(function_data_cache=False, app=APP_V2)  # the host sends it no metadata request
    loaded = extra.load_indexed(functions["copy_blob"])
    assert loaded.result.status == pb.StatusResult.Success, loaded.result.exception.message
    assert extra.load_indexed(functions["Hello"]).result.status == pb.StatusResult.Success
    input_map = write_host_map(shm_root, b"xyz")
    r = extra.invoke(functions["copy_blob"].function_id, get_request(pb, "b"), shared_memory_input(pb, "src", input_map, 3))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    (dst,) = r.output_data
    assert dst.data.bytes == b"XYZ"  # stock host, small output: inline

    # A worker-indexed load of a function the app does not have names it.
    stranger = type(functions["Hello"])()
    stranger.CopyFrom(functions["Hello"])
    stranger.name, stranger.function_id = "Gone", "no-such-id"
    failed = extra.load_indexed(stranger)
    assert failed.result.status == pb.StatusResult.Failure
    assert failed.result.exception.message == (
        f"cannot load function 'Gone': LookupError: function 'Gone' (id no-such-id) is not among the functions of "
        f"function_app.py in {APP_V2}"
    )
    assert extra.terminate() == 0, extra.worker_output()


def test_a_function_json_app_falls_back_to_host_indexing(session_factory, pb):
    s = session_factory(function_data_cache=False)
    response = s.metadata(APP)
    assert response.use_default_metadata_indexing and response.result.status == pb.StatusResult.Success
    assert not response.function_metadata_results
    assert s.load("HttpBlobCopy").result.status == pb.StatusResult.Success  # then the v1 loads, as today
    assert s.terminate() == 0, s.worker_output()


def test_apps_that_cannot_be_indexed_fail_with_the_reason(session_factory, pb, tmp_path):
    def app(name: str, code: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "function_app.py").write_text(textwrap.dedent(code))
        return folder

    cases = {
        "ValueError: Could not find top level function app instances in function_app.py.":
            app("no_app", "import azure.functions as func\n"),
        "ValueError: More than one FunctionApp or other top level function app instances are defined.":
            app("two_apps", "import azure.functions as func\na = func.FunctionApp()\nb = func.FunctionApp()\n"),
        "ModuleNotFoundError: No module named 'not_installed' (while importing":
            app("import_error", "import not_installed\n"),
        "ValueError: Function f does not have a unique function name.": app("duplicates", """
            import azure.functions as func
            app = func.FunctionApp()

            @app.route(route="a")
            def f(req):
                pass

            @app.function_name("f")
            @app.schedule(schedule="* * * * * *", arg_name="t")
            def g(t):
                pass
            """),
    }
    s = session_factory(function_data_cache=False)
    for message, folder in cases.items():
        response = s.metadata(folder)
        assert response.result.status == pb.StatusResult.Failure, folder
        assert response.result.exception.message.startswith(message), response.result.exception.message
        assert not response.function_metadata_results and not response.use_default_metadata_indexing
    assert s.terminate() == 0, s.worker_output()

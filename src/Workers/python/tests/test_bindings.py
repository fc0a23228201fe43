"""Binding conversions: what a function gets for each annotation, and how outputs travel back.

The input table shared with the Node worker (by dataType and annotation) is a conformance fixture:
../../conformance/input-decoding.json.
"""

from __future__ import annotations

import json
import mmap

import pytest
from conftest import write_host_map

from faascache_worker import bindings, loader
from faascache_worker.bindings import BindingError, OutputPolicy
from faascache_worker.shared_memory import MAP_FOLDER, SharedMemoryManager, SharedMemoryMap

BLOB_IN = loader.BindingSpec("blob", "blob", "in", "binary")


def shm_binding(pb, root, content: bytes, name: str = "blob", rpc_type: str = "bytes"):
    map_name = write_host_map(root, content)
    return map_name, pb.ParameterBinding(
        name=name,
        rpc_shared_memory=pb.RpcSharedMemory(
            name=map_name, offset=0, count=len(content), type=pb.RpcDataType.Value(rpc_type)
        ),
    )


def decode(pb, func, kind, binding, manager, spec=BLOB_IN, **kw):
    param = loader.ParamSpec(binding.name, kind, spec)
    return bindings.decode_input(pb, func, param, binding, invocation_id="inv", shm=manager, **kw)


@pytest.fixture
def manager(shm_root):
    m = SharedMemoryManager()
    yield m
    m.close_all(delete_created=True)


def test_shared_memory_input_as_memoryview_is_the_mapping(pb, func, shm_root, manager):
    _, b = shm_binding(pb, shm_root, b"payload")
    value = decode(pb, func, loader.KIND_MEMORYVIEW, b, manager)
    assert isinstance(value, memoryview) and isinstance(value.obj, mmap.mmap) and value.readonly
    assert value == b"payload"


def test_shared_memory_input_as_stream_reads_the_mapping(pb, func, shm_root, manager):
    map_name, b = shm_binding(pb, shm_root, b"stream me")
    stream = decode(pb, func, loader.KIND_STREAM, b, manager)
    assert isinstance(stream, func.InputStream)
    assert isinstance(stream.getbuffer().obj, mmap.mmap)
    assert stream.length == 9 and stream.read(6) == b"stream"
    stream.close()
    manager.release_invocation("inv")
    assert (shm_root / MAP_FOLDER / map_name).exists()  # the host's file is never deleted


def test_http_request_from_rpc_http(pb, func, manager):
    http = pb.RpcHttp(
        method="post",
        url="http://localhost:7071/api/f/7?name=x",
        headers={"Content-Type": "application/json"},
        body=pb.TypedData(bytes=b'{"a": 1}'),
        params={"id": "7"},
        query={"name": "x"},
    )
    b = pb.ParameterBinding(name="req", data=pb.TypedData(http=http))
    spec = loader.BindingSpec("req", "httpTrigger", "in")
    req = decode(pb, func, loader.KIND_HTTP, b, manager, spec=spec)
    assert isinstance(req, func.HttpRequest)
    assert req.method == "POST" and req.url.endswith("?name=x")
    assert req.headers["content-type"] == "application/json"
    assert req.params == {"name": "x"} and req.route_params == {"id": "7"}
    assert req.get_body() == b'{"a": 1}' and req.get_json() == {"a": 1}
    as_string = pb.RpcHttp(method="GET", url="u", body=pb.TypedData(string="é"))
    req2 = bindings.http_request_from_rpc(func, as_string)
    assert req2.get_body() == "é".encode()


def encode(pb, value, manager, policy=OutputPolicy(), spec=loader.BindingSpec("out", "blob", "out")):
    return bindings.encode_output(pb, "out", spec, value, policy=policy, shm=manager, invocation_id="inv")


def read_map(name: str) -> bytes:
    with SharedMemoryMap.open(name) as m:
        return bytes(m.view())


def test_small_output_without_host_cache_is_inline(pb, manager):
    td = encode(pb, b"small", manager)
    assert isinstance(td, pb.TypedData) and td.bytes == b"small"
    assert encode(pb, "text", manager).string == "text"
    assert encode(pb, bytearray(b"ba"), manager).bytes == b"ba"
    assert manager.created_names() == []


def test_any_output_goes_to_shared_memory_when_the_host_has_function_data_cache(pb, manager):
    policy = OutputPolicy(function_data_cache=True)
    region = encode(pb, b"tiny", manager, policy)
    assert isinstance(region, pb.RpcSharedMemory)
    assert (region.offset, region.count, pb.RpcDataType.Name(region.type)) == (0, 4, "bytes")
    assert read_map(region.name) == b"tiny"
    text = encode(pb, "naïve", manager, policy)
    assert pb.RpcDataType.Name(text.type) == "string" and read_map(text.name) == "naïve".encode()
    view = encode(pb, memoryview(b"view"), manager, policy)
    assert read_map(view.name) == b"view"


def test_large_output_uses_shared_memory_when_enabled(pb, manager):
    policy = OutputPolicy(shared_memory_enabled=True)
    assert isinstance(encode(pb, b"x" * 1024, manager, policy), pb.TypedData)
    region = encode(pb, b"y" * (1024 * 1024), manager, policy)
    assert isinstance(region, pb.RpcSharedMemory) and region.count == 1024 * 1024


def test_policy_from_host_capabilities_and_app_setting():
    assert OutputPolicy.from_host({"FunctionDataCache": "true"}, {}).function_data_cache
    assert not OutputPolicy.from_host({}, {}).function_data_cache
    assert OutputPolicy.from_host({}, {bindings.SHARED_MEMORY_SETTING: "1"}).shared_memory_enabled


def test_stream_output_is_written_from_its_buffer(pb, func, manager):
    stream = bindings.make_input_stream(func.InputStream, b"pass-through")
    stream.read(5)
    region = encode(pb, stream, manager, OutputPolicy(function_data_cache=True))
    assert read_map(region.name) == b"through"  # from the current position, as read() would give


def test_http_response_output(pb, func, manager):
    resp = func.HttpResponse("created", status_code=201, headers={"X-Id": "1"})
    td = encode(pb, resp, manager, spec=loader.BindingSpec("$return", "http", "out"))
    assert td.http.status_code == "201"
    assert td.http.body.bytes == b"created"
    assert td.http.headers["content-type"] == "text/plain; charset=utf-8"
    assert td.http.headers["x-id"] == "1"
    binary = func.HttpResponse(b"\x00", mimetype="application/octet-stream")
    assert encode(pb, binary, manager).http.headers["content-type"] == "application/octet-stream"
    assert encode(pb, "plain", manager, spec=loader.BindingSpec("r", "http", "out")).string == "plain"


def test_scalar_and_json_outputs(pb, manager):
    assert encode(pb, 7, manager).int == 7
    assert encode(pb, 2.5, manager).double == 2.5
    assert json.loads(encode(pb, {"a": [1]}, manager).json) == {"a": [1]}
    assert encode(pb, True, manager).json == "true"
    assert encode(pb, None, manager) is None


def test_unsupported_output_type_names_the_binding(pb, manager):
    with pytest.raises(BindingError, match="output 'out' cannot send a object"):
        encode(pb, object(), manager)


def test_out_box_is_a_func_out(func):
    box = bindings.out_class(func.Out)()
    assert isinstance(box, func.Out)
    box.set(b"v")
    assert box.get() == b"v"


def test_parameter_binding_wraps_either_form(pb):
    inline = bindings.to_parameter_binding(pb, "o", pb.TypedData(bytes=b"1"))
    assert inline.WhichOneof("rpc_data") == "data"
    region = bindings.to_parameter_binding(pb, "o", pb.RpcSharedMemory(name="n", count=1))
    assert region.WhichOneof("rpc_data") == "rpc_shared_memory"


def test_timer_input_from_the_hosts_json(pb, func, manager):
    spec = loader.BindingSpec("timer", "timerTrigger", "in")
    info = {"Schedule": {"AdjustForDST": True}, "ScheduleStatus": None, "IsPastDue": True}
    for data in (pb.TypedData(json=json.dumps(info)), pb.TypedData(string=json.dumps(info))):
        for kind in (loader.KIND_TIMER, loader.KIND_AUTO):
            timer = decode(pb, func, kind, pb.ParameterBinding(name="timer", data=data), manager, spec=spec)
            assert isinstance(timer, func.TimerRequest)
            assert (timer.past_due, timer.schedule, timer.schedule_status) == (True, {"AdjustForDST": True}, {})
    with pytest.raises(BindingError, match="timer trigger 'timer' received bytes data; expected the host's timer JSON"):
        decode(pb, func, loader.KIND_TIMER, pb.ParameterBinding(name="timer", data=pb.TypedData(bytes=b"{}")), manager,
               spec=spec)
    with pytest.raises(BindingError, match="timer trigger 'timer' received JSON that is not an object: '\\[1\\]'"):
        decode(pb, func, loader.KIND_TIMER, pb.ParameterBinding(name="timer", data=pb.TypedData(json="[1]")), manager,
               spec=spec)
    with pytest.raises(BindingError, match="timer trigger 'timer' received text that is not JSON"):
        decode(pb, func, loader.KIND_TIMER, pb.ParameterBinding(name="timer", data=pb.TypedData(string="soon")), manager,
               spec=spec)

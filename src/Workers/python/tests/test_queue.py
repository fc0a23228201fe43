"""Azure Storage queue bindings: func.QueueMessage, the v2 decorators' JSON, the trigger built from the host's data
and trigger metadata (the exact shapes the host sends), what queue outputs send, the loader's checks, and both
programming models end to end in a worker process."""

from __future__ import annotations

import datetime
import json
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import write_host_map

from faascache_worker import bindings, loader
from faascache_worker.bindings import BindingError, OutputPolicy
from faascache_worker.loader import BindingSpec, FunctionLoadError, FunctionMetadata
from faascache_worker.shared_memory import SharedMemoryManager

APPS = Path(__file__).resolve().parent / "apps"
QUEUE_APP = APPS / "queue_app"
QUEUE_V2_APP = APPS / "queue_v2_app"

TRIGGER = BindingSpec("msg", "queueTrigger", "in")
OUTPUT = BindingSpec("outq", "queue", "out")
UTC = datetime.timezone.utc


def host_metadata(pb, text: str = "hello queue") -> dict:
    """The trigger metadata of a queue message, as the host sends it."""
    return {
        "QueueTrigger": pb.TypedData(string=text),
        "Id": pb.TypedData(string="6c3a2f0e-1b7d-4c9a-9a53-0d5b1f3b2a11"),
        "DequeueCount": pb.TypedData(int=2),
        "InsertionTime": pb.TypedData(json='"2026-11-29T10:00:00+00:00"'),
        "ExpirationTime": pb.TypedData(json='"2026-12-06T10:00:00+00:00"'),
        "NextVisibleTime": pb.TypedData(json='"2026-11-29T10:10:00+00:00"'),
        "PopReceipt": pb.TypedData(string="AgAAAAMAAAAAAAAA"),
    }


def decode(pb, func, binding, *, kind=loader.KIND_AUTO, spec=TRIGGER, trigger_metadata=None, shm=None):
    param = loader.ParamSpec(binding.name, kind, spec)
    return bindings.decode_input(pb, func, param, binding, invocation_id="inv", shm=shm, trigger_metadata=trigger_metadata)


def encode(pb, value, *, spec=OUTPUT, policy=OutputPolicy(function_data_cache=True), shm=None):
    return bindings.encode_output(pb, spec.name, spec, value, policy=policy, shm=shm, invocation_id="inv")


# ---- func.QueueMessage ----------------------------------------------------------------------------------

def test_queue_message_has_the_real_librarys_surface(func):
    from azure.functions.queue import QueueMessage

    assert func.QueueMessage is QueueMessage
    when = datetime.datetime(2026, 11, 29, 10, tzinfo=UTC)
    m = func.QueueMessage(id="1", body="héllo", dequeue_count=3, expiration_time=when, insertion_time=when,
                          time_next_visible=when, pop_receipt="pr")
    assert m.get_body() == "héllo".encode("utf-8")
    assert (m.id, m.dequeue_count, m.expiration_time, m.insertion_time, m.time_next_visible, m.pop_receipt) == (
        "1", 3, when, when, when, "pr")
    assert func.QueueMessage(body=b'{"a": [1]}').get_json() == {"a": [1]}
    empty = func.QueueMessage()
    assert (empty.get_body(), empty.id, empty.dequeue_count, empty.insertion_time) == (b"", None, None, None)
    with pytest.raises(ValueError):
        func.QueueMessage(body="not json").get_json()
    with pytest.raises(TypeError, match="a QueueMessage body is str, bytes or bytearray, not int"):
        func.QueueMessage(body=42)
    with pytest.raises(TypeError):
        func.QueueMessage("positional")  # keyword-only, as in the real library
    assert "id=1" in repr(m)


# ---- the v2 decorators ----------------------------------------------------------------------------------

def test_queue_trigger_and_output_decorators_write_the_real_librarys_json(func):
    app = func.FunctionApp()

    @app.queue_trigger(arg_name="msg", queue_name="q", connection="AzureWebJobsStorage")
    @app.queue_output(arg_name="outq", queue_name="q2")
    def on_msg(msg, outq):
        return None

    bp = func.Blueprint()

    @bp.queue_trigger("item", "%InQueue%", "OtherStorage", data_type=func.DataType.STRING, batch_hint=4)
    @bp.queue_output("$return", "out", data_type="binary")
    def from_blueprint(item):
        return item

    app.register_functions(bp)
    first, second = app.get_functions()
    assert first.get_raw_bindings() == [
        '{"direction": "OUT", "type": "queue", "name": "outq", "queueName": "q2", "connection": "AzureWebJobsStorage"}',
        '{"direction": "IN", "type": "queueTrigger", "name": "msg", "queueName": "q", "connection": "AzureWebJobsStorage"}',
    ]
    assert second.get_raw_bindings() == [
        '{"direction": "OUT", "dataType": "BINARY", "type": "queue", "name": "$return", "queueName": "out", '
        '"connection": "AzureWebJobsStorage"}',
        '{"direction": "IN", "dataType": "STRING", "type": "queueTrigger", "name": "item", "queueName": "%InQueue%", '
        '"connection": "OtherStorage", "batchHint": 4}',
    ]
    assert first.get_trigger().name == "msg" and not first.is_http_function()
    assert [(b.name, b.direction, b.data_type) for b in second.get_bindings()] == [("$return", 1, 2), ("item", 0, 1)]
    with pytest.raises(ValueError, match="queue trigger 'm' needs a queue_name"):
        app.queue_trigger(arg_name="m", queue_name="")(lambda m: m)
    with pytest.raises(ValueError, match="queue output 'o' needs a queue_name"):
        app.queue_output(arg_name="o", queue_name=None)(lambda o: o)


# ---- the trigger ----------------------------------------------------------------------------------------

def test_a_queue_trigger_is_built_from_the_hosts_data_and_metadata(pb, func):
    from azure.functions.queue import QueueMessage

    binding = pb.ParameterBinding(name="msg", data=pb.TypedData(string="hello queue"))
    for kind in (loader.KIND_AUTO, loader.KIND_QUEUE):
        msg = decode(pb, func, binding, kind=kind, trigger_metadata=host_metadata(pb))
        assert isinstance(msg, QueueMessage) and isinstance(msg, func.QueueMessage)
        assert msg.get_body() == b"hello queue"
        assert msg.id == "6c3a2f0e-1b7d-4c9a-9a53-0d5b1f3b2a11"
        assert msg.dequeue_count == 2
        assert msg.insertion_time == datetime.datetime(2026, 11, 29, 10, tzinfo=UTC)
        assert msg.expiration_time == datetime.datetime(2026, 12, 6, 10, tzinfo=UTC)
        assert msg.time_next_visible == datetime.datetime(2026, 11, 29, 10, 10, tzinfo=UTC)
        assert msg.insertion_time.tzinfo is not None
        assert msg.pop_receipt == "AgAAAAMAAAAAAAAA"
    # The text as str, or its bytes.
    assert decode(pb, func, binding, kind=loader.KIND_STR, trigger_metadata=host_metadata(pb)) == "hello queue"
    assert decode(pb, func, binding, kind=loader.KIND_BYTES, trigger_metadata=host_metadata(pb)) == b"hello queue"
    # A bytes message.
    raw = pb.ParameterBinding(name="msg", data=pb.TypedData(bytes=b"\x00\xffbin"))
    assert decode(pb, func, raw, trigger_metadata=host_metadata(pb)).get_body() == b"\x00\xffbin"


def test_metadata_variants_dates_with_seven_digits_z_or_no_offset_and_missing_fields(pb, func):
    binding = pb.ParameterBinding(name="msg", data=pb.TypedData(string="x"))
    metadata = {
        "DequeueCount": pb.TypedData(json="5"),
        "InsertionTime": pb.TypedData(json='"2026-11-29T10:00:00.1234567+00:00"'),
        "ExpirationTime": pb.TypedData(string="2026-12-06T10:00:00Z"),
        "NextVisibleTime": pb.TypedData(json='"2026-11-29T10:10:00"'),
        "Id": pb.TypedData(json='"quoted-id"'),
    }
    msg = decode(pb, func, binding, trigger_metadata=metadata)
    assert msg.dequeue_count == 5 and msg.id == "quoted-id" and msg.pop_receipt is None
    assert msg.insertion_time == datetime.datetime(2026, 11, 29, 10, 0, 0, 123456, tzinfo=UTC)
    assert msg.expiration_time == datetime.datetime(2026, 12, 6, 10, tzinfo=UTC)
    assert msg.time_next_visible == datetime.datetime(2026, 11, 29, 10, 10, tzinfo=UTC)  # no offset: UTC
    offset = decode(pb, func, binding, trigger_metadata={"InsertionTime": pb.TypedData(json='"2026-11-29T12:00:00+02:00"')})
    assert offset.insertion_time == datetime.datetime(2026, 11, 29, 10, tzinfo=UTC)
    bare = decode(pb, func, binding, trigger_metadata={})
    assert (bare.get_body(), bare.id, bare.dequeue_count, bare.insertion_time) == (b"x", None, None, None)


def test_bad_queue_data_or_metadata_fails_naming_the_binding_and_the_field(pb, func):
    binding = pb.ParameterBinding(name="msg", data=pb.TypedData(string="x"))
    with pytest.raises(BindingError, match="queue trigger 'msg': trigger metadata 'InsertionTime' is not an ISO 8601 "
                                           "date such as 2026-11-29T10:00:00\\+00:00: 'yesterday'"):
        decode(pb, func, binding, trigger_metadata={"InsertionTime": pb.TypedData(json='"yesterday"')})
    with pytest.raises(BindingError, match="queue trigger 'msg': trigger metadata 'DequeueCount' is not an integer: 'many'"):
        decode(pb, func, binding, trigger_metadata={"DequeueCount": pb.TypedData(string="many")})
    with pytest.raises(BindingError, match="queue trigger 'msg': trigger metadata 'ExpirationTime' is not JSON"):
        decode(pb, func, binding, trigger_metadata={"ExpirationTime": pb.TypedData(json="{")})
    with pytest.raises(BindingError, match="queue trigger 'msg' received int data; expected the message as string or bytes"):
        decode(pb, func, pb.ParameterBinding(name="msg", data=pb.TypedData(int=3)), trigger_metadata={})


def test_a_queue_message_in_shared_memory(pb, func, shm_root):
    manager = SharedMemoryManager()
    try:
        map_name = write_host_map(shm_root, b"from a map")
        region = pb.RpcSharedMemory(name=map_name, offset=0, count=10, type=pb.RpcDataType.Value("string"))
        binding = pb.ParameterBinding(name="msg", rpc_shared_memory=region)
        msg = decode(pb, func, binding, trigger_metadata=host_metadata(pb), shm=manager)
        assert msg.get_body() == b"from a map" and type(msg.get_body()) is bytes
        assert decode(pb, func, binding, kind=loader.KIND_STR, shm=manager) == "from a map"
    finally:
        manager.close_all(delete_created=True)


def test_the_message_class_is_found_by_its_public_name_in_a_real_library(pb, tmp_path, monkeypatch):
    """The real library's azure.functions.QueueMessage takes id, body and pop_receipt only; the worker builds its
    azure.functions.queue.QueueMessage, which takes every field. A stand-in package with that layout proves it."""
    package = tmp_path / "real_like_functions"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent("""
        class QueueMessage:
            def __init__(self, *, id=None, body=None, pop_receipt=None):
                self.id, self.body, self.pop_receipt = id, body, pop_receipt
    """))
    (package / "queue.py").write_text(textwrap.dedent("""
        from . import QueueMessage as _Base

        class QueueMessage(_Base):
            def __init__(self, *, id=None, body=None, dequeue_count=None, expiration_time=None,
                         insertion_time=None, time_next_visible=None, pop_receipt=None):
                super().__init__(id=id, body=body, pop_receipt=pop_receipt)
                self.fields = (dequeue_count, expiration_time, insertion_time, time_next_visible)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import real_like_functions

    try:
        msg = decode(pb, real_like_functions, pb.ParameterBinding(name="msg", data=pb.TypedData(string="hi")),
                     trigger_metadata=host_metadata(pb))
        assert type(msg).__module__ == "real_like_functions.queue"
        assert (msg.id, msg.body, msg.pop_receipt) == ("6c3a2f0e-1b7d-4c9a-9a53-0d5b1f3b2a11", "hi", "AgAAAAMAAAAAAAAA")
        assert msg.fields[0] == 2 and msg.fields[2] == datetime.datetime(2026, 11, 29, 10, tzinfo=UTC)
    finally:
        for name in ("real_like_functions", "real_like_functions.queue"):
            sys.modules.pop(name, None)


# ---- outputs --------------------------------------------------------------------------------------------

def test_queue_outputs_are_encoded_as_the_real_librarys_converter_does(pb, func):
    assert encode(pb, "text") == pb.TypedData(string="text")
    assert encode(pb, b"\x00bytes") == pb.TypedData(bytes=b"\x00bytes")
    assert encode(pb, bytearray(b"ba")) == pb.TypedData(bytes=b"ba")
    assert json.loads(encode(pb, func.QueueMessage(id="m1", body="héllo")).json) == {"id": "m1", "body": "héllo"}
    assert json.loads(encode(pb, func.QueueMessage(body=b"b")).json) == {"id": None, "body": "b"}
    many = encode(pb, ["a", func.QueueMessage(id="2", body="b")])
    assert json.loads(many.json) == ["a", {"id": "2", "body": "b"}]
    assert json.loads(encode(pb, (f"m{i}" for i in range(3))).json) == ["m0", "m1", "m2"]
    assert json.loads(encode(pb, ("x",)).json) == ["x"]
    assert json.loads(encode(pb, []).json) == []
    assert encode(pb, None) is None
    ret = BindingSpec("$return", "queue", "out")
    assert encode(pb, "returned", spec=ret) == pb.TypedData(string="returned")


def test_queue_outputs_never_go_through_shared_memory(pb):
    big = "q" * (2 * 1024 * 1024)  # over the 1 MiB shared-memory threshold
    for policy in (OutputPolicy(function_data_cache=True), OutputPolicy(shared_memory_enabled=True)):
        assert encode(pb, big, policy=policy).string == big
        assert encode(pb, big.encode(), policy=policy).bytes == big.encode()


def test_what_a_queue_output_cannot_send_is_named(pb):
    with pytest.raises(BindingError, match="queue output 'outq' cannot send a dict \\(use json.dumps\\(value\\) to send it "
                                           "as one JSON message\\); set a str, bytes, func.QueueMessage or a list"):
        encode(pb, {"a": 1})
    with pytest.raises(BindingError, match="queue output 'outq' cannot send a int"):
        encode(pb, 7)
    with pytest.raises(BindingError, match="queue output 'outq': item 1 of the list is a int; a list of messages holds str "
                                           "or func.QueueMessage"):
        encode(pb, ["a", 1])


# ---- loading --------------------------------------------------------------------------------------------

def load(app: Path, name: str, code: str, specs: dict[str, BindingSpec]) -> loader.LoadedFunction:
    folder = app / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent(code))
    meta = FunctionMetadata(function_id=f"id-{name}", name=name, directory=str(folder), bindings=specs)
    return loader.load_function(meta, str(app))


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return tmp_path / f"app_{tmp_path.name}"


def test_queue_annotations_that_load(app):
    both = {"msg": TRIGGER, "outq": OUTPUT}
    header = "import typing\nimport azure.functions as func\n"
    cases = {
        "Message": ("msg: func.QueueMessage, outq: func.Out[str]", ["queue", "out"]),
        "Text": ("msg: str, outq: func.Out[bytes]", ["str", "out"]),
        "Raw": ("msg: bytes, outq: func.Out[func.QueueMessage]", ["bytes", "out"]),
        "Bare": ("msg, outq", ["queue", "out"]),
        "ListOfText": ("msg, outq: func.Out[typing.List[str]]", ["queue", "out"]),
        "ListOfMessages": ("msg, outq: func.Out[typing.List[func.QueueMessage]]", ["queue", "out"]),
        "BuiltinList": ("msg, outq: func.Out[list[str]]", ["queue", "out"]),
        "RealSubclass": ("msg: func.queue.QueueMessage, outq: func.Out", ["queue", "out"]),
    }
    for name, (params, kinds) in cases.items():
        imports = header + ("import azure.functions.queue\n" if "func.queue" in params else "")
        code = imports + f"def main({params}):\n    pass\n"
        assert [p.kind for p in load(app, name, code, both).params] == kinds, name


def test_wrong_queue_annotations_fail_naming_the_function_parameter_and_what_to_annotate(app):
    header = "import typing\nimport azure.functions as func\n"
    with pytest.raises(FunctionLoadError, match="cannot load function 'Http': queue trigger 'msg' is annotated HttpRequest; "
                                                "annotate it func.QueueMessage \\(or str for the message text\\)"):
        load(app, "Http", header + "def main(msg: func.HttpRequest):\n    pass\n", {"msg": TRIGGER})
    with pytest.raises(FunctionLoadError, match="queue trigger 'msg' is annotated InputStream; annotate it func.QueueMessage"):
        load(app, "Stream", header + "def main(msg: func.InputStream):\n    pass\n", {"msg": TRIGGER})
    with pytest.raises(FunctionLoadError, match="queue trigger 'msg' is annotated dict; annotate it func.QueueMessage"):
        load(app, "Dict", header + "def main(msg: dict):\n    pass\n", {"msg": TRIGGER})
    with pytest.raises(FunctionLoadError, match="cannot load function 'Table': parameter 't' is annotated func.QueueMessage "
                                                "but binding 't' is a table, not a queueTrigger"):
        load(app, "Table", header + "def main(t: func.QueueMessage):\n    pass\n", {"t": BindingSpec("t", "table", "in")})
    with pytest.raises(FunctionLoadError, match="blob binding 'b' cannot be passed as QueueMessage"):
        load(app, "OnBlob", header + "def main(b: func.QueueMessage):\n    pass\n", {"b": BindingSpec("b", "blobTrigger", "in")})
    with pytest.raises(FunctionLoadError, match="cannot load function 'OutInt': queue output 'outq' is annotated "
                                                "func.Out\\[int\\]; annotate it func.Out\\[str\\], func.Out\\[bytes\\], "
                                                "func.Out\\[func.QueueMessage\\] or func.Out\\[typing.List\\[str\\]\\]"):
        load(app, "OutInt", header + "def main(msg, outq: func.Out[int]):\n    pass\n", {"msg": TRIGGER, "outq": OUTPUT})
    with pytest.raises(FunctionLoadError, match="queue output 'outq' is annotated func.Out\\[typing.List\\[int\\]\\]"):
        load(app, "OutListInt", header + "def main(msg, outq: func.Out[typing.List[int]]):\n    pass\n",
             {"msg": TRIGGER, "outq": OUTPUT})
    with pytest.raises(FunctionLoadError, match="binding 'outq' has direction \"out\" in function.json, so its parameter must "
                                                "be annotated func.Out"):
        load(app, "NotOut", header + "def main(msg, outq: func.QueueMessage):\n    pass\n", {"msg": TRIGGER, "outq": OUTPUT})


# ---- end to end -----------------------------------------------------------------------------------------

def test_function_json_queue_functions_in_a_worker_process(session_factory, pb):
    s = session_factory(function_data_cache=True, app=QUEUE_APP)
    for name in ("OnQueue", "OnQueueMany"):
        loaded = s.load(name, app=QUEUE_APP)
        assert loaded.result.status == pb.StatusResult.Success, loaded.result.exception.message

    r = s.invoke("id-OnQueue", pb.ParameterBinding(name="msg", data=pb.TypedData(string="hello queue")),
                 trigger_metadata=host_metadata(pb))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    (out,) = r.output_data
    assert out.name == "outq" and out.WhichOneof("rpc_data") == "data" and out.data.WhichOneof("data") == "string"
    assert json.loads(out.data.string) == {
        "id": "6c3a2f0e-1b7d-4c9a-9a53-0d5b1f3b2a11", "body": "hello queue", "dequeue_count": 2,
        "insertion_time": "2026-11-29T10:00:00+00:00", "expiration_time": "2026-12-06T10:00:00+00:00",
        "time_next_visible": "2026-11-29T10:10:00+00:00", "pop_receipt": "AgAAAAMAAAAAAAAA",
        "class": "azure.functions.queue.QueueMessage",
    }
    assert json.loads(r.return_value.json) == {"id": "reply-1", "body": "re: hello queue"}

    r = s.invoke("id-OnQueueMany", pb.ParameterBinding(name="text", data=pb.TypedData(bytes=b"job")),
                 trigger_metadata=host_metadata(pb, "job"))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    outputs = {o.name: o.data for o in r.output_data}
    assert json.loads(outputs["outq"].json) == ["job-0", "job-1", "job-2"]
    assert outputs["raw"].bytes == b"job"
    assert not r.HasField("return_value") or r.return_value.WhichOneof("data") is None


def test_a_v2_queue_function_is_indexed_and_invoked(session_factory, pb):
    s = session_factory(function_data_cache=True, app=QUEUE_V2_APP)
    response = s.metadata(QUEUE_V2_APP)
    assert response.result.status == pb.StatusResult.Success, response.result.exception.message
    (fn,) = response.function_metadata_results
    assert fn.name == "OnOrder"
    assert list(fn.raw_bindings) == [
        '{"direction": "OUT", "type": "queue", "name": "outq", "queueName": "shipments", "connection": "AzureWebJobsStorage"}',
        '{"direction": "IN", "type": "queueTrigger", "name": "msg", "queueName": "orders", "connection": "AzureWebJobsStorage"}',
    ]
    assert {n: (b.type, pb.BindingInfo.Direction.Name(b.direction)) for n, b in fn.bindings.items()} == {
        "msg": ("queueTrigger", "in"), "outq": ("queue", "out")}
    assert s.load_indexed(fn).result.status == pb.StatusResult.Success

    r = s.invoke(fn.function_id, pb.ParameterBinding(name="msg", data=pb.TypedData(string='{"id": 41}')),
                 trigger_metadata=host_metadata(pb, '{"id": 41}'))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    (out,) = r.output_data
    assert out.name == "outq"
    assert json.loads(out.data.json) == {"id": None, "body": '{"ship": 41, "dequeued": 2}'}

    bad = s.invoke(fn.function_id, pb.ParameterBinding(name="msg", data=pb.TypedData(string="{}")),
                   trigger_metadata={"InsertionTime": pb.TypedData(json='"not a date"')})
    assert bad.result.status == pb.StatusResult.Failure
    assert "queue trigger 'msg': trigger metadata 'InsertionTime' is not an ISO 8601 date" in bad.result.exception.message

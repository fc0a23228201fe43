"""The cross-language conformance fixtures (src/Workers/conformance/*.json and real-workers/*.json), run against this
worker.

The Node worker's test/conformance.test.js runs the same files; ../conformance/README.md describes them.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import WORKER_DIR, function_load_request, indexed_load_request, write_host_map
from google.protobuf import json_format

from faascache_worker import bindings, loader
from faascache_worker.bindings import BindingError
from faascache_worker.cli import WorkerArgs
from faascache_worker.dispatcher import Dispatcher
from faascache_worker.shared_memory import MAP_FOLDER, SharedMemoryError, SharedMemoryManager, parse_header

LANGUAGE = "python"
CONFORMANCE = WORKER_DIR.parent / "conformance"
APPS = CONFORMANCE / "apps"
APPS_V2 = CONFORMANCE / "apps-v2"  # a v2 app (function_app.py) for the worker-indexing fixtures
REAL_WORKERS = CONFORMANCE / "real-workers"  # the real workers' conversations and their apps
KINDS = ("map_headers", "input_decoding", "message_scripts", "conversations")
TIMEOUT = 10.0

ANNOTATIONS = {
    "none": loader.KIND_AUTO,
    "bytes": loader.KIND_BYTES,
    "str": loader.KIND_STR,
    "memoryview": loader.KIND_MEMORYVIEW,
    "func.InputStream": loader.KIND_STREAM,
    "func.HttpRequest": loader.KIND_HTTP,
}


# ---- the fixture files -------------------------------------------------------------------------------

def fixture_files() -> list[tuple[Path, dict[str, Any]]]:
    paths = sorted(CONFORMANCE.glob("*.json")) + sorted(REAL_WORKERS.glob("*.json"))
    return [(path, json.loads(path.read_text(encoding="utf-8"))) for path in paths]


def cases(kind: str, section: str = "cases") -> list[Any]:
    """Every case of `kind` in every fixture file that applies to this language, as pytest params."""
    found = []
    for path, fixture in fixture_files():
        if fixture.get("kind") != kind:
            continue
        for case in fixture.get(section, []):
            if LANGUAGE in case.get("languages", [LANGUAGE]):
                found.append(pytest.param(case, id=f"{path.stem}: {case['name']}"))
    return found


def test_every_fixture_file_is_of_a_known_kind():
    files = fixture_files()
    assert files, f"no fixture files in {CONFORMANCE}"
    assert any(path.parent == REAL_WORKERS for path, _ in files), f"no fixture files in {REAL_WORKERS}"
    for path, fixture in files:
        assert fixture.get("kind") in KINDS, f"{path.name}: kind {fixture.get('kind')!r} is not one of {KINDS}"


def for_language(value: Any) -> Any:
    """A {"python": ..., "node": ...} pair's entry for this language; anything else as it is."""
    if isinstance(value, dict) and value and set(value) <= {"python", "node"}:
        return value[LANGUAGE]
    return value


def error_texts(spec: Any) -> list[str]:
    """The substrings an error message must hold: a string, a per-language pair, or a list of those."""
    return [for_language(item) for item in (spec if isinstance(spec, list) else [spec])]


def assert_error(error: BaseException, spec: Any) -> None:
    for text in error_texts(spec):
        assert text in str(error), f"expected {text!r} in the error: {error}"


def content_of(spec: dict[str, Any]) -> bytes:
    if "repeat" in spec:
        return (spec["repeat"] * spec["times"]).encode("utf-8")
    return spec["utf8"].encode("utf-8")


# ---- map headers -------------------------------------------------------------------------------------

def write_raw_map(root: Path, raw: bytes, name: str) -> str:
    (root / MAP_FOLDER / name).write_bytes(raw)
    return name


@pytest.mark.parametrize("case", cases("map_headers"))
def test_map_header(case, shm_root):
    raw = bytes.fromhex(case["file_hex"].replace(" ", ""))
    name = write_raw_map(shm_root, raw, "conformance-map")
    if "error" in case:
        with pytest.raises(SharedMemoryError) as parsed:
            parse_header(name, raw, len(raw))
        assert_error(parsed.value, case["error"])
    else:
        assert parse_header(name, raw, len(raw)) == case["content_length"]
    manager = SharedMemoryManager()
    try:
        for region in case["regions"]:
            error = region.get("error", case.get("error"))
            if error is not None:
                with pytest.raises(SharedMemoryError) as opened:
                    manager.open_input("inv", name, region["offset"], region["count"])
                assert_error(opened.value, error)
            else:
                view = manager.open_input("inv", name, region["offset"], region["count"])
                assert bytes(view) == content_of(region)
    finally:
        manager.release_invocation("inv")


@pytest.mark.parametrize("case", cases("map_headers", "names"))
def test_map_name(case, shm_root):
    with pytest.raises(SharedMemoryError) as opened:
        SharedMemoryManager().open_input("inv", case["map_name"], 0, 0)
    assert_error(opened.value, case["error"])


# ---- input decoding ----------------------------------------------------------------------------------

def to_wire_json(value: Any) -> Any:
    """A fixture's message JSON as proto3 JSON: {"$utf8": text} becomes the base64 of the text's bytes."""
    if isinstance(value, dict):
        if set(value) == {"$utf8"}:
            return base64.b64encode(value["$utf8"].encode("utf-8")).decode("ascii")
        return {k: to_wire_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_wire_json(v) for v in value]
    return value


def invocation_input(pb: Any, case: dict[str, Any], root: Path) -> Any:
    """The InvocationRequest carrying the case's input as ParameterBinding 'x' (and its trigger metadata)."""
    source = case["input"]
    binding: dict[str, Any] = {"name": "x"}
    if "shared_memory" in source:
        region = source["shared_memory"]
        content = content_of(region)
        binding["rpc_shared_memory"] = {
            "name": write_host_map(root, content), "offset": 0, "count": len(content), "type": region["type"],
        }
    elif "data" in source:
        binding["data"] = source["data"]
    request = {"invocation_id": "inv", "input_data": [binding], "trigger_metadata": case.get("trigger_metadata", {})}
    return json_format.ParseDict(to_wire_json(request), pb.InvocationRequest())


def describe(func: Any, value: Any) -> dict[str, Any]:
    """The language-neutral shape of what a function received (see the fixtures' README)."""
    if isinstance(value, func.InputStream):
        through_buffer = bytes(value.getbuffer())
        read = value.read()
        assert read == through_buffer, "read() and getbuffer() disagree"
        return {"type": "stream", "utf8": read.decode("utf-8"), "length": value.length, "name": value.name, "uri": value.uri}
    if isinstance(value, func.HttpRequest):
        return {"type": "http", "method": value.method, "url": value.url}
    if type(value) is bytes:
        return {"type": "binary", "utf8": value.decode("utf-8")}
    if isinstance(value, memoryview):
        return {"type": "view", "utf8": bytes(value).decode("utf-8")}
    if isinstance(value, str):
        return {"type": "text", "value": value}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"type": "number", "value": value}
    if isinstance(value, (list, dict)):
        return {"type": "json", "value": value}
    if value is None:
        return {"type": "none"}
    raise AssertionError(f"the function received a {type(value).__name__}, which no fixture shape describes: {value!r}")


@pytest.mark.parametrize("case", cases("input_decoding"))
def test_input_decoding(case, pb, func, shm_root):
    request = invocation_input(pb, case, shm_root)
    declared = case["binding"]
    spec = None if declared is None else loader.BindingSpec("x", declared["type"], "in", declared["data_type"])
    param = loader.ParamSpec("x", ANNOTATIONS[case.get("python_annotation", "none")], spec)
    expected = for_language(case["expect"])
    manager = SharedMemoryManager()

    def decode() -> Any:
        return bindings.decode_input(
            pb, func, param, request.input_data[0],
            invocation_id="inv", shm=manager, trigger_metadata=request.trigger_metadata,
        )

    try:
        if "error" in expected:
            with pytest.raises(BindingError) as refused:
                decode()
            assert_error(refused.value, expected["error"])
        else:
            actual = describe(func, decode())
            assert {k: actual.get(k) for k in expected} == expected
    finally:
        manager.release_invocation("inv")


# ---- message scripts ---------------------------------------------------------------------------------

def placeholder(value: Any) -> str | None:
    """The variable's name when `value` is a string that is exactly one {{var}}."""
    if isinstance(value, str) and value.startswith("{{") and value.endswith("}}") and value.count("{{") == 1:
        return value[2:-2]
    return None


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    """{{var}} placeholders in strings and keys; a string that is exactly one placeholder keeps its type."""
    if isinstance(value, dict):
        return {substitute(k, variables): substitute(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    if isinstance(value, str) and "{{" in value:
        if value.startswith("{{") and value.endswith("}}") and value.count("{{") == 1:
            return variables[value[2:-2]]
        for name, replacement in variables.items():
            value = value.replace("{{" + name + "}}", str(replacement))
        assert "{{" not in value, f"unknown placeholder in {value!r}"
    return value


def is_default(value: Any) -> bool:
    return value is None or value in ("", 0, False, [], {})


def match(expected: Any, actual: Any, variables: dict[str, Any], where: str, bind: bool = False) -> None:
    """Checks `actual` (a message as proto3 JSON) against a fixture matcher; see the fixtures' README. With `bind`
    (the conversations), a value or key that is exactly an unbound {{var}} binds it to what it meets."""
    if isinstance(expected, dict) and len(expected) == 1 and next(iter(expected)).startswith("$"):
        op, arg = next(iter(expected.items()))
        if op == "$capture":
            assert not is_default(actual), f"{where}: nothing to capture as {arg!r}"
            variables[arg] = actual
        elif op == "$absent":
            assert is_default(actual), f"{where}: expected unset, got {actual!r}"
        elif op == "$utf8":
            match(arg, base64.b64decode(actual or "").decode("utf-8"), variables, where, bind)
        elif op == "$json":
            assert isinstance(actual, str), f"{where}: expected JSON text, got {actual!r}"
            assert json.loads(actual) == arg, f"{where}: {actual!r} is not the JSON {arg!r}"
        elif op == "$contains":
            for text in arg if isinstance(arg, list) else [arg]:
                assert isinstance(actual, str) and text in actual, f"{where}: {text!r} not in {actual!r}"
        elif op == "$per_language":
            match(arg[LANGUAGE], actual, variables, where, bind)
        else:
            raise AssertionError(f"{where}: unknown matcher {op}")
        return
    if isinstance(expected, dict):
        actual = {} if actual is None else actual
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            name = placeholder(key)
            if bind and name is not None and name not in variables:
                assert len(actual) == 1, f"{where}: cannot bind {key} from the keys {sorted(actual)}"
                variables[name] = next(iter(actual))
            key = substitute(key, variables)
            match(value, actual.get(key), variables, f"{where}.{key}", bind)
        return
    if isinstance(expected, list):
        actual = [] if actual is None else actual
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: expected {expected!r}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            match(e, a, variables, f"{where}[{i}]", bind)
        return
    name = placeholder(expected)
    if bind and name is not None and name not in variables:
        assert not is_default(actual), f"{where}: nothing to bind {expected} to"
        variables[name] = actual
        return
    expected = substitute(expected, variables)
    if actual is None:
        assert is_default(expected), f"{where}: expected {expected!r}, the field is unset"
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool) and isinstance(actual, str):
        assert float(actual) == expected, f"{where}: expected {expected!r}, got {actual!r}"  # int64 as JSON text
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


def as_json(message: Any) -> dict[str, Any]:
    try:
        return json_format.MessageToDict(message, preserving_proto_field_name=True, including_default_value_fields=True)
    except TypeError:  # protobuf >= 26 renamed the option
        return json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )


async def next_message(outbox: asyncio.Queue[Any], waiting_for: str) -> Any:
    """The next message the worker sent that is not a log."""
    while True:
        try:
            message = await asyncio.wait_for(outbox.get(), TIMEOUT)
        except asyncio.TimeoutError:
            raise AssertionError(f"no {waiting_for} from the worker within {TIMEOUT} s") from None
        if message.WhichOneof("content") != "rpc_log":
            return message


def check_map(step: dict[str, Any], root: Path) -> None:
    path = root / MAP_FOLDER / step["name"]
    if not step.get("exists", True):
        assert not path.exists(), f"{path} should be gone"
        return
    raw = path.read_bytes()
    assert raw[0] == 0x01 and int.from_bytes(raw[1:9], "little", signed=True) == len(raw) - 9, f"{path}: bad header"
    if "utf8" in step or "repeat" in step:
        assert raw[9:] == content_of(step), f"{path}: unexpected content"
    if "mode" in step:
        assert format(path.stat().st_mode & 0o777, "o") == step["mode"]


async def run_script(pb: Any, case: dict[str, Any], variables: dict[str, Any], root: Path) -> None:
    dispatcher = Dispatcher(WorkerArgs("127.0.0.1", 1, "conformance-worker", "conformance"))
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    dispatcher.attach(asyncio.get_running_loop(), outbox)
    try:
        for number, step in enumerate(case["steps"], 1):
            if "check_map" in step:
                check_map(substitute(step["check_map"], variables), root)
                continue
            if "load" in step:
                load = step["load"]
                message = pb.StreamingMessage(
                    function_load_request=function_load_request(pb, load["function"], load["function_id"], APPS)
                )
            else:
                message = json_format.ParseDict(to_wire_json(substitute(step["send"], variables)), pb.StreamingMessage())
            dispatcher.dispatch(message)
            for expected in step.get("expect", []):
                ((kind, content),) = expected.items()
                sent = await next_message(outbox, kind)
                assert sent.WhichOneof("content") == kind, f"step {number}: expected {kind}, got {sent}"
                match(content, as_json(sent)[kind], variables, f"step {number} {kind}")
    finally:
        dispatcher.close()


APP_ROOTS = (str(APPS_V2) + "/", str(REAL_WORKERS / "apps") + "/")


@pytest.fixture
def app_modules_restored() -> Iterator[None]:
    """The worker imports the functions as the package __app__, and a v2 app's function_app.py by its stem (one app
    per process): forget them afterwards, so another test can load its own app under those names."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None) or ""
        if name == loader.APP_PACKAGE or name.startswith(loader.APP_PACKAGE + ".") or file.startswith(APP_ROOTS):
            del sys.modules[name]


@pytest.mark.parametrize("case", cases("message_scripts"))
def test_message_script(case, pb, shm_root, monkeypatch, app_modules_restored):
    for key, value in case.get("env", {}).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the worker puts the app folder in front
    variables: dict[str, Any] = {"app": str(APPS), "app_v2": str(APPS_V2)}
    for name, spec in case.get("host_maps", {}).items():
        content = content_of(spec)
        variables[name] = write_host_map(shm_root, content)
        variables[f"{name}.count"] = len(content)
    asyncio.run(run_script(pb, case, variables, shm_root))


# ---- conversations with the real workers -------------------------------------------------------------

PLACEHOLDER = re.compile(r"\{\{([^{}]+)\}\}")
CONVERSATION_NOOPS = ("worker_map", "read_map", "http", "http_done")  # the player's steps (host side, or the real worker's)
QUIET_SECONDS = 0.2  # after the last step: how long the worker may stay silent to show it has nothing more to say


def concrete(value: Any, variables: dict[str, Any], defaults: dict[str, Any], where: str) -> Any:
    """A message the runner sends as the host: each {{var}} filled in, an unbound one with the case's `vars`
    default (which binds it for the later steps); a placeholder that has neither is the fixture's error."""
    for name in PLACEHOLDER.findall(json.dumps(value)):
        if name not in variables:
            assert name in defaults, f"{where}: {{{{{name}}}}} is unbound and the case's vars give no default"
            variables[name] = defaults[name]
    return substitute(value, variables)


async def run_conversation(pb: Any, case: dict[str, Any], variables: dict[str, Any], root: Path) -> None:
    """Plays the host's side of a real worker's conversation (see the fixtures' README): sends the `host` messages
    and the `host_load` requests, and checks that each message of this worker matches the `worker` step."""
    defaults = case.get("vars", {})
    app = Path(variables["app"])
    indexed: dict[str, Any] = {}  # the worker's last FunctionMetadataResponse, by function name
    dispatcher = Dispatcher(WorkerArgs("127.0.0.1", 1, "conformance-worker", "conformance"))
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    dispatcher.attach(asyncio.get_running_loop(), outbox)
    try:
        for number, step in enumerate(case["steps"], 1):
            ((kind, spec),) = step.items()
            where = f"step {number} ({kind})"
            if kind in CONVERSATION_NOOPS:
                continue
            if kind == "expect_map":
                check_map(concrete(spec, variables, defaults, where), root)
            elif kind == "host":
                content = spec["$sent"] if "$sent" in spec else spec
                assert "$match" not in content, f"{where}: a $match without its $sent"
                message = to_wire_json(concrete(content, variables, defaults, where))
                dispatcher.dispatch(json_format.ParseDict(message, pb.StreamingMessage()))
            elif kind == "host_load":
                load = concrete(spec, variables, defaults, where)
                name = load["function"]
                if name in indexed:
                    request = indexed_load_request(pb, indexed[name], load["function_id"])
                else:
                    request = function_load_request(pb, name, load["function_id"], app)
                # What the fixture says the host's request holds must hold for the one built here too.
                match(load.get("metadata", {}), as_json(request.metadata), variables, f"{where} metadata")
                dispatcher.dispatch(pb.StreamingMessage(function_load_request=request))
            elif kind == "worker":
                expected = spec["$match"] if "$match" in spec else spec
                ((content, matcher),) = expected.items()
                sent = await next_message(outbox, content)
                got = sent.WhichOneof("content")
                assert got == content, f"{where}: expected {content}, got {got}: {as_json(sent)}"
                match(matcher, as_json(sent)[content], variables, f"{where} {content}", bind=True)
                if content == "function_metadata_response":
                    indexed = {m.name: m for m in sent.function_metadata_response.function_metadata_results}
            else:
                raise AssertionError(f"{where}: unknown step {step}")
        await asyncio.sleep(QUIET_SECONDS)
        extra = []
        while not outbox.empty():
            message = outbox.get_nowait()
            if message.WhichOneof("content") != "rpc_log":
                extra.append(as_json(message))
        assert not extra, f"after the last step the worker sent what the real worker does not: {extra}"
    finally:
        dispatcher.close()


@pytest.mark.parametrize("case", cases("conversations"))
def test_conversation(case, pb, shm_root, monkeypatch, app_modules_restored):
    for key, value in case.get("env", {}).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the worker puts the app folder in front
    app = REAL_WORKERS / case["app"]
    assert app.is_dir(), f"no app {app}"
    variables: dict[str, Any] = {"app": str(app)}
    for name, spec in case.get("host_maps", {}).items():
        content = content_of(spec)
        variables[name] = write_host_map(shm_root, content)
        variables[f"{name}.count"] = len(content)
    asyncio.run(run_conversation(pb, case, variables, shm_root))


def test_conversation_variables_bind_when_matched_and_default_when_sent():
    variables: dict[str, Any] = {}
    match({"results": {"{{output}}": True}, "id": "{{inv}}"}, {"results": {"map-1": True}, "id": "inv-7"}, variables, "m", True)
    assert variables == {"output": "map-1", "inv": "inv-7"}
    match("{{inv}}", "inv-7", variables, "m", True)  # bound: compared from now on
    with pytest.raises(AssertionError):
        match("{{inv}}", "inv-8", variables, "m", True)
    with pytest.raises(AssertionError):
        match("{{other}}", "", variables, "m", True)  # nothing to bind to
    with pytest.raises(AssertionError):
        match({"{{other}}": True}, {"a": True, "b": True}, variables, "m", True)  # which key?
    with pytest.raises(KeyError):
        match("{{other}}", "x", variables, "m")  # message scripts: an unbound variable is the fixture's error
    assert concrete({"invocation_id": "{{inv}}", "id": "{{fid}}"}, variables, {"fid": "f-1"}, "s") == {
        "invocation_id": "inv-7", "id": "f-1"}
    assert variables["fid"] == "f-1"
    with pytest.raises(AssertionError):
        concrete({"name": "{{nothing}}"}, variables, {}, "s")


def test_conversations_apply_to_this_worker():
    """The real Python worker's conversations are run here (a fixture whose languages left Python out would not be)."""
    assert cases("conversations"), "no conversation lists python in its languages"

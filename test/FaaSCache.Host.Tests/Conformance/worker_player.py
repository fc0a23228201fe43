"""Plays a real worker's side of one conversation of src/Workers/conformance/real-workers/*.json against a FaaSCache host.

The host starts this script as a language worker (a worker.config.json whose defaultWorkerPath is this file and whose
workerArguments name the fixture, the case and a result file). It connects over FunctionRpc as the real worker does
(StartStream{worker_id} with the request id), then walks the case's steps in order:

- {"worker": msg}, or {"worker": {"$sent": msg, "$match": ...}}: sends msg (proto3 JSON, {{vars}} filled in);
- {"host": matcher}, or {"host": {"$match": matcher, ...}}: the host's next message must match (unbound {{vars}} bind);
- {"host_load": {"function", "function_id", "metadata"?}}: the host's next message is the FunctionLoadRequest of that function;
- {"worker_map": {"create": var, "utf8": text}}: creates an output map as the real Python worker does (header, content,
  mmap kept open, its own descriptor), binding {{var}} to its name; {"worker_map": {"close": var}}: closes it, not deleting;
- {"read_map": {"name", "utf8"}}: opens a map the host sent and checks its content, then closes it (as a worker reads an input);
- {"http": {...}}: sends that HTTP request to the host in the background; {"http_done": {}} waits and checks its answer;
- {"expect_map": {"name", "exists", "utf8"?}}: checks the map file; {"wait_map_gone": {"name", "seconds"}}: waits for it to go.

It writes {"ok": true} or {"ok": false, "error": "..."} to the result file as soon as it knows, keeps the stream open until
the host ends it (WorkerTerminate) and exits. Standard library plus the worker's gRPC stubs (src/Workers/python).
"""

from __future__ import annotations

import argparse
import base64
import json
import mmap
import os
import queue
import struct
import sys
import threading
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve()
while not (ROOT / "FaaSCache.sln").exists():
    ROOT = ROOT.parent
sys.path.insert(0, str(ROOT / "src" / "Workers" / "python"))

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from faascache_worker import protos  # noqa: E402

TIMEOUT = 60.0
UNSET = object()


class Mismatch(Exception):
    pass


class Player:
    def __init__(self, args: argparse.Namespace, case: dict[str, Any]) -> None:
        self.args = args
        self.case = case
        self.pb, self.pb_grpc = protos.load()
        self.vars: dict[str, Any] = {"app": args.app}
        self.outbox: queue.Queue[Any] = queue.Queue()
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.maps: dict[str, tuple[Any, Any]] = {}
        self.http_thread: threading.Thread | None = None
        self.http_result: dict[str, Any] = {}
        roots = os.environ.get("FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES", "/dev/shm").split(",")
        self.map_dirs = [os.path.join(r.strip(), "AzureFunctions") for r in roots if r.strip()]

    # ---- variables and matching -------------------------------------------------------------------------

    def fill(self, value: Any) -> Any:
        """A message to send: {{var}} replaced (a string that is exactly {{var}} takes the value's type), $utf8 as base64."""
        if isinstance(value, dict):
            if set(value) == {"$utf8"}:
                return base64.b64encode(self.fill(value["$utf8"]).encode("utf-8")).decode("ascii")
            return {self.fill(k): self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, str):
            if value.startswith("{{") and value.endswith("}}") and value.count("{{") == 1:
                name = value[2:-2]
                if name not in self.vars:
                    raise Mismatch(f"variable {name} is not bound when sending")
                return self.vars[name]
            for name, bound in self.vars.items():
                value = value.replace("{{" + name + "}}", str(bound))
        return value

    def match(self, matcher: Any, actual: Any, where: str) -> None:
        if isinstance(matcher, dict):
            if set(matcher) == {"$utf8"}:
                text = base64.b64decode(actual or "").decode("utf-8", "replace") if isinstance(actual, str) else ""
                return self.match(matcher["$utf8"], text, where)
            if set(matcher) == {"$json"}:
                try:
                    parsed = json.loads(actual)
                except (TypeError, ValueError):
                    raise Mismatch(f"{where}: {actual!r} is not JSON")
                return self.match(matcher["$json"], parsed, where)
            if set(matcher) == {"$contains"}:
                texts = matcher["$contains"] if isinstance(matcher["$contains"], list) else [matcher["$contains"]]
                for t in texts:
                    if t not in str(actual):
                        raise Mismatch(f"{where}: {actual!r} does not contain {t!r}")
                return None
            if set(matcher) == {"$absent"}:
                if actual not in (None, "", 0, False, [], {}):
                    raise Mismatch(f"{where}: expected unset, got {actual!r}")
                return None
            actual = actual if isinstance(actual, dict) else {}
            for key, sub in matcher.items():
                key = self.bind_key(key, actual, where)
                self.match(sub, actual.get(key, UNSET), f"{where}.{key}")
            return None
        if isinstance(matcher, list):
            actual = actual if isinstance(actual, list) else []
            if len(actual) != len(matcher):
                raise Mismatch(f"{where}: expected {len(matcher)} item(s), got {len(actual)}: {json.dumps(actual)[:400]}")
            for i, (m, a) in enumerate(zip(matcher, actual)):
                self.match(m, a, f"{where}[{i}]")
            return None
        if isinstance(matcher, str) and matcher.startswith("{{") and matcher.endswith("}}") and matcher.count("{{") == 1:
            name = matcher[2:-2]
            if name not in self.vars:
                if actual is UNSET or actual in ("", None):
                    raise Mismatch(f"{where}: expected a value to bind {{{{{name}}}}}, got none")
                self.vars[name] = actual
                return None
            matcher = self.vars[name]
        elif isinstance(matcher, str):
            matcher = self.fill(matcher)
        if actual is UNSET:
            actual = {bool: False, int: 0, float: 0.0, str: ""}.get(type(matcher), None)
        if isinstance(matcher, (int, float)) and not isinstance(matcher, bool) and isinstance(actual, str):
            try:
                actual = int(actual)
            except ValueError:
                pass
        if matcher != actual:
            raise Mismatch(f"{where}: expected {matcher!r}, got {actual!r}")
        return None

    def bind_key(self, key: str, actual: dict[str, Any], where: str) -> str:
        if key.startswith("{{") and key.endswith("}}"):
            name = key[2:-2]
            if name in self.vars:
                return str(self.vars[name])
            if len(actual) != 1:
                raise Mismatch(f"{where}: cannot bind {key} from keys {list(actual)}")
            self.vars[name] = next(iter(actual))
            return self.vars[name]
        return self.fill(key)

    # ---- the stream ---------------------------------------------------------------------------------------

    def send(self, content: dict[str, Any]) -> None:
        message = json_format.ParseDict(self.fill(content), self.pb.StreamingMessage())
        message.request_id = self.args.request_id
        self.outbox.put(message)

    def receive(self) -> dict[str, Any]:
        message: Any = UNSET
        for _ in range(int(TIMEOUT * 10)):
            try:
                message = self.inbox.get(timeout=0.1)
                break
            except queue.Empty:
                if self.http_thread is not None and not self.http_thread.is_alive() and self.http_result:
                    # The HTTP request the host should be serving is over: say how, instead of waiting on.
                    raise Mismatch(f"the host sent nothing, and the HTTP request ended with {self.http_result}")
        if message is UNSET:
            raise Mismatch(f"the host sent nothing within {TIMEOUT:.0f} s")
        if message is None:
            raise Mismatch("the host ended the stream")
        return json_format.MessageToDict(message, preserving_proto_field_name=True)

    def expect(self, matcher: dict[str, Any], step: str) -> None:
        try:
            got = self.receive()
        except Mismatch as e:
            raise Mismatch(f"{step}: {e}") from None
        got.pop("request_id", None)
        self.match(matcher, got, step)

    # ---- shared memory -------------------------------------------------------------------------------------

    def create_map(self, var: str, content: bytes) -> None:
        name = str(uuid.uuid4())
        os.makedirs(self.map_dirs[0], exist_ok=True)
        path = os.path.join(self.map_dirs[0], name)
        size = 9 + len(content)
        with open(path, "w+b") as file:  # as the real worker: the file object goes, its mmap keeps a descriptor
            file.truncate(size)
            view = mmap.mmap(file.fileno(), size, mmap.MAP_SHARED, mmap.PROT_WRITE | mmap.PROT_READ)
        view[0:9] = b"\x01" + struct.pack("<q", len(content))
        view[9:size] = content
        self.maps[var] = (view, path)
        self.vars[var] = name

    def close_map(self, var: str) -> None:
        view, _ = self.maps.pop(var)
        view.close()

    def find_map(self, name: str) -> str | None:
        for directory in self.map_dirs:
            path = os.path.join(directory, name)
            if os.path.exists(path):
                return path
        return None

    def read_map(self, name: str) -> bytes:
        path = self.find_map(name)
        if path is None:
            raise Mismatch(f"map {name} does not exist in {self.map_dirs}")
        with open(path, "rb") as file:
            view = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                if view[0] != 1:
                    raise Mismatch(f"map {name} is not initialized")
                (length,) = struct.unpack("<q", view[1:9])
                return bytes(view[9:9 + length])
            finally:
                view.close()

    # ---- HTTP ----------------------------------------------------------------------------------------------

    def http_base(self) -> str:
        """The host's HTTP address, which the test writes once the host answers (it starts this worker before that)."""
        path = Path(self.args.http_base_file)
        for _ in range(int(TIMEOUT * 10)):
            if path.exists() and path.read_text(encoding="utf-8").strip():
                return path.read_text(encoding="utf-8").strip().rstrip("/")
            threading.Event().wait(0.1)
        raise Mismatch(f"no HTTP address in {path} within {TIMEOUT:.0f} s")

    def start_http(self, spec: dict[str, Any]) -> None:
        base = self.http_base()
        body = spec.get("body")
        request = urllib.request.Request(base + spec["path"], method=spec["method"], data=body.encode() if body is not None else None)
        if spec.get("content_type"):
            request.add_header("content-type", spec["content_type"])

        def run() -> None:
            try:
                with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                    self.http_result.update(status=response.status, body=response.read())
            except urllib.error.HTTPError as e:
                self.http_result.update(status=e.code, body=e.read())
            except Exception as e:  # noqa: BLE001 - reported as the step's failure
                self.http_result.update(error=repr(e))

        self.http_spec = spec
        self.http_thread = threading.Thread(target=run, daemon=True)
        self.http_thread.start()

    def finish_http(self) -> None:
        assert self.http_thread is not None, "http_done without an http step"
        self.http_thread.join(TIMEOUT)
        spec, result = self.http_spec, self.http_result
        if "error" in result or "status" not in result:
            raise Mismatch(f"HTTP {spec['method']} {spec['path']} failed: {result.get('error', 'no answer')}")
        body = result["body"].decode("utf-8", "replace")
        if result["status"] != spec["status"]:
            raise Mismatch(f"HTTP {spec['method']} {spec['path']}: status {result['status']}, expected {spec['status']}: {body[:500]}")
        if "json" in spec:
            self.match(spec["json"], json.loads(body), "HTTP body")
        if "text" in spec and body != spec["text"]:
            raise Mismatch(f"HTTP body {body!r}, expected {spec['text']!r}")

    # ---- the case ------------------------------------------------------------------------------------------

    def play(self) -> None:
        for index, step in enumerate(self.case["steps"]):
            where = f"step {index + 1} ({next(iter(step))})"
            if "worker" in step:
                message = step["worker"]
                self.send(message["$sent"] if "$sent" in message else message)
            elif "host" in step:
                matcher = step["host"]
                self.expect(matcher["$match"] if "$match" in matcher else matcher, where)
            elif "host_load" in step:
                load = step["host_load"]
                self.expect({"function_load_request": {"function_id": load["function_id"], "metadata": {"name": load["function"], **load.get("metadata", {})}}}, where)
            elif "worker_map" in step:
                spec = step["worker_map"]
                if "create" in spec:
                    self.create_map(spec["create"], spec["utf8"].encode("utf-8"))
                else:
                    self.close_map(spec["close"])
            elif "read_map" in step:
                spec = step["read_map"]
                got = self.read_map(self.fill(spec["name"])).decode("utf-8", "replace")
                if got != spec["utf8"]:
                    raise Mismatch(f"{where}: map holds {got!r}, expected {spec['utf8']!r}")
            elif "http" in step:
                self.start_http(step["http"])
            elif "http_done" in step:
                self.finish_http()
            elif "wait_map_gone" in step:
                spec = step["wait_map_gone"]
                name = self.fill(spec["name"])
                for _ in range(int(spec["seconds"] * 10)):
                    if self.find_map(name) is None:
                        break
                    threading.Event().wait(0.1)
                else:
                    raise Mismatch(f"{where}: map {name} still exists after {spec['seconds']} s")
            elif "expect_map" in step:
                spec = step["expect_map"]
                name = self.fill(spec["name"])
                path = self.find_map(name)
                if bool(path) != spec["exists"]:
                    raise Mismatch(f"{where}: map {name} {'does not exist' if path is None else 'still exists'}")
                if path and "utf8" in spec and self.read_map(name).decode() != spec["utf8"]:
                    raise Mismatch(f"{where}: map {name} does not hold {spec['utf8']!r}")
            else:
                raise Mismatch(f"{where}: unknown step {step}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversation", required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--result", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--http-base-file", required=True)
    parser.add_argument("--functions-uri", dest="uri")
    parser.add_argument("--functions-worker-id", dest="worker_id")
    parser.add_argument("--functions-request-id", dest="request_id")
    args, _ = parser.parse_known_args()
    fixture = json.loads(Path(args.conversation).read_text(encoding="utf-8"))
    case = next(c for c in fixture["cases"] if c["name"] == args.case)
    player = Player(args, case)
    target = args.uri.split("//", 1)[-1].rstrip("/")
    channel = grpc.insecure_channel(target)
    stub = player.pb_grpc.FunctionRpcStub(channel)
    start = player.pb.StreamingMessage(request_id=args.request_id)
    start.start_stream.worker_id = args.worker_id
    player.outbox.put(start)

    def outgoing():
        while True:
            message = player.outbox.get()
            if message is None:
                return
            yield message

    terminated = threading.Event()

    def pump() -> None:
        try:
            for message in stub.EventStream(outgoing()):
                if message.WhichOneof("content") == "worker_terminate":
                    terminated.set()
                    player.outbox.put(None)
                    break
                player.inbox.put(message)
        except grpc.RpcError:
            pass
        finally:
            player.inbox.put(None)
            terminated.set()

    threading.Thread(target=pump, daemon=True).start()
    result: dict[str, Any]
    try:
        player.play()
        result = {"ok": True, "vars": {k: v for k, v in player.vars.items() if isinstance(v, (str, int))}}
    except Exception as e:  # noqa: BLE001 - every failure goes to the result file
        result = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    Path(args.result + ".tmp").write_text(json.dumps(result), encoding="utf-8")
    os.replace(args.result + ".tmp", args.result)
    terminated.wait(300)
    for view, _ in player.maps.values():
        view.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

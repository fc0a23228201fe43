"""End to end: this test plays the host (a grpcio server on 127.0.0.1), starts worker.py as a subprocess
with the host's real command line, and drives it through the handshake, function loads, invocations
with shared-memory blobs, CloseSharedMemoryResources and WorkerTerminate."""

from __future__ import annotations

import json
import sys
import time
import uuid
from typing import Any

import pytest
from conftest import write_host_map
from fake_host import APP, TIMEOUT, http_binding, read_map_file

from faascache_worker.shared_memory import DIRECTORIES_SETTING, MAP_FOLDER


@pytest.mark.parametrize(
    ("case", "function_data_cache", "shared_memory_enabled", "size"),
    [
        ("faascache", True, False, 64 * 1024),  # cache on: any size leaves in shared memory, host adopts it
        ("stock-large", False, True, 2 * 1024 * 1024),  # stock host, >= 1 MiB: shared memory, worker deletes
        ("stock-small", False, False, 1024),  # stock host, small: inline bytes
    ],
)
def test_http_function_with_blob_input_and_output(
    session_factory, pb, shm_root, case, function_data_cache, shared_memory_enabled, size
):
    s = session_factory(function_data_cache=function_data_cache, shared_memory_enabled=shared_memory_enabled)
    caps = dict(s.init.capabilities)
    assert s.init.result.status == pb.StatusResult.Success
    assert caps["SharedMemoryDataTransfer"] == "true" and caps["RawHttpBodyBytes"] == "true"
    assert s.init.worker_metadata.runtime_name == "python"
    assert s.init.worker_metadata.runtime_version == f"{sys.version_info.major}.{sys.version_info.minor}"  # the real 4.34's

    loaded = s.load("HttpBlobCopy")
    assert loaded.result.status == pb.StatusResult.Success, loaded.result

    content = (b"faast-" * (size // 6 + 1))[:size]
    input_map = write_host_map(shm_root, content)  # the cachelet's map, as the host writes it
    input_path = shm_root / MAP_FOLDER / input_map
    invocation_id = uuid.uuid4().hex
    response = s.invoke(
        "id-HttpBlobCopy",
        http_binding(pb, body=b'{"suffix": "!"}', name="blob.txt"),
        pb.ParameterBinding(
            name="inputblob",
            rpc_shared_memory=pb.RpcSharedMemory(name=input_map, offset=0, count=size, type=pb.RpcDataType.Value("bytes")),
        ),
        invocation_id=invocation_id,
    )
    assert response.invocation_id == invocation_id
    assert response.result.status == pb.StatusResult.Success, response.result.exception.message

    # The HTTP response ($return).
    http = response.return_value.http
    assert http.status_code == "201"
    assert http.headers["content-type"] == "application/json"
    assert json.loads(http.body.bytes) == {"read": size, "name": "blob.txt", "stream": True}

    # The blob output.
    (out,) = [b for b in response.output_data if b.name == "outputblob"]
    expected = content.upper() + b"!"
    if case == "stock-small":
        assert out.WhichOneof("rpc_data") == "data" and out.data.bytes == expected
    else:
        assert out.WhichOneof("rpc_data") == "rpc_shared_memory"
        region = out.rpc_shared_memory
        assert (region.offset, region.count, pb.RpcDataType.Name(region.type)) == (0, len(expected), "bytes")
        output_path = shm_root / MAP_FOLDER / region.name
        assert oct(output_path.stat().st_mode & 0o777) == oct(0o600)
        assert read_map_file(output_path) == expected

        s.host.send(close_shared_memory_resources_request=pb.CloseSharedMemoryResourcesRequest(map_names=[region.name]))
        closed = s.host.expect("close_shared_memory_resources_response").close_shared_memory_resources_response
        assert dict(closed.close_map_results) == {region.name: True}
        if function_data_cache:
            assert output_path.exists()  # adopted by the host's cache: the worker must not delete it
            output_path.unlink()  # (the test is the host here)
        else:
            assert not output_path.exists()  # the host copied it out; the worker cleans up its own map

    # The function's log reached the host, tagged with the invocation.
    logs = [log for log in s.host.logs if "HttpBlobCopy read" in log.message]
    assert logs and logs[0].invocation_id == invocation_id
    assert logs[0].level == pb.RpcLog.Level.Value("Information")
    assert logs[0].log_category == pb.RpcLog.RpcLogCategory.Value("User")

    assert s.terminate() == 0, s.worker_output()
    assert input_path.exists() and input_path.read_bytes()[9:] == content  # the host owns its input map
    assert s.host.stream_ended.wait(TIMEOUT)
    assert [p.name for p in (shm_root / MAP_FOLDER).iterdir()] == [input_map]  # nothing of the worker's left


def test_load_failures_user_errors_status_and_concurrency(session_factory, pb, tmp_path):
    s = session_factory(function_data_cache=True)
    broken_app = tmp_path / "broken_app"
    (broken_app / "Broken").mkdir(parents=True)
    (broken_app / "Broken" / "function.json").write_text(
        json.dumps({"bindings": [{"type": "httpTrigger", "direction": "in", "name": "req"}]})
    )
    (broken_app / "Broken" / "__init__.py").write_text("def main(req):\n    return (\n")
    (broken_app / "Gone").mkdir()
    (broken_app / "Gone" / "function.json").write_text(
        json.dumps({"scriptFile": "missing.py", "bindings": [{"type": "httpTrigger", "direction": "in", "name": "req"}]})
    )

    broken = s.load("Broken", app=broken_app)
    assert broken.result.status == pb.StatusResult.Failure
    assert "syntax error in" in broken.result.exception.message
    assert str(broken_app / "Broken" / "__init__.py") in broken.result.exception.message
    gone = s.load("Gone", app=broken_app)
    assert gone.result.status == pb.StatusResult.Failure
    assert "missing.py does not exist" in gone.result.exception.message

    # Invoking a function that failed to load is a clear failure, not a hang.
    r = s.invoke("id-Broken", http_binding(pb))
    assert r.result.status == pb.StatusResult.Failure and "not loaded" in r.result.exception.message

    # A user exception comes back as a failed invocation with the exception's type and message.
    assert s.load("Boom").result.status == pb.StatusResult.Success
    r = s.invoke("id-Boom", http_binding(pb))
    assert r.result.status == pb.StatusResult.Failure
    assert r.result.exception.message == "ValueError: boom from user code"
    assert r.result.exception.is_user_exception and "raise ValueError" in r.result.exception.stack_trace

    # Status requests are answered while work is in flight.
    assert s.load("Slow").result.status == pb.StatusResult.Success
    assert s.load("SlowAsync").result.status == pb.StatusResult.Success
    started = time.monotonic()
    ids = [s.send_invocation("id-Slow", http_binding(pb, seconds="2")) for _ in range(3)]
    ids += [s.send_invocation("id-SlowAsync", http_binding(pb, seconds="2")) for _ in range(3)]
    s.host.send(worker_status_request=pb.WorkerStatusRequest())
    s.host.expect("worker_status_response", timeout=1.5)  # before any invocation finishes
    responses = {}
    for _ in ids:
        r = s.host.expect("invocation_response").invocation_response
        responses[r.invocation_id] = r
    elapsed = time.monotonic() - started
    assert set(responses) == set(ids)
    assert all(r.result.status == pb.StatusResult.Success for r in responses.values())
    assert elapsed < 4.5, f"six 2-second invocations took {elapsed:.1f} s: not concurrent"
    sync_results = [responses[i].return_value.string for i in ids[:3]]
    assert all(text.startswith("Slow ") and "faascache-invoke" in text for text in sync_results)
    assert {responses[i].return_value.http.body.bytes for i in ids[3:]} == {b"async done"}
    assert any(log.message == "SlowAsync done" and log.invocation_id in ids[3:] for log in s.host.logs)

    # Cancelling an async invocation.
    cancel_id = s.send_invocation("id-SlowAsync", http_binding(pb, seconds="20"))
    s.host.send(invocation_cancel=pb.InvocationCancel(invocation_id=cancel_id))
    r = s.host.expect("invocation_response").invocation_response
    assert r.invocation_id == cancel_id and r.result.status == pb.StatusResult.Cancelled

    assert s.terminate() == 0, s.worker_output()


def test_worker_exits_when_the_host_goes_away(session_factory, pb):
    s = session_factory(function_data_cache=False)
    s.host.stop()
    assert s.proc.wait(timeout=TIMEOUT) in (0, 1)


def test_inputs_are_read_from_the_hosts_mapping_inside_the_worker(session_factory, pb, shm_root):
    s = session_factory(function_data_cache=True)
    assert s.load("ZeroCopyProbe").result.status == pb.StatusResult.Success
    input_map = write_host_map(shm_root, b"x" * 100_000)

    def region(name: str) -> Any:
        return pb.ParameterBinding(
            name=name,
            rpc_shared_memory=pb.RpcSharedMemory(name=input_map, count=100_000, type=pb.RpcDataType.Value("bytes")),
        )

    r = s.invoke("id-ZeroCopyProbe", http_binding(pb), region("inputblob"), region("rawblob"))
    assert r.result.status == pb.StatusResult.Success, r.result.exception.message
    assert json.loads(r.return_value.string) == {
        "stream_backed_by_mmap": True, "view_backed_by_mmap": True, "same_bytes": True,
    }
    assert any(log.message == "probing ZeroCopyProbe" and log.invocation_id == r.invocation_id for log in s.host.logs)
    assert s.terminate() == 0, s.worker_output()


def test_environment_reload_and_metadata_request(session_factory, pb, shm_root):
    s = session_factory(function_data_cache=False)
    s.host.send(functions_metadata_request=pb.FunctionsMetadataRequest(function_app_directory=str(APP)))
    metadata = s.host.expect("function_metadata_response").function_metadata_response
    assert metadata.use_default_metadata_indexing  # function.json apps: the host indexes them
    s.host.send(
        function_environment_reload_request=pb.FunctionEnvironmentReloadRequest(
            environment_variables={
                DIRECTORIES_SETTING: str(shm_root),
                "FUNCTIONS_WORKER_SHARED_MEMORY_DATA_TRANSFER_ENABLED": "1",
            },
            function_app_directory=str(APP),
        )
    )
    reload = s.host.expect("function_environment_reload_response").function_environment_reload_response
    assert reload.result.status == pb.StatusResult.Success
    assert reload.capabilities["SharedMemoryDataTransfer"] == "true"
    # The reloaded setting turns on shared memory for a >= 1 MiB output.
    assert s.load("HttpBlobCopy").result.status == pb.StatusResult.Success
    input_map = write_host_map(shm_root, b"a" * (1024 * 1024))
    r = s.invoke(
        "id-HttpBlobCopy",
        http_binding(pb),
        pb.ParameterBinding(
            name="inputblob",
            rpc_shared_memory=pb.RpcSharedMemory(name=input_map, count=1024 * 1024, type=pb.RpcDataType.Value("bytes")),
        ),
    )
    (out,) = r.output_data
    assert out.WhichOneof("rpc_data") == "rpc_shared_memory"
    assert s.terminate() == 0, s.worker_output()
    # Not closed by the host before it went away and no host cache could own it: the worker removed it.
    assert not (shm_root / MAP_FOLDER / out.rpc_shared_memory.name).exists()


def test_worker_finishes_and_exits_on_sigterm(session_factory, pb):
    s = session_factory(function_data_cache=False)
    assert s.load("Slow").result.status == pb.StatusResult.Success
    invocation_id = s.send_invocation("id-Slow", http_binding(pb, seconds="0.5"))
    s.host.expect_log("Slow started")
    s.proc.terminate()
    r = s.host.expect("invocation_response").invocation_response
    assert r.invocation_id == invocation_id and r.result.status == pb.StatusResult.Success
    assert s.proc.wait(timeout=TIMEOUT) == 0, s.worker_output()

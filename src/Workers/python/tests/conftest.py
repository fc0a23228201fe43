"""Shared fixtures: the worker package on sys.path, our azure.functions, and a private shm root."""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

WORKER_DIR = Path(__file__).resolve().parent.parent
if str(WORKER_DIR) not in sys.path:
    sys.path.insert(0, str(WORKER_DIR))

from faascache_worker import azure_functions, protos  # noqa: E402
from faascache_worker.shared_memory import DIRECTORIES_SETTING, MAP_FOLDER  # noqa: E402

azure_functions.ensure_available()


@pytest.fixture(scope="session")
def pb():
    return protos.load()[0]


@pytest.fixture(scope="session")
def pb_grpc():
    return protos.load()[1]


@pytest.fixture(scope="session")
def func():
    return azure_functions.module()


@pytest.fixture
def shm_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES root under /dev/shm, removed afterwards."""
    base = Path("/dev/shm") if os.path.isdir("/dev/shm") else Path("/tmp")
    root = base / f"faascache-pytest-{uuid.uuid4().hex}"
    (root / MAP_FOLDER).mkdir(parents=True)
    monkeypatch.setenv(DIRECTORIES_SETTING, str(root))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def session_factory(pb, pb_grpc, shm_root, tmp_path):
    """Starts worker processes connected to fake hosts (fake_host.Session); closes them all afterwards."""
    from fake_host import Session

    sessions: list[Session] = []

    def start(**kwargs: Any) -> Session:
        s = Session(pb, pb_grpc, shm_root, tmp_path / f"worker-{len(sessions)}.log", **kwargs)
        sessions.append(s)
        return s

    yield start
    for s in sessions:
        s.close()


def write_host_map(root: Path, content: bytes, name: str | None = None) -> str:
    """Writes a map the way the C# host does (header by hand, not through our writer)."""
    name = name or str(uuid.uuid4())
    path = root / MAP_FOLDER / name
    with open(path, "wb") as f:
        f.write(b"\x01" + len(content).to_bytes(8, "little", signed=True) + content)
    os.chmod(path, 0o600)
    return name


def function_load_request(pb: Any, name: str, function_id: str, app: Path) -> Any:
    """What a host builds from <app>/<name>/function.json."""
    folder = app / name
    spec = json.loads((folder / "function.json").read_text())
    bindings = {}
    for b in spec["bindings"]:
        bindings[b["name"]] = pb.BindingInfo(
            type=b["type"],
            direction=pb.BindingInfo.Direction.Value(b.get("direction", "in")),
            data_type=pb.BindingInfo.DataType.Value(b.get("dataType", "undefined")),
        )
    return pb.FunctionLoadRequest(
        function_id=function_id,
        metadata=pb.RpcFunctionMetadata(
            name=name,
            directory=str(folder),
            script_file=str(folder / spec.get("scriptFile", "__init__.py")),
            entry_point=spec.get("entryPoint", ""),
            bindings=bindings,
            raw_bindings=[json.dumps(b) for b in spec["bindings"]],
            language="python",
        ),
    )


def indexed_load_request(pb: Any, metadata: Any, function_id: str | None = None) -> Any:
    """The FunctionLoadRequest a host sends for a function the worker indexed (an RpcFunctionMetadata of its
    FunctionMetadataResponse): its id (or `function_id`), name, directory, script, entry point, raw bindings and
    properties as returned, and the bindings rebuilt from the raw ones (type, direction, dataType, read without regard
    to case), as the Functions host does."""
    bindings = {}
    for raw in metadata.raw_bindings:
        b = json.loads(raw)
        bindings[b["name"]] = pb.BindingInfo(
            type=b["type"],
            direction=pb.BindingInfo.Direction.Value(b.get("direction", "in").lower()),
            data_type=pb.BindingInfo.DataType.Value(b.get("dataType", "undefined").lower()),
        )
    return pb.FunctionLoadRequest(
        function_id=function_id or metadata.function_id,
        metadata=pb.RpcFunctionMetadata(
            name=metadata.name,
            directory=metadata.directory,
            script_file=metadata.script_file,
            entry_point=metadata.entry_point,
            raw_bindings=list(metadata.raw_bindings),
            bindings=bindings,
            properties=dict(metadata.properties),
        ),
    )

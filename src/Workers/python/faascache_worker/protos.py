"""Generates the FunctionRpc Python code from src/Protos at start-up, and imports it.

Generated code is never committed: the first start (or build.sh) runs protoc into a gitignored
folder, and later starts reuse it while the .proto and the compiler are unchanged. The result is a
package `faascache_rpc` loaded by path, so nothing is added to sys.path where user code could
collide with it.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from . import WORKER_DIR

PROTO_FILE = "FunctionRpc.proto"
PACKAGE = "faascache_rpc"
_GENERATOR_VERSION = "1"  # bump when the post-processing below changes
# Where Debian's libprotobuf-dev puts google/protobuf/*.proto (the well-known types FunctionRpc.proto imports);
# FAASCACHE_PROTO_INCLUDE names another folder (a test limits it to what the listed packages ship).
WELL_KNOWN_INCLUDE = "/usr/include"


class ProtoBuildError(RuntimeError):
    """protoc is missing or failed; the message says what to install or fix."""


def proto_dir() -> Path:
    """src/Protos of this repository, or FAASCACHE_PROTOS_DIR when the worker was copied elsewhere."""
    override = os.environ.get("FAASCACHE_PROTOS_DIR")
    candidates = [Path(override)] if override else []
    candidates += [WORKER_DIR.parent.parent / "Protos", WORKER_DIR / "protos"]
    for candidate in candidates:
        if (candidate / PROTO_FILE).is_file():
            return candidate
    raise ProtoBuildError(
        f"{PROTO_FILE} not found in {', '.join(str(c) for c in candidates)}; "
        "set FAASCACHE_PROTOS_DIR to the folder holding it"
    )


def _compiler() -> tuple[list[str], list[str]]:
    """The protoc command and its grpc-plugin arguments."""
    protoc = os.environ.get("FAASCACHE_PROTOC") or shutil.which("protoc") or "/usr/bin/protoc"
    plugin = (
        os.environ.get("FAASCACHE_GRPC_PYTHON_PLUGIN")
        or shutil.which("grpc_python_plugin")
        or "/usr/bin/grpc_python_plugin"
    )
    if os.path.isfile(protoc) and os.path.isfile(plugin):
        return [protoc], [f"--plugin=protoc-gen-grpc_python={plugin}", "--grpc_python_out"]
    if importlib.util.find_spec("grpc_tools") is not None:  # pip's grpcio-tools bundles both
        return [sys.executable, "-m", "grpc_tools.protoc"], ["--grpc_python_out"]
    raise ProtoBuildError(
        f"cannot generate the FunctionRpc code: protoc ({protoc}) or grpc_python_plugin ({plugin}) is missing; "
        "install the Debian packages protobuf-compiler and protobuf-compiler-grpc "
        "(or set FAASCACHE_PROTOC / FAASCACHE_GRPC_PYTHON_PLUGIN)"
    )


def _stamp(source: Path, command: list[str]) -> str:
    """Changes whenever the .proto, the compiler or our post-processing changes."""
    digest = hashlib.sha256()
    digest.update(source.read_bytes())
    digest.update(_GENERATOR_VERSION.encode())
    digest.update(" ".join(command).encode())
    try:
        digest.update(str(os.stat(command[0]).st_mtime_ns).encode())
    except OSError:
        pass
    return digest.hexdigest()


def _output_roots(stamp: str) -> list[Path]:
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return [
        WORKER_DIR / "faascache_worker" / "_generated",
        cache_home / "faascache" / f"python-protos-{stamp[:16]}",
        Path(tempfile.gettempdir()) / f"faascache-python-protos-{os.getuid()}-{stamp[:16]}",
    ]


def well_known_include() -> Path:
    """The folder holding google/protobuf/*.proto for protoc's include path."""
    return Path(os.environ.get("FAASCACHE_PROTO_INCLUDE") or WELL_KNOWN_INCLUDE)


def _generate(source_dir: Path, package_dir: Path, command: list[str], plugin_args: list[str]) -> None:
    """Runs protoc into a scratch folder next to package_dir, then swaps it in."""
    package_dir.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".gen-", dir=package_dir.parent))
    include = well_known_include()
    bundled = command[0] == sys.executable  # grpc_tools.protoc carries its own well-known types
    try:
        result = subprocess.run(
            [
                *command,
                f"-I{source_dir}",
                *([] if bundled else [f"-I{include}"]),
                f"--python_out={scratch}",
                *plugin_args[:-1],
                f"{plugin_args[-1]}={scratch}",
                str(source_dir / PROTO_FILE),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            hint = ""
            if "google/protobuf/" in result.stderr:
                hint = (
                    f"\nprotoc did not find the well-known .proto files in {include}: install the Debian package "
                    "libprotobuf-dev (it ships google/protobuf/*.proto), e.g. bash scripts/setup.sh"
                )
            raise ProtoBuildError(f"protoc failed on {source_dir / PROTO_FILE}:\n{result.stderr.strip()}{hint}")
        grpc_file = scratch / "FunctionRpc_pb2_grpc.py"
        # protoc writes an absolute import; make it relative so the package needs no sys.path entry.
        grpc_file.write_text(
            grpc_file.read_text().replace(
                "import FunctionRpc_pb2 as FunctionRpc__pb2", "from . import FunctionRpc_pb2 as FunctionRpc__pb2"
            )
        )
        (scratch / "__init__.py").write_text('"""Generated from src/Protos/FunctionRpc.proto; not committed."""\n')
        if package_dir.exists():
            shutil.rmtree(package_dir)
        os.replace(scratch, package_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def verify() -> str:
    """Generates the stubs afresh into a scratch folder and imports them: proves protoc, its plugin, the
    well-known .proto files and the Python runtime (grpc, protobuf) all work, whatever is cached. Returns a
    one-line summary; raises ProtoBuildError or ImportError naming what is missing."""
    source_dir = proto_dir()
    command, plugin_args = _compiler()
    with tempfile.TemporaryDirectory(prefix="faascache-protos-check-") as scratch:
        package_dir = Path(scratch) / "faascache_rpc_check"
        _generate(source_dir, package_dir, command, plugin_args)
        spec = importlib.util.spec_from_file_location(
            "faascache_rpc_check", package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules["faascache_rpc_check"] = package
        try:
            spec.loader.exec_module(package)
            importlib.import_module("faascache_rpc_check.FunctionRpc_pb2")
            importlib.import_module("faascache_rpc_check.FunctionRpc_pb2_grpc")
        finally:
            for name in [n for n in sys.modules if n.startswith("faascache_rpc_check")]:
                del sys.modules[name]
    return f"FunctionRpc stubs generated with {command[0]} (well-known types from {well_known_include()}) and imported"


def ensure_generated() -> Path:
    """Returns the folder of the up-to-date generated package, generating it when missing or stale."""
    source_dir = proto_dir()
    try:
        command, plugin_args = _compiler()
    except ProtoBuildError:
        # An installed worker (a container image) carries the code generated where it was built; protoc is a build
        # tool, so without one the shipped package is the one to use.
        shipped = WORKER_DIR / "faascache_worker" / "_generated" / PACKAGE
        if (shipped / "FunctionRpc_pb2.py").is_file():
            return shipped
        raise
    stamp = _stamp(source_dir / PROTO_FILE, command)
    errors: list[str] = []
    for root in _output_roots(stamp):
        package_dir = root / PACKAGE
        stamp_file = root / "STAMP"
        try:
            root.mkdir(parents=True, exist_ok=True)
            with open(root / ".lock", "w") as lock:  # concurrent worker starts generate once
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not (stamp_file.is_file() and stamp_file.read_text() == stamp and package_dir.is_dir()):
                    _generate(source_dir, package_dir, command, plugin_args)
                    stamp_file.write_text(stamp)
            return package_dir
        except PermissionError as e:  # read-only install: fall back to a cache folder
            errors.append(f"{root}: {e}")
    raise ProtoBuildError("no writable folder for the generated code: " + "; ".join(errors))


_loaded: tuple[ModuleType, ModuleType] | None = None


def load() -> tuple[ModuleType, ModuleType]:
    """(FunctionRpc_pb2, FunctionRpc_pb2_grpc), generated if needed."""
    global _loaded
    if _loaded is None:
        if PACKAGE not in sys.modules:
            package_dir = ensure_generated()
            spec = importlib.util.spec_from_file_location(
                PACKAGE, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
            )
            assert spec is not None and spec.loader is not None
            package = importlib.util.module_from_spec(spec)
            sys.modules[PACKAGE] = package
            spec.loader.exec_module(package)
        _loaded = (
            importlib.import_module(f"{PACKAGE}.FunctionRpc_pb2"),
            importlib.import_module(f"{PACKAGE}.FunctionRpc_pb2_grpc"),
        )
    return _loaded


if __name__ == "__main__":  # build.sh: python3 -m faascache_worker.protos [--verify]
    try:
        print(verify() if "--verify" in sys.argv[1:] else f"generated {ensure_generated()}")
    except ProtoBuildError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)

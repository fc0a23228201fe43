"""The worker's proto build, run as a fresh machine would run it: PATH holds only the packaged compiler and
its gRPC plugin, and protoc sees only the .proto files that the Debian packages listed in scripts/setup.sh
ship. A .proto under src/Protos that imports a file no listed package ships fails here, not on a newcomer's
machine (where a well-known type installed by other means once hid the missing libprotobuf-dev)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import WORKER_DIR

REPO = WORKER_DIR.parent.parent.parent
PROTOS = REPO / "src" / "Protos"
PYTHON = "/usr/bin/python3"


def listed_packages() -> list[str]:
    out = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup.sh"), "--list-packages"], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def packaged_files(package: str) -> list[str]:
    result = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        pytest.fail(f"the Debian package {package} (listed in scripts/setup.sh) is not installed: run bash scripts/setup.sh")
    return result.stdout.splitlines()


@pytest.fixture(scope="module")
def packaged_toolchain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(bin, include): copies of protoc and grpc_python_plugin, and every .proto file the listed packages ship,
    under the include folder at their path below /usr/include. protoc is copied, not linked: it adds the include
    folder beside its own binary (<bin>/../include) to the search path, which must be ours."""
    root = tmp_path_factory.mktemp("packaged")
    bin_dir, include = root / "bin", root / "include"
    bin_dir.mkdir()
    include.mkdir()
    owned: set[str] = set()
    for package in listed_packages():
        owned.update(packaged_files(package))
    for tool in ("/usr/bin/protoc", "/usr/bin/grpc_python_plugin"):
        assert tool in owned, f"{tool} is not shipped by a package listed in scripts/setup.sh"
        shutil.copy2(os.path.realpath(tool), bin_dir / Path(tool).name)
    for file in sorted(f for f in owned if f.endswith(".proto") and f.startswith("/usr/include/")):
        target = include / Path(file).relative_to("/usr/include")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, target)
    return bin_dir, include


def run_proto_build(bin_dir: Path, include: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": str(bin_dir),
        "HOME": os.environ.get("HOME", "/tmp"),
        "FAASCACHE_PROTO_INCLUDE": str(include),
        "FAASCACHE_PROTOS_DIR": str(PROTOS),
    }
    return subprocess.run(
        [PYTHON, "-m", "faascache_worker.protos", *args], cwd=WORKER_DIR, env=env, capture_output=True, text=True, check=False
    )


def test_the_worker_builds_its_stubs_with_only_the_packaged_compiler_and_packaged_protos(packaged_toolchain):
    bin_dir, include = packaged_toolchain
    result = run_proto_build(bin_dir, include, "--verify")
    assert result.returncode == 0, result.stderr
    assert f"with {bin_dir / 'protoc'}" in result.stdout
    assert f"from {include}" in result.stdout


@pytest.mark.parametrize("proto", sorted(p.name for p in PROTOS.glob("*.proto")))
def test_every_proto_imports_only_files_the_listed_packages_ship(packaged_toolchain, proto, tmp_path):
    bin_dir, include = packaged_toolchain
    result = subprocess.run(
        [
            str(bin_dir / "protoc"), f"-I{PROTOS}", f"-I{include}",
            f"--descriptor_set_out={tmp_path / 'out.pb'}", str(PROTOS / proto),
        ],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, f"{proto} needs a file no package in scripts/setup.sh ships:\n{result.stderr}"


def test_a_missing_well_known_proto_fails_naming_libprotobuf_dev(packaged_toolchain, tmp_path):
    bin_dir, _ = packaged_toolchain
    # Our own bin folder: its ../include is empty, as on a machine without libprotobuf-dev.
    lone_bin = tmp_path / "bin"
    shutil.copytree(bin_dir, lone_bin)
    (tmp_path / "include").mkdir()
    result = run_proto_build(lone_bin, tmp_path / "include", "--verify")
    assert result.returncode == 1
    assert "google/protobuf/duration.proto" in result.stderr
    assert "libprotobuf-dev" in result.stderr

"""Shared-memory maps: the C#-compatible layout, zero-copy reads, and who deletes what.

Malformed headers, bad regions and bad names are conformance fixtures (../../conformance/map-headers.json).
"""

from __future__ import annotations

import mmap
import os
import stat
import struct

import pytest
from conftest import write_host_map

from faascache_worker import shared_memory as shm
from faascache_worker.shared_memory import MAP_FOLDER, SharedMemoryManager, SharedMemoryMap


def test_written_map_has_the_hosts_header_and_is_private(shm_root):
    name, count = shm.create_map(b"hello cache")
    path = shm_root / MAP_FOLDER / name
    raw = path.read_bytes()
    assert count == 11
    assert raw[0] == 0x01
    assert struct.unpack_from("<q", raw, 1)[0] == 11
    assert raw[9:] == b"hello cache"
    assert len(raw) == 9 + 11
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(name) == 32 and int(name, 16) >= 0  # uuid4 hex: flat and unguessable


def test_round_trip_through_our_writer_and_reader(shm_root):
    payload = os.urandom(3 * 1024 * 1024 + 7)
    name, count = shm.create_map(payload)
    with SharedMemoryMap.open(name) as m:
        assert m.content_length == count == len(payload)
        assert m.view() == payload
        assert m.view(5, 10) == payload[5:15]


def test_str_is_written_as_utf8(shm_root):
    name, count = shm.create_map("zürich")
    assert count == len("zürich".encode())
    with SharedMemoryMap.open(name) as m:
        assert str(m.view(), "utf-8") == "zürich"


def test_empty_content(shm_root):
    name, count = shm.create_map(b"")
    assert count == 0
    with SharedMemoryMap.open(name) as m:
        assert m.view() == b""


def test_view_is_over_the_mapping_itself_so_nothing_is_copied(shm_root):
    name = write_host_map(shm_root, b"a" * 4096)
    m = SharedMemoryMap.open(name)
    view = m.view(0, 4096)
    assert isinstance(view.obj, mmap.mmap)  # a view of the mapping, not of a bytes copy
    assert view.readonly
    # Change the file through another, writable mapping: the change shows through our view.
    with open(shm_root / MAP_FOLDER / name, "r+b") as f, mmap.mmap(f.fileno(), 0) as writer:
        writer[9 + 100 : 9 + 105] = b"HELLO"
    assert bytes(view[100:105]) == b"HELLO"
    with pytest.raises(TypeError):
        view[0] = 1  # read-only
    m.close()
    with pytest.raises(ValueError):
        view[0]  # released with the map


def test_directories_come_from_the_app_setting(shm_root, tmp_path, monkeypatch):
    second = shm_root / "second"
    (second / MAP_FOLDER).mkdir(parents=True)
    name = write_host_map(second, b"found")
    monkeypatch.setenv(shm.DIRECTORIES_SETTING, f" {shm_root / 'missing-but-creatable'} , {second}")
    assert shm.roots() == [str(shm_root / "missing-but-creatable"), str(second)]
    with SharedMemoryMap.open(name) as m:  # the reader searches every directory
        assert m.view() == b"found"
    written, _ = shm.create_map(b"x")  # the writer uses the first usable one
    assert (shm_root / "missing-but-creatable" / MAP_FOLDER / written).is_file()
    monkeypatch.delenv(shm.DIRECTORIES_SETTING)
    assert shm.roots() == ["/dev/shm"]


def test_unusable_directory_falls_through_to_the_next(shm_root, monkeypatch):
    blocker = shm_root / "file-not-dir"
    blocker.write_bytes(b"")
    monkeypatch.setenv(shm.DIRECTORIES_SETTING, f"{blocker},{shm_root}")
    name, _ = shm.create_map(b"y")
    assert (shm_root / MAP_FOLDER / name).is_file()


def test_manager_unmaps_inputs_but_never_deletes_them(shm_root):
    manager = SharedMemoryManager()
    name = write_host_map(shm_root, b"input data")
    view = manager.open_input("inv-1", name, 0, 10)
    assert view == b"input data"
    manager.release_invocation("inv-1")
    with pytest.raises(ValueError):
        bytes(view)
    assert (shm_root / MAP_FOLDER / name).exists()


def test_manager_close_keeps_outputs_the_host_cache_adopted(shm_root):
    manager = SharedMemoryManager()
    name, _ = manager.put(b"out", "inv-1")
    assert manager.created_names_for("inv-1") == [name]
    assert manager.close_maps([name, "unknown"], delete_created=False) == {name: True, "unknown": False}
    assert (shm_root / MAP_FOLDER / name).exists()  # FunctionDataCache: the host owns the file now
    assert manager.close_maps([name], delete_created=False) == {name: False}  # already let go


def test_manager_close_deletes_outputs_when_the_host_copied_them(shm_root):
    manager = SharedMemoryManager()
    name, _ = manager.put(b"out")
    assert manager.close_maps([name], delete_created=True) == {name: True}
    assert not (shm_root / MAP_FOLDER / name).exists()


def test_manager_discards_outputs_of_a_failed_invocation(shm_root):
    manager = SharedMemoryManager()
    name, _ = manager.put(b"partial", "inv-9")
    manager.discard_created(manager.created_names_for("inv-9"))
    assert not (shm_root / MAP_FOLDER / name).exists()
    assert manager.created_names() == []


def test_close_tolerates_views_user_code_still_holds(shm_root):
    name = write_host_map(shm_root, b"kept")
    m = SharedMemoryMap.open(name)
    view = m.view()
    exported = memoryview(view)  # e.g. a library holding the buffer
    held = bytearray(1)
    held[:] = exported[:1]
    assert m.close() in (True, False)  # never raises
    assert m.closed

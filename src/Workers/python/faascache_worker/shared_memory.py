"""Shared-memory maps in the Functions host's Linux layout, read without copying.

A map is the file `<dir>/AzureFunctions/<name>`, `<dir>` from FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES
(comma list) or /dev/shm. Byte 0 is 0x01 (initialized), bytes 1..8 the content length as a
little-endian int64, content from byte 9 (the layout of the C# `SharedMemoryMap`).

Reading returns a read-only `memoryview` over an `mmap` of the file: the bytes the cachelet holds
are the bytes the function reads, nothing is copied (Faa$T's local hit). Writing creates a new file
that the host adopts (FaaSCache) or copies out and lets us delete (stock host).
"""

from __future__ import annotations

import logging
import mmap
import os
import re
import struct
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

DIRECTORIES_SETTING = "FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES"
DEFAULT_ROOT = "/dev/shm"
MAP_FOLDER = "AzureFunctions"
HEADER = struct.Struct("<Bq")  # initialized flag, content length
HEADER_SIZE = HEADER.size  # 9
INITIALIZED = 0x01

# The stock host's window for shared-memory transfer (SharedMemoryConstants); FunctionDataCache lifts the minimum.
MIN_BYTES_FOR_SHARED_MEMORY = 1024 * 1024
MAX_BYTES_FOR_SHARED_MEMORY = 2 * 1024 * 1024 * 1024 - 1

_VALID_NAME = re.compile(r"^[A-Za-z0-9._-]{1,255}$")
_log = logging.getLogger("faascache_worker.shared_memory")


class SharedMemoryError(Exception):
    """A map is missing, malformed, or cannot be created; the message names the map and the reason."""


def roots(environ: Mapping[str, str] | None = None) -> list[str]:
    """The configured root directories, in order (read each time: an environment reload may change them)."""
    setting = (environ if environ is not None else os.environ).get(DIRECTORIES_SETTING, "")
    dirs = [d.strip() for d in setting.split(",") if d.strip()]
    return dirs or [DEFAULT_ROOT]


def map_directories(environ: Mapping[str, str] | None = None) -> list[str]:
    return [os.path.join(r, MAP_FOLDER) for r in roots(environ)]


def validate_map_name(name: str) -> None:
    """Map names are flat file names; anything with a path separator is refused."""
    if not _VALID_NAME.match(name or "") or name in (".", ".."):
        raise SharedMemoryError(f"{name!r} is not a valid shared-memory map name (letters, digits, '.', '_', '-')")


def find_map(name: str, environ: Mapping[str, str] | None = None) -> str:
    """Path of an existing map, searching every configured directory as the host does."""
    validate_map_name(name)
    searched = []
    for directory in map_directories(environ):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
        searched.append(directory)
    raise SharedMemoryError(f"shared-memory map {name!r} not found in {', '.join(searched)}")


def parse_header(name: str, header: bytes | memoryview | mmap.mmap, file_size: int) -> int:
    """The content length a map's header declares, after the checks every input gets: the file holds the
    9-byte header, byte 0 is 0x01, and the length is neither negative nor beyond the file."""
    if file_size < HEADER_SIZE or len(header) < HEADER_SIZE:
        raise _shorter_than_header(name, file_size)
    flag, length = HEADER.unpack_from(header, 0)
    if flag != INITIALIZED:
        raise SharedMemoryError(f"shared-memory map {name!r} is not initialized (byte 0 is 0x{flag:02x}, expected 0x01)")
    if length < 0 or length > file_size - HEADER_SIZE:
        raise SharedMemoryError(
            f"shared-memory map {name!r} declares {length} content bytes but the file holds {file_size - HEADER_SIZE}"
        )
    return length


def _shorter_than_header(name: str, file_size: int) -> SharedMemoryError:
    return SharedMemoryError(f"shared-memory map {name!r} is {file_size} bytes, shorter than its {HEADER_SIZE}-byte header")


class SharedMemoryMap:
    """One mapped file. `view()` hands out zero-copy memoryviews; `close()` unmaps when no one holds them."""

    def __init__(self, name: str, path: str, mapped: mmap.mmap, content_length: int, writable: bool) -> None:
        self.name = name
        self.path = path
        self.content_length = content_length
        self.writable = writable
        self._mmap: mmap.mmap | None = mapped
        self._views: list[memoryview] = []

    @classmethod
    def open(cls, name: str, environ: Mapping[str, str] | None = None) -> SharedMemoryMap:
        """Maps an existing map read-only and checks its header against the file size."""
        path = find_map(name, environ)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            size = os.fstat(fd).st_size
            if size < HEADER_SIZE:
                raise _shorter_than_header(name, size)  # (an empty file cannot even be mapped)
            mapped = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)  # the mapping keeps the pages; the descriptor is not needed
        try:
            length = parse_header(name, mapped, size)
        except SharedMemoryError:
            mapped.close()
            raise
        return cls(name, path, mapped, length, writable=False)

    @property
    def closed(self) -> bool:
        return self._mmap is None

    def view(self, offset: int = 0, count: int | None = None) -> memoryview:
        """Read-only memoryview of content[offset:offset+count] over the mapping itself (no copy)."""
        if self._mmap is None:
            raise SharedMemoryError(f"shared-memory map {self.name!r} is closed")
        if count is None or count < 0:
            count = self.content_length - offset
        if offset < 0 or offset + count > self.content_length:
            raise SharedMemoryError(
                f"region [{offset}, {offset + count}) is outside shared-memory map {self.name!r} "
                f"of {self.content_length} content bytes"
            )
        whole = memoryview(self._mmap)
        view = whole[HEADER_SIZE + offset : HEADER_SIZE + offset + count].toreadonly()
        whole.release()
        self._views.append(view)
        return view

    def close(self) -> bool:
        """Releases our views and unmaps. If user code still holds a view (or a buffer exported from one),
        the mapping is left to the garbage collector instead of failing; returns False in that case."""
        mapped, self._mmap = self._mmap, None
        if mapped is None:
            return True
        for view in self._views:
            try:
                view.release()
            except BufferError:
                pass
        self._views.clear()
        try:
            mapped.close()
            return True
        except BufferError:
            _log.debug("shared-memory map %s still referenced by user code; unmapped when collected", self.name)
            return False

    def __enter__(self) -> SharedMemoryMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_bytes_view(data: bytes | bytearray | memoryview | str) -> memoryview:
    if isinstance(data, str):
        data = data.encode("utf-8")
    view = memoryview(data)
    if not view.c_contiguous:
        return memoryview(view.tobytes())
    if view.format != "B" or view.ndim != 1:
        return view.cast("B")
    return view


def create_map(
    data: bytes | bytearray | memoryview | str, environ: Mapping[str, str] | None = None
) -> tuple[str, int]:
    """Writes `data` into a new map (random flat name, mode 0600) and returns (name, content length)."""
    name, _path, count = _create_map(data, environ)
    return name, count


def _create_map(
    data: bytes | bytearray | memoryview | str, environ: Mapping[str, str] | None
) -> tuple[str, str, int]:
    # Space is reserved with posix_fallocate before mapping, so a full tmpfs gives a clean error (and
    # the next directory is tried) instead of a SIGBUS while copying.
    content = _as_bytes_view(data)
    count = content.nbytes
    errors: list[str] = []
    for directory in map_directories(environ):
        name = uuid.uuid4().hex
        path = os.path.join(directory, name)
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError as e:
            errors.append(f"{directory}: {e.strerror or e}")
            continue
        try:
            os.posix_fallocate(fd, 0, HEADER_SIZE + count)
            with mmap.mmap(fd, HEADER_SIZE + count, access=mmap.ACCESS_WRITE) as mapped:
                mapped[HEADER_SIZE : HEADER_SIZE + count] = content
                # Flag written last: a reader never sees "initialized" with partial content.
                HEADER.pack_into(mapped, 0, INITIALIZED, count)
            return name, path, count
        except OSError as e:
            errors.append(f"{directory}: {e.strerror or e}")
            _unlink_quietly(path)
        except BaseException:
            _unlink_quietly(path)
            raise
        finally:
            os.close(fd)
    raise SharedMemoryError(f"cannot create a shared-memory map of {count} bytes: {'; '.join(errors)}")


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


@dataclass
class _Created:
    path: str
    invocation_id: str | None


@dataclass
class SharedMemoryManager:
    """The worker's handles: input maps opened per invocation, and output maps it created.

    Input maps belong to the host (its cachelet), so they are only ever unmapped, never deleted.
    Output maps are ours until the host takes them: with FunctionDataCache the host adopts the file
    and we only forget it; without it the host copies the data out and we delete the file when asked.
    """

    environ: Mapping[str, str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _inputs: dict[str, list[SharedMemoryMap]] = field(default_factory=dict)
    _created: dict[str, _Created] = field(default_factory=dict)

    def open_input(self, invocation_id: str, name: str, offset: int, count: int) -> memoryview:
        """Zero-copy view of an input region, kept mapped until `release_invocation`."""
        shm_map = SharedMemoryMap.open(name, self.environ)
        try:
            view = shm_map.view(offset, count)
        except BaseException:
            shm_map.close()
            raise
        with self._lock:
            self._inputs.setdefault(invocation_id, []).append(shm_map)
        return view

    def release_invocation(self, invocation_id: str) -> None:
        """Unmaps the invocation's inputs (the files stay: the host owns them)."""
        with self._lock:
            maps = self._inputs.pop(invocation_id, [])
        for shm_map in maps:
            shm_map.close()

    def put(self, data: bytes | bytearray | memoryview | str, invocation_id: str | None = None) -> tuple[str, int]:
        """Writes an output map and remembers it until the host closes it."""
        name, path, count = _create_map(data, self.environ)
        with self._lock:
            self._created[name] = _Created(path, invocation_id)
        return name, count

    def discard_created(self, names: Iterable[str]) -> None:
        """Deletes maps we wrote for an invocation that then failed: the host never learns their names."""
        for name in names:
            with self._lock:
                created = self._created.pop(name, None)
            if created:
                _unlink_quietly(created.path)

    def close_maps(self, names: Iterable[str], delete_created: bool) -> dict[str, bool]:
        """Answers CloseSharedMemoryResourcesRequest: True for each map we held and have now let go of."""
        results: dict[str, bool] = {}
        for name in names:
            with self._lock:
                created = self._created.pop(name, None)
                inputs = [m for maps in self._inputs.values() for m in maps if m.name == name]
            if created is not None:
                if delete_created:
                    _unlink_quietly(created.path)
                results[name] = True
            elif inputs:
                for shm_map in inputs:  # unmapped only: the file is the host's
                    shm_map.close()
                results[name] = True
            else:
                results[name] = False
        return results

    def created_names_for(self, invocation_id: str) -> list[str]:
        with self._lock:
            return [name for name, c in self._created.items() if c.invocation_id == invocation_id]

    def created_names(self) -> list[str]:
        with self._lock:
            return list(self._created)

    def close_all(self, delete_created: bool) -> None:
        """At shutdown: unmap every input; delete our unclaimed outputs only when no host cache may own them."""
        with self._lock:
            invocations = list(self._inputs)
        for invocation_id in invocations:
            self.release_invocation(invocation_id)
        self.close_maps(self.created_names(), delete_created)

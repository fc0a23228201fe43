"""`func.InputStream` backed by a memoryview: a blob input read straight from the cachelet's mapping.

Nothing is copied until the function reads: `read()` returns bytes (the one copy the API implies),
`readinto()` copies into the caller's buffer, and `getbuffer()` (as on io.BytesIO) hands out the
read-only view itself for code that can work on a buffer (numpy.frombuffer, hashlib, ...).
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any


class MemoryViewStream(io.BufferedIOBase):
    """Read-only, seekable binary stream over a bytes-like object, without copying it."""

    def __init__(
        self,
        data: bytes | bytearray | memoryview,
        *,
        name: str | None = None,
        uri: str | None = None,
        length: int | None = None,
    ) -> None:
        super().__init__()
        view = memoryview(data)
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        self._view: memoryview = view.toreadonly()
        self._pos = 0
        self._name = name
        self._uri = uri
        self._length = len(self._view) if length is None else length

    # --- the attributes of azure.functions.InputStream ---
    @property
    def name(self) -> str | None:
        """Blob path (container/blob) when the host told us, else None."""
        return self._name

    @property
    def uri(self) -> str | None:
        return self._uri

    @property
    def length(self) -> int:
        """Blob length in bytes."""
        return self._length

    # --- io ---
    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def _check(self) -> memoryview:
        if self.closed:
            raise ValueError("I/O operation on closed InputStream")
        return self._view

    def read(self, size: int | None = -1) -> bytes:
        view = self._check()
        end = len(view) if size is None or size < 0 else min(len(view), self._pos + size)
        start, self._pos = self._pos, max(self._pos, end)
        return view[start:end].tobytes()

    read1 = read

    def readinto(self, buffer: Any) -> int:
        view = self._check()
        target = memoryview(buffer).cast("B")
        n = max(0, min(len(target), len(view) - self._pos))
        target[:n] = view[self._pos : self._pos + n]
        self._pos += n
        return n

    readinto1 = readinto

    def peek(self, size: int = 0) -> bytes:
        view = self._check()
        end = len(view) if size <= 0 else min(len(view), self._pos + size)
        return view[self._pos : end].tobytes()

    def readline(self, size: int | None = -1) -> bytes:
        view = self._check()
        end = len(view) if size is None or size < 0 else min(len(view), self._pos + size)
        # Search in bounded chunks so a line costs its own length, not the whole blob.
        pos, chunk = self._pos, 64 * 1024
        while pos < end:
            found = bytes(view[pos : min(end, pos + chunk)]).find(b"\n")
            if found >= 0:
                end = pos + found + 1
                break
            pos += chunk
        return self.read(end - self._pos)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        view = self._check()
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = len(view) + offset
        else:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def tell(self) -> int:
        self._check()
        return self._pos

    def getbuffer(self) -> memoryview:
        """The whole content as a read-only memoryview over the shared memory (no copy)."""
        return self._check()[:]

    def close(self) -> None:
        if not self.closed:
            try:
                self._view.release()
            except BufferError:  # the caller still holds a buffer from getbuffer(); it stays valid
                pass
        super().close()

    def __repr__(self) -> str:
        return f"<InputStream name={self._name!r} length={self._length}>"


@lru_cache(maxsize=None)
def input_stream_class(base: type) -> type:
    """Our stream as a subclass of the app's `func.InputStream` (ours or the real library's, which is
    abstract), so `isinstance(x, func.InputStream)` holds in user code."""
    if issubclass(MemoryViewStream, base):
        return MemoryViewStream
    return type("InputStream", (MemoryViewStream, base), {"__module__": __name__})


def make_input_stream(
    base: type, data: bytes | bytearray | memoryview, *, name: str | None = None, uri: str | None = None,
    length: int | None = None,
) -> MemoryViewStream:
    return input_stream_class(base)(data, name=name, uri=uri, length=length)

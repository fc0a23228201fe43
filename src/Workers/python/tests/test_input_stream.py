"""func.InputStream over a memoryview: file-like, seekable, and no copy until read."""

from __future__ import annotations

import abc
import io
import mmap

import pytest
from conftest import write_host_map

from faascache_worker.input_stream import MemoryViewStream, make_input_stream
from faascache_worker.shared_memory import MAP_FOLDER, SharedMemoryMap


def test_read_all_and_in_pieces():
    s = MemoryViewStream(b"abcdefghij", name="in/x.txt", uri="http://127.0.0.1/in/x.txt")
    assert (s.name, s.uri, s.length) == ("in/x.txt", "http://127.0.0.1/in/x.txt", 10)
    assert s.read(3) == b"abc"
    assert s.read(0) == b""
    assert s.read1(2) == b"de"
    assert s.read() == b"fghij"
    assert s.read() == b""
    assert s.read(5) == b""


def test_readinto_seek_tell_readline():
    s = MemoryViewStream(b"line1\nline2\nrest")
    buf = bytearray(4)
    assert s.readinto(buf) == 4 and buf == b"line"
    assert s.tell() == 4
    assert s.seek(0) == 0
    assert s.readline() == b"line1\n"
    assert s.readline(3) == b"lin"
    assert list(s) == [b"e2\n", b"rest"]
    assert s.seek(-4, io.SEEK_END) == 12 and s.read() == b"rest"
    s.seek(2)
    assert s.seek(2, io.SEEK_CUR) == 4
    assert s.peek(2) == b"1\n" and s.tell() == 4
    big = bytearray(100)
    s.seek(12)
    assert s.readinto(big) == 4 and big[:4] == b"rest"
    with pytest.raises(ValueError):
        s.seek(-1)


def test_is_read_only_and_seekable():
    s = MemoryViewStream(b"x")
    assert s.readable() and s.seekable() and not s.writable()
    with pytest.raises(io.UnsupportedOperation):
        s.write(b"y")


def test_closed_stream_refuses_reads():
    s = MemoryViewStream(b"x")
    s.close()
    with pytest.raises(ValueError):
        s.read()


def test_nothing_is_copied_until_read(shm_root):
    name = write_host_map(shm_root, b"original")
    m = SharedMemoryMap.open(name)
    stream = MemoryViewStream(m.view())
    assert isinstance(stream.getbuffer().obj, mmap.mmap)  # getbuffer is the mapping, zero copy
    # Writing the file after the stream exists shows in what the stream reads: it holds no copy.
    with open(shm_root / MAP_FOLDER / name, "r+b") as f, mmap.mmap(f.fileno(), 0) as writer:
        writer[9:17] = b"CHANGED!"
    assert stream.read() == b"CHANGED!"
    stream.close()
    m.close()


def test_is_an_instance_of_the_apps_input_stream(func):
    s = make_input_stream(func.InputStream, b"abc", name="c/b")
    assert isinstance(s, func.InputStream)
    assert isinstance(s, io.BufferedIOBase)
    assert s.read() == b"abc"


def test_fits_an_abstract_input_stream_like_the_real_librarys():
    class RealLikeInputStream(io.BufferedIOBase, abc.ABC):
        @abc.abstractmethod
        def read(self, size=-1): ...

        @property
        @abc.abstractmethod
        def name(self): ...

        @property
        @abc.abstractmethod
        def length(self): ...

        @property
        @abc.abstractmethod
        def uri(self): ...

    s = make_input_stream(RealLikeInputStream, memoryview(b"data"))
    assert isinstance(s, RealLikeInputStream) and s.read() == b"data" and s.length == 4

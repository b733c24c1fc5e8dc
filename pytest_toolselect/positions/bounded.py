"""Reading a file the plugin was pointed at: a regular file only, never more than a cap.

A path in a config or on the command line may name anything: ``/dev/zero`` never ends,
``/dev/urandom`` neither, a FIFO blocks until a writer comes, and ``stat()`` gives each of
them a size of 0. So the file is opened without blocking, its type checked on the opened
descriptor, and at most the cap plus one byte read. The refusals are ``OSError``\\ s, so a
caller that treats an unreadable file as absent keeps doing so.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

#: what a path names when it is not a regular file, by its type
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))
#: open flags: a FIFO opens at once instead of waiting for a writer; no terminal is taken over
_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


class NotRegularFile(OSError):
    """The path names a folder, a device, a FIFO or a socket: nothing to read as a file."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"it is {kind}, not a regular file", str(path))
        self.kind = kind


class FileTooLarge(OSError):
    """The file holds more than the cap (``size`` is None when it grew past it as it was read)."""

    def __init__(self, path: str | os.PathLike[str], size: int | None, cap: int) -> None:
        shown = f"{size / 1024 / 1024:.1f} MB" if size is not None else "larger than the cap"
        #: the size and the cap in words ("3.2 MB; files over 1 MB are refused")
        self.said = f"{shown}; files over {_mb(cap)} are refused"
        super().__init__(errno.EFBIG, f"it is {self.said}", str(path))
        self.size = size
        self.cap = cap


def _mb(n: int) -> str:
    return f"{n // 1024 // 1024} MB" if n >= 1024 * 1024 else f"{n} bytes"


def kind_of(mode: int) -> str | None:
    """What a file of this mode is, when it is not a regular file (None: it is one)."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def not_regular(path: Path) -> str | None:
    """What an existing path is when it is not a regular file; None when it is one or is
    missing (for a file the plugin writes, such as the cache)."""
    try:
        return kind_of(os.stat(path).st_mode)  # stat never opens, so it never blocks
    except OSError:
        return None


def read_bounded(path: str | os.PathLike[str], cap: int, *, head: bool = False) -> bytes:
    """The bytes of a regular file: ``NotRegularFile`` for anything else, ``FileTooLarge``
    past ``cap`` bytes (or, with ``head``, just the first ``cap`` bytes)."""
    fd = os.open(path, _FLAGS)
    try:
        info = os.fstat(fd)
        kind = kind_of(info.st_mode)
        if kind is not None:
            raise NotRegularFile(path, kind)
        if info.st_size > cap and not head:
            raise FileTooLarge(path, info.st_size, cap)  # said before a byte is read
        want = cap if head else cap + 1
        chunks: list[bytes] = []
        while want > 0:
            chunk = os.read(fd, min(want, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        raise FileTooLarge(path, None, cap)
    return data

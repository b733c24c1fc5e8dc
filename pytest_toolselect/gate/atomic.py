"""Atomic file writes (the baseline, the results and the reports).

A temp file in the same folder, fsync, then os.replace: a reader never sees half a
file, and a run killed mid-write leaves the old file in place.
"""

from __future__ import annotations

import contextlib
import glob
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

#: the temp file a write goes through: hidden, beside the file and named after it
#: (`.main.json.unfinished-k2j9x0.tmp`). Only a process killed mid-write (SIGKILL, power
#: loss) leaves one; nothing reads it, and the next write of that file removes it.
TEMP_INFIX = ".unfinished-"
TEMP_SUFFIX = ".tmp"
#: a leftover this old has no live writer (a write takes milliseconds); younger ones may
#: belong to another run writing the same file right now, and are left alone
STALE_TEMP_SECONDS = 600.0


def temp_prefix(path: Path) -> str:
    return f".{path.name}{TEMP_INFIX}"


#: small pieces joined into one before each write: an encoder yields tokens of a few
#: bytes, and a write call per token is slow, a list of them all is large
PIECES_PER_WRITE = 4096


def joined(pieces: Iterable[str]) -> Iterator[str]:
    """The pieces joined a few thousand at a time: the text whole, never held whole."""
    batch: list[str] = []
    for piece in pieces:
        batch.append(piece)
        if len(batch) >= PIECES_PER_WRITE:
            yield "".join(batch)
            batch.clear()
    if batch:
        yield "".join(batch)


def write_text(path: Path, text: str | Iterable[str]) -> None:
    """Write atomically: a temp file in the same folder, fsync, then os.replace.

    ``text`` may come in pieces (a large report is written as it is rendered).

    Killed at any point, the file is either the old one or the complete new one; two
    runs writing at once leave one of their two texts. The file keeps the permissions
    it had (a new one gets the umask's). A symbolic link is written through: its target
    gets the new text and the link stays a link.
    """
    if path.is_symlink():
        # os.replace on the link itself would swap the link for a plain file
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                for piece in text:
                    fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file 0600: a replace must not change who can read the file
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    remove_stale_temps(path)


#: how long a run waits for another run's baseline write to finish
LOCK_WAIT_SECONDS = 120.0


@contextlib.contextmanager
def locked(path: Path, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold an exclusive lock for a read-merge-write of path: flock on its folder.

    The file itself is replaced on write, so it cannot hold a lock; a sidecar lock file
    would be left behind by a run killed while holding it. A folder's lock leaves
    nothing and is released by the kernel when its holder dies. Another run holding it
    is waited for; past ``wait`` seconds, an OSError.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): writes stay atomic
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError(f"another run has been writing a baseline in {path.parent} "
                                  f"for over {wait:.0f} s") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def remove_stale_temps(path: Path, older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Remove the temp files killed writes of this file left behind; the ones removed."""
    removed = []
    cutoff = time.time() - older_than
    for leftover in path.parent.glob(f"{glob.escape(temp_prefix(path))}*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            if leftover.is_file() and leftover.stat().st_mtime < cutoff:
                leftover.unlink()
                removed.append(leftover)
    return removed


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    # os.umask() can only be read by setting it, which races with other threads creating files
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

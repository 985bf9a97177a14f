"""One process per data directory: an exclusive lock, held for the life of the process.

The embedded log is one SQLite file with a single writer in mind: its processors assume they
are the only member of their groups. Two processes on one directory would both decide every
table and write every hand twice. So ``mahjong-planet run`` takes ``flock`` on
``<data>/mahjong-planet.lock`` before it opens anything there; the kernel drops the lock
when the process ends, however it ends (``kill -9`` included), so a stale lock file is
harmless and never needs deleting.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from types import TracebackType

LOCK_FILE = "mahjong-planet.lock"


class DataDirInUse(RuntimeError):
    """Another process holds the data directory."""


class DataDirLock:
    """The held lock of one data directory (``release`` or the end of the process frees it)."""

    def __init__(self, directory: Path, fd: int) -> None:
        self.directory = directory
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None

    def __enter__(self) -> DataDirLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def lock_data_dir(directory: str | Path) -> DataDirLock:
    """Take the directory's exclusive lock, or raise ``DataDirInUse`` at once.

    A process that is refused changes nothing: the directory and the lock file it finds are
    the holder's, and only the holder writes its pid into the file.
    """
    path = Path(directory)
    lock_path = path / LOCK_FILE
    if not lock_path.exists():
        path.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = ""
        with contextlib.suppress(OSError, ValueError):
            holder = os.pread(fd, 32, 0).decode().strip()
        os.close(fd)
        by = f" by process {holder}" if holder.isdigit() else ""
        raise DataDirInUse(
            f"the data directory {path} is in use{by}: one mahjong-planet process per data "
            "directory (stop the other one, or give this one another --data)"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return DataDirLock(path, fd)

"""Where lakerun.distributed's launcher writes the ranks' prefixed lines: this process's sys.stdout and sys.stderr.

When sys.stdout is the process's file descriptor 1 (and sys.stderr fd 2), the launcher writes there itself. When
either has been replaced by an object without that descriptor (a notebook's or an IDE's stream, pytest's capsys,
``sys.stdout = open(...)``), the launcher writes into a pipe instead, and a thread copies what arrives to the
object, so the lines show where this process's own prints do.
"""

from __future__ import annotations

import codecs
import io
import os
import sys
import threading
from typing import List, Optional, TextIO, Tuple

# How long leaving waits for a copying thread to see the end of its pipe (the launcher's orphan guard, a forked
# copy of this process, may hold the write end a moment longer).
JOIN_TIMEOUT_S = 5.0


def _descriptor(stream: TextIO) -> Optional[int]:
    try:
        return stream.fileno()
    except (AttributeError, io.UnsupportedOperation, OSError, ValueError):
        return None


class _Copier(threading.Thread):
    """Copies a pipe's bytes, decoded as UTF-8, to a text stream until the pipe's end."""

    def __init__(self, read_fd: int, stream: TextIO) -> None:
        super().__init__(name="lakerun-console", daemon=True)
        self.read_fd = read_fd
        self.stream = stream

    def run(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            chunk = os.read(self.read_fd, 65536)
            text = decoder.decode(chunk, final=not chunk)
            if text:
                self.stream.write(text)
                self.stream.flush()
            if not chunk:
                break
        os.close(self.read_fd)


class Console:
    """Context manager: ``fds`` is (stdout_fd, stderr_fd) for the launcher while inside."""

    def __init__(self) -> None:
        self.fds: Tuple[int, int] = (1, 2)
        self._write_fds: List[int] = []
        self._copiers: List[_Copier] = []

    def __enter__(self) -> "Console":
        fds = []
        for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
            if stream is None or _descriptor(stream) == fd:
                fds.append(fd)
                continue
            stream.flush()
            read_fd, write_fd = os.pipe()  # not inherited by the ranks (close-on-exec)
            copier = _Copier(read_fd, stream)
            copier.start()
            self._copiers.append(copier)
            self._write_fds.append(write_fd)
            fds.append(write_fd)
        self.fds = (fds[0], fds[1])
        return self

    def __exit__(self, *exc_info) -> None:
        for fd in self._write_fds:
            os.close(fd)
        for copier in self._copiers:
            copier.join(timeout=JOIN_TIMEOUT_S)

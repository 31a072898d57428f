"""A cache file written one frame at a time and put in place atomically: the base of the PC2,
Alembic and USD writers (``pc2``, ``cache_formats``), so a bake of any length holds one frame per
object, not all of them.

The header and frames go to a temporary file beside the target; :meth:`FrameStream.sync` (after
exactly ``samples`` frames) writes the format's tail and flushes the file to disk without touching
the target, :meth:`FrameStream.commit` renames it over the target, :meth:`FrameStream.abort`
deletes it and leaves the target as it was.
"""

import os
import tempfile

import numpy as np


class FrameStream:
    """``samples`` frames of ``points x 3`` positions into ``path``. A format subclasses it with
    :meth:`_frame` (write one checked float32 frame) and optionally :meth:`_tail` (write what
    follows the last frame); its constructor writes the header with :meth:`write` after calling
    this one."""

    suffix = ".tmp"

    def __init__(self, path, points, samples):
        if points < 1 or samples < 1:
            raise ValueError(f"a cache needs frames and points ({samples} x {points})")
        self.path, self.points, self.samples, self.done = path, int(points), int(samples), 0
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(prefix=".overtone-", suffix=self.suffix, dir=folder)
        try:
            # mkstemp makes the file private (0600); a cache is shared like any file the user writes.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.tmp, 0o666 & ~umask)
            self.file = os.fdopen(fd, "w+b")
        except BaseException:
            os.close(fd)
            os.unlink(self.tmp)
            raise
        self.at = 0  # bytes written so far: the offset of the next write

    def write(self, data):
        """Appends ``data`` (bytes); returns the offset it starts at."""
        at = self.at
        self.file.write(data)
        self.at += len(data)
        return at

    def patch(self, offset, data):
        """Overwrites ``data`` at ``offset`` (inside what was written), then goes back to the end."""
        self.file.seek(offset)
        self.file.write(data)
        self.file.seek(self.at)

    def push(self, frame):
        """Appends one frame (``points x 3``); refuses a wrong shape, NaN/Inf, or one frame too many."""
        frame = np.ascontiguousarray(frame, dtype="<f4")
        if frame.shape != (self.points, 3):
            raise ValueError(f"cache frame {self.done} has shape {frame.shape}, expected ({self.points}, 3)")
        if not np.isfinite(frame).all():
            raise ValueError(f"cache frame {self.done} contains NaN or Inf; nothing was written")
        if self.done == self.samples:
            raise ValueError(f"the cache has {self.samples} frames; one more was pushed")
        self._frame(frame)
        self.done += 1

    def _frame(self, frame):
        raise NotImplementedError

    def _tail(self):
        pass

    def sync(self):
        """Completes the temporary file (every frame and the format's tail there, flushed to
        disk); the target is not touched yet."""
        if self.done != self.samples:
            raise ValueError(f"the cache got {self.done} of {self.samples} frames; nothing was written")
        self._tail()
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()

    def commit(self):
        """Renames the completed temporary file over the target (after :meth:`sync`)."""
        os.replace(self.tmp, self.path)

    def finish(self):
        """Completes the file and renames it over the target."""
        self.sync()
        self.commit()

    def abort(self):
        """Deletes the temporary file (the target untouched); harmless after :meth:`finish`."""
        if not self.file.closed:
            self.file.close()
        if os.path.exists(self.tmp):
            os.unlink(self.tmp)


def write_all(stream, frames):
    """Pushes every frame of ``frames`` into ``stream`` and finishes it; on any failure the
    temporary file is deleted and the target left as it was."""
    try:
        for frame in frames:
            stream.push(frame)
        stream.finish()
    except BaseException:
        stream.abort()
        raise

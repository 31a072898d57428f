"""PC2 point caches (the format Blender's Mesh Cache modifier reads), written atomically.

Layout (little-endian): ``char[12] "POINTCACHE2\\0"; int32 version = 1; int32 points;
float32 start_frame; float32 sample_rate; int32 samples;`` then ``samples x points x 3`` float32,
frame-major.
"""

import os
import struct
import tempfile

import numpy as np

MAGIC = b"POINTCACHE2\0"


def write_pc2(path, frames, start_frame, sample_rate=1.0):
    """Writes ``frames`` (``samples x points x 3``) to ``path`` through a temporary file in the
    same folder and a rename, so an interrupted write never leaves a partial cache."""
    frames = np.asarray(frames)
    if frames.ndim != 3 or frames.shape[2] != 3 or frames.shape[0] < 1 or frames.shape[1] < 1:
        raise ValueError(f"point cache frames have shape {frames.shape}, expected (samples, points, 3)")
    if not np.isfinite(frames).all():
        raise ValueError("point cache frames contain NaN or Inf; nothing was written")
    stream = Pc2Stream(path, frames.shape[1], frames.shape[0], start_frame, sample_rate)
    try:
        for frame in frames:
            stream.push(frame)
        stream.finish()
    except BaseException:
        stream.abort()
        raise


class Pc2Stream:
    """A PC2 file written one frame at a time, so a long bake holds one frame, not all of them:
    the header and frames go to a temporary file beside ``path``; :meth:`finish` (after exactly
    ``samples`` frames) syncs it and renames it over ``path``, :meth:`abort` deletes it and
    leaves ``path`` as it was."""

    def __init__(self, path, points, samples, start_frame, sample_rate=1.0):
        if points < 1 or samples < 1:
            raise ValueError(f"a point cache needs frames and points ({samples} x {points})")
        self.path, self.points, self.samples, self.done = path, int(points), int(samples), 0
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(prefix=".overtone-", suffix=".pc2.tmp", dir=folder)
        try:
            # mkstemp makes the file private (0600); a cache is shared like any file the user writes.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.tmp, 0o666 & ~umask)
            self.file = os.fdopen(fd, "wb")
            self.file.write(MAGIC + struct.pack("<iiffi", 1, self.points, float(start_frame),
                                                float(sample_rate), self.samples))
        except BaseException:
            os.unlink(self.tmp)
            raise

    def push(self, frame):
        """Appends one frame (``points x 3``); refuses a wrong shape, NaN/Inf, or one frame too many."""
        frame = np.ascontiguousarray(frame, dtype="<f4")
        if frame.shape != (self.points, 3):
            raise ValueError(f"point cache frame {self.done} has shape {frame.shape}, expected ({self.points}, 3)")
        if not np.isfinite(frame).all():
            raise ValueError(f"point cache frame {self.done} contains NaN or Inf; nothing was written")
        if self.done == self.samples:
            raise ValueError(f"point cache has {self.samples} frames; one more was pushed")
        self.file.write(frame.tobytes())
        self.done += 1

    def sync(self):
        """Completes the temporary file (all frames there, flushed to disk); ``path`` is not
        touched yet."""
        if self.done != self.samples:
            raise ValueError(f"point cache got {self.done} of {self.samples} frames; nothing was written")
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()

    def commit(self):
        """Renames the completed temporary file over ``path`` (after :meth:`sync`)."""
        os.replace(self.tmp, self.path)

    def finish(self):
        """Completes the file and renames it over ``path``."""
        self.sync()
        self.commit()

    def abort(self):
        """Deletes the temporary file (``path`` untouched); harmless after :meth:`finish`."""
        if not self.file.closed:
            self.file.close()
        if os.path.exists(self.tmp):
            os.unlink(self.tmp)


def read_pc2(path):
    """Reads a PC2 file: returns ``(frames, start_frame, sample_rate)``."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 32 or data[:12] != MAGIC:
        raise ValueError(f"{path} is not a PC2 file")
    version, points, start, rate, samples = struct.unpack("<iiffi", data[12:32])
    if version != 1 or points <= 0 or samples <= 0 or len(data) != 32 + 12 * points * samples:
        raise ValueError(f"{path}: inconsistent PC2 header (version {version}, {points} points, "
                         f"{samples} samples, {len(data)} bytes)")
    frames = np.frombuffer(data[32:], dtype="<f4").reshape(samples, points, 3)
    return frames, start, rate

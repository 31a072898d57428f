"""PC2 point caches (the format Blender's Mesh Cache modifier reads), written atomically.

Layout (little-endian): ``char[12] "POINTCACHE2\\0"; int32 version = 1; int32 points;
float32 start_frame; float32 sample_rate; int32 samples;`` then ``samples x points x 3`` float32,
frame-major.
"""

import struct

import numpy as np

from . import frame_stream

MAGIC = b"POINTCACHE2\0"


def write_pc2(path, frames, start_frame, sample_rate=1.0):
    """Writes ``frames`` (``samples x points x 3``) to ``path`` through a temporary file in the
    same folder and a rename, so an interrupted write never leaves a partial cache."""
    frames = np.asarray(frames)
    if frames.ndim != 3 or frames.shape[2] != 3 or frames.shape[0] < 1 or frames.shape[1] < 1:
        raise ValueError(f"point cache frames have shape {frames.shape}, expected (samples, points, 3)")
    if not np.isfinite(frames).all():
        raise ValueError("point cache frames contain NaN or Inf; nothing was written")
    frame_stream.write_all(Pc2Stream(path, frames.shape[1], frames.shape[0], start_frame, sample_rate), frames)


class Pc2Stream(frame_stream.FrameStream):
    """A PC2 file written one frame at a time (``frame_stream.FrameStream``): the header, then
    each pushed frame as it comes."""

    suffix = ".pc2.tmp"

    def __init__(self, path, points, samples, start_frame, sample_rate=1.0):
        super().__init__(path, points, samples)
        try:
            self.write(MAGIC + struct.pack("<iiffi", 1, self.points, float(start_frame),
                                           float(sample_rate), self.samples))
        except BaseException:
            self.abort()
            raise

    def _frame(self, frame):
        self.write(frame.tobytes())


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

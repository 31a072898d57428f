//! The frame part of a point cache written one frame at a time (PC2, MDD): `num_frames` frames of
//! `num_points × 3` `f32`, in the format's byte order, after a header its writer has written.

use crate::error::{OvertoneError, Result};
use crate::io::background_file::BackgroundFile;
use crate::io::AtomicFile;

/// The point and frame counts of a cache header (`i32` in PC2 and MDD), refusing an empty cache
/// or counts beyond 32 bits. `what` names the format in the errors.
pub(crate) fn header_counts(what: &str, num_points: usize, num_frames: usize) -> Result<(i32, i32)> {
    if num_frames == 0 || num_points == 0 {
        return Err(OvertoneError::setting(
            what,
            "empty",
            "a point cache needs at least one frame and one point",
        ));
    }
    match (i32::try_from(num_points), i32::try_from(num_frames)) {
        (Ok(np), Ok(nf)) => Ok((np, nf)),
        _ => Err(OvertoneError::setting(
            what,
            format!("{num_points} points x {num_frames} frames"),
            "a cache header counts points and frames in 32 bits",
        )),
    }
}

/// Frames appended to an [`AtomicFile`] (on a writer thread: [`BackgroundFile`]), counted
/// against the number announced in the header.
pub(crate) struct FrameStream {
    file: BackgroundFile,
    /// The format, in error messages (`"pc2"`, `"mdd"`).
    what: &'static str,
    num_points: usize,
    num_frames: usize,
    written: usize,
    big_endian: bool,
}

impl FrameStream {
    /// Frames of `num_points` points into `file` (its header written), `num_frames` of them.
    ///
    /// Errors: the writer thread cannot be started.
    pub(crate) fn new(
        file: AtomicFile,
        what: &'static str,
        num_points: usize,
        num_frames: usize,
        big_endian: bool,
    ) -> Result<Self> {
        Ok(Self {
            file: BackgroundFile::new(file)?,
            what,
            num_points,
            num_frames,
            written: 0,
            big_endian,
        })
    }

    /// Appends one frame (`num_points × 3` row-major, converted to `f32`).
    ///
    /// Errors: a frame of the wrong size, or more frames than announced.
    pub(crate) fn push(&mut self, frame: &[f64]) -> Result<()> {
        if frame.len() != self.num_points * 3 {
            return Err(OvertoneError::size(
                format!("{} frame {}", self.what, self.written),
                self.num_points * 3,
                frame.len(),
            ));
        }
        if self.written == self.num_frames {
            return Err(OvertoneError::size(
                format!("{} frames", self.what),
                self.num_frames,
                self.written + 1,
            ));
        }
        let mut row = self.file.buffer();
        row.clear();
        row.reserve(frame.len() * 4);
        for &x in frame {
            let x = x as f32;
            row.extend_from_slice(&if self.big_endian {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            });
        }
        self.file.write(row)?;
        self.written += 1;
        Ok(())
    }

    /// Completes the file once every frame is written (atomically replacing the target).
    ///
    /// Errors: fewer frames than announced (the target is untouched), or the write fails.
    pub(crate) fn finish(self) -> Result<()> {
        if self.written != self.num_frames {
            return Err(OvertoneError::size(
                format!("{} frames", self.what),
                self.num_frames,
                self.written,
            ));
        }
        self.file.finish()
    }
}

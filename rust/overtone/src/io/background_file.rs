//! An [`AtomicFile`] appended to on a thread of its own, so that a long bake's copying of its
//! frames into the file overlaps the simulation of the next ones instead of adding to it.
//!
//! The caller fills a byte buffer and hands it over ([`BackgroundFile::write`]); at most
//! [`IN_FLIGHT`] filled buffers wait for the writer, and written buffers come back to be filled
//! again ([`BackgroundFile::buffer`]), so memory stays at a few buffers whatever the length of
//! the stream. The bytes reach the file in the order they were handed over. A write error stops
//! the writer; the caller's next `write` or the `finish` returns it. Dropped before
//! [`finish`](BackgroundFile::finish), the writer is stopped and joined and the atomic file
//! dropped uncommitted (its target untouched).

use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{OvertoneError, Result};
use crate::io::AtomicFile;

/// Filled buffers that may wait for the writer before `write` blocks.
const IN_FLIGHT: usize = 2;

/// The writer thread's outcome: the file, every byte written, or the first error.
type Outcome = Result<AtomicFile>;

pub(crate) struct BackgroundFile {
    /// Filled buffers to the writer (`None` once the writer was told to stop).
    full: Option<SyncSender<Vec<u8>>>,
    /// Written buffers back from the writer.
    empty: Receiver<Vec<u8>>,
    writer: Option<JoinHandle<Outcome>>,
    /// The target, in errors about the writer itself.
    target: std::path::PathBuf,
}

impl BackgroundFile {
    /// Moves `file` (whatever it holds so far, e.g. a header) to a new writer thread.
    ///
    /// Errors: the thread cannot be started (the file is dropped uncommitted).
    pub(crate) fn new(file: AtomicFile) -> Result<Self> {
        let target = file.target().to_path_buf();
        let (full, to_write) = sync_channel::<Vec<u8>>(IN_FLIGHT);
        let (written, empty) = channel::<Vec<u8>>();
        let writer = std::thread::Builder::new()
            .name("overtone cache writer".into())
            .spawn(move || -> Outcome {
                let mut file = file;
                for buf in to_write {
                    file.write_all(&buf)?;
                    // The caller may have stopped taking buffers back: nothing to do then.
                    let _ = written.send(buf);
                }
                Ok(file)
            })
            .map_err(|e| OvertoneError::io(&target, format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            full: Some(full),
            empty,
            writer: Some(writer),
            target,
        })
    }

    /// A buffer to fill: one the writer has finished with, else a new one (its contents are
    /// stale: clear it first).
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        self.empty.try_recv().unwrap_or_default()
    }

    /// Hands `bytes` to the writer (blocks while [`IN_FLIGHT`] buffers are waiting).
    ///
    /// Errors: an earlier write failed (that error; the writer has stopped).
    pub(crate) fn write(&mut self, bytes: Vec<u8>) -> Result<()> {
        let sent = match &self.full {
            Some(full) => full.send(bytes).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        // The writer ended before being told to: it met an error.
        match self.join() {
            Ok(_) => Err(OvertoneError::io(&self.target, "the writer thread stopped early")),
            Err(e) => Err(e),
        }
    }

    /// Waits for every byte to be written, then commits the file ([`AtomicFile::commit`]).
    ///
    /// Errors: a write failed, or the commit did (the target is untouched).
    pub(crate) fn finish(mut self) -> Result<()> {
        self.join()?.commit()
    }

    /// Stops the writer once it has written what it holds and takes the file back.
    fn join(&mut self) -> Outcome {
        drop(self.full.take());
        match self.writer.take() {
            Some(writer) => writer
                .join()
                .unwrap_or_else(|_| Err(OvertoneError::io(&self.target, "the writer thread panicked"))),
            None => Err(OvertoneError::io(&self.target, "the writer thread has already stopped")),
        }
    }
}

impl Drop for BackgroundFile {
    /// Not finished: the writer is stopped and joined; the file it returns is dropped
    /// uncommitted (its temporary file removed).
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = self.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many buffers, reused, reach the file in order (byte for byte what one write would have
    /// made), and the number of buffers ever made stays at the bound; dropped unfinished, the
    /// target is not created.
    #[test]
    fn buffers_reach_the_file_in_order_and_are_reused() {
        let dir = std::env::temp_dir().join(format!("overtone-background-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stream.bin");
        let mut expected = Vec::new();
        let mut f = BackgroundFile::new(AtomicFile::create(&path).unwrap()).unwrap();
        let mut made = std::collections::HashSet::new();
        for k in 0..500u32 {
            let mut buf = f.buffer();
            buf.clear();
            if buf.capacity() == 0 {
                buf.reserve(4096);
            }
            made.insert(buf.as_ptr() as usize);
            for j in 0..1000u32 {
                buf.extend_from_slice(&(k * 1000 + j).to_le_bytes());
            }
            expected.extend_from_slice(&buf);
            f.write(buf).unwrap();
        }
        f.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        // A buffer is made only when none has come back: the others are then waiting
        // (`IN_FLIGHT`) or being written (one).
        assert!(made.len() <= IN_FLIGHT + 2, "{} buffers made", made.len());
        let unfinished = dir.join("unfinished.bin");
        let mut g = BackgroundFile::new(AtomicFile::create(&unfinished).unwrap()).unwrap();
        g.write(vec![1, 2, 3]).unwrap();
        drop(g);
        assert!(!unfinished.exists());
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".overtone-tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

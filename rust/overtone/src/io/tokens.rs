//! Whitespace tokenizer shared by the ASCII readers.

use std::path::{Path, PathBuf};

use crate::error::{OvertoneError, Result};

/// Reads a whole text file (with a clear error on a missing or binary file).
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| OvertoneError::io(path, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|_| OvertoneError::parse(path, "not a text file (invalid UTF-8)"))
}

/// A cursor over whitespace-separated tokens of a file, with typed accessors.
pub(crate) struct Tokens<'a> {
    path: PathBuf,
    it: std::iter::Peekable<std::str::SplitWhitespace<'a>>,
    count: usize,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(path: &Path, text: &'a str) -> Self {
        Self {
            path: path.to_path_buf(),
            it: text.split_whitespace().peekable(),
            count: 0,
        }
    }

    pub(crate) fn error(&self, reason: impl Into<String>) -> OvertoneError {
        OvertoneError::parse(&self.path, reason)
    }

    pub(crate) fn peek(&mut self) -> Option<&'a str> {
        self.it.peek().copied()
    }

    pub(crate) fn next_str(&mut self, what: &str) -> Result<&'a str> {
        self.count += 1;
        self.it.next().ok_or_else(|| {
            OvertoneError::parse(
                &self.path,
                format!("file ends early: expected {what} (token {})", self.count),
            )
        })
    }

    pub(crate) fn f64(&mut self, what: &str) -> Result<f64> {
        let t = self.next_str(what)?;
        let v: f64 = t
            .parse()
            .map_err(|_| OvertoneError::parse(&self.path, format!("expected a number for {what}, found `{t}`")))?;
        if !v.is_finite() {
            return Err(OvertoneError::parse(
                &self.path,
                format!("{what} is not finite (`{t}`)"),
            ));
        }
        Ok(v)
    }

    pub(crate) fn usize(&mut self, what: &str) -> Result<usize> {
        let t = self.next_str(what)?;
        t.parse().map_err(|_| {
            OvertoneError::parse(
                &self.path,
                format!("expected a non-negative integer for {what}, found `{t}`"),
            )
        })
    }

    /// An integer count, refused when it exceeds `limit` (guards allocations against corrupt
    /// headers).
    pub(crate) fn count(&mut self, what: &str, limit: usize) -> Result<usize> {
        let c = self.usize(what)?;
        if c > limit {
            return Err(OvertoneError::parse(
                &self.path,
                format!("{what} = {c} exceeds the plausible maximum {limit}"),
            ));
        }
        Ok(c)
    }

    pub(crate) fn is_empty(&mut self) -> bool {
        self.it.peek().is_none()
    }
}

/// Upper bound on any count read from a header: the file cannot hold more items than tokens.
pub(crate) fn plausible_limit(text: &str) -> usize {
    text.len() / 2 + 1
}

//! Errors of this crate: a trace that cannot be read, and a generator
//! configuration that cannot be used.
//!
//! Every parse error names the file (or the name a caller gave an in-memory
//! text), the 1-based line, and the field, so that bad input dies at the door
//! with a message a person can act on: `<file>:<line>: <field>: <message>`.

use std::path::Path;
use thiserror::Error;

/// Why a trace could not be read or written.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The text of the trace is wrong at one field of one line.
    ///
    /// (The file name is called `file`, not `source`, because `thiserror`
    /// reserves a field named `source` for the underlying error.)
    #[error("{file}:{line}: {field}: {message}")]
    Parse {
        /// The file, or the name given to an in-memory text.
        file: String,
        /// The 1-based line (or row, for columns); 0 when the error concerns
        /// the whole input rather than one line.
        line: u64,
        /// The field or column at fault.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The file could not be opened, read or written.
    #[error("{path}: {err}")]
    Io {
        /// The path of the file.
        path: String,
        /// The underlying error.
        #[source]
        err: std::io::Error,
    },
}

impl TraceError {
    /// A parse error at `line` of `file`, in `field`.
    pub fn parse(
        file: &str,
        line: u64,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> TraceError {
        TraceError::Parse {
            file: file.to_string(),
            line,
            field: field.into(),
            message: message.into(),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: &Path, err: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.display().to_string(),
            err,
        }
    }

    /// The 1-based line of a parse error; `None` for I/O errors.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Parse { line, .. } => Some(*line),
            TraceError::Io { .. } => None,
        }
    }

    /// The field of a parse error; `None` for I/O errors.
    pub fn field(&self) -> Option<&str> {
        match self {
            TraceError::Parse { field, .. } => Some(field),
            TraceError::Io { .. } => None,
        }
    }
}

/// Why a generator configuration is unusable; names the field.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The configuration field at fault.
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

/// Reads a whole file as UTF-8, naming the path on failure and the line of
/// the first invalid byte if it is not UTF-8.
pub(crate) fn read_text(path: &Path) -> Result<String, TraceError> {
    let bytes = std::fs::read(path).map_err(|e| TraceError::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        TraceError::parse(
            &path.display().to_string(),
            line,
            "text",
            "is not valid UTF-8",
        )
    })
}

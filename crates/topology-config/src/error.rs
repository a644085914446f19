//! Why a topology config could not be read or built.
//!
//! Every message starts with where the config came from: the file's path,
//! or `topology '<spec>'` for a spec string; then the position (syntax
//! errors), the key (bad values) or the fabric element (a builder's check):
//! `topo.toml: link 3 (tor0 -> agg9): unknown node agg9`.

use coflowkit_model::FabricError;
use thiserror::Error;

/// Why a topology config could not be read or built.
#[derive(Debug, Error)]
pub enum TopologyError {
    /// The file could not be read.
    #[error("{path}: {err}")]
    Io {
        /// The path of the file.
        path: String,
        /// The underlying error.
        #[source]
        err: std::io::Error,
    },
    /// The TOML or YAML text does not parse.
    #[error("{at}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        at: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What is wrong.
        message: String,
    },
    /// A key is missing, unknown, or has a value of the wrong kind.
    #[error("{at}: {key}: {message}")]
    Key {
        /// The file or spec.
        at: String,
        /// The key, with the entry it is in ("link 3: capacity").
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// The spec as a whole is wrong (an unknown kind, a file of another type).
    #[error("{at}: {message}")]
    Spec {
        /// The file or spec.
        at: String,
        /// What is wrong.
        message: String,
    },
    /// The values parse but do not make a fabric.
    #[error("{at}: {err}")]
    Fabric {
        /// The file or spec.
        at: String,
        /// The builder's error, naming the element.
        #[source]
        err: FabricError,
    },
}

impl TopologyError {
    /// Whether the error is a file that does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, TopologyError::Io { err, .. } if err.kind() == std::io::ErrorKind::NotFound)
    }
}

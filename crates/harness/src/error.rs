use std::fmt;

use crate::Side;

/// Why a cell produced no number.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The stack cannot do what the scenario asks; reported as `unsupported`, never replaced.
    #[error("{0}")]
    Unsupported(String),
    /// A library call failed: building a config, a handshake step, a read or a write.
    #[error("{side} {stage} failed: {error}")]
    Library {
        side: Side,
        stage: &'static str,
        error: LibError,
    },
    /// A correctness gate caught a difference between what was asked and what happened.
    #[error("gate failed: {0}")]
    Gate(String),
    /// Anything else that stops a measurement (certificates, a stuck handshake).
    #[error("{0}")]
    Other(String),
}

/// An error reported by a TLS library, as its own message.
#[derive(Debug)]
pub struct LibError(pub String);

impl LibError {
    pub fn new(error: impl fmt::Display) -> Self {
        Self(error.to_string())
    }
}

impl fmt::Display for LibError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LibError {}

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
    Library { side: Side, stage: &'static str, error: LibError },
    /// A correctness gate caught a difference between what was asked and what happened.
    #[error("gate failed: {0}")]
    Gate(String),
    /// Anything else that stops a measurement (certificates, a stuck handshake).
    #[error("{0}")]
    Other(String),
    /// The peer runner of a split pair stopped (its abort says why) or went away: this side's
    /// failure only echoes the peer's, whose own reply names the cause (a reply's `cause: peer`).
    #[error("{0}")]
    Peer(String),
}

/// For `map_err`: a library call of `side` that failed at `stage` (every driver's, one
/// process or split, and the handshake's turns).
pub(crate) fn failed(side: Side, stage: &'static str) -> impl FnOnce(LibError) -> Error {
    move |error| Error::Library { side, stage, error }
}

/// An error reported by a TLS library, as its own message.
#[derive(Debug)]
pub struct LibError(pub String);

impl LibError {
    pub fn new(error: impl fmt::Display) -> Self {
        Self(error.to_string())
    }

    /// For `map_err`: the library's error, after the step that failed, e.g. `.map_err(
    /// LibError::context("parsing the private key"))` gives "parsing the private key: <error>".
    pub fn context<E: fmt::Display>(what: &str) -> impl FnOnce(E) -> LibError + '_ {
        move |error| LibError(format!("{what}: {error}"))
    }
}

impl fmt::Display for LibError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LibError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_names_the_step_before_the_library_error() {
        let error: Result<(), &str> = Err("bad PEM");
        let error = error.map_err(LibError::context("parsing the private key")).unwrap_err();
        assert_eq!(error.to_string(), "parsing the private key: bad PEM");
    }
}

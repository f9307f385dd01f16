use std::fmt;
use std::time::Duration;

/// Why a request was refused or a configuration rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum LimitError {
    Exhausted { retry_after: Duration },
    InvalidRate(String),
    InvalidUnit(String),
    UnknownKey(String),
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::Exhausted { retry_after } => {
                write!(f, "exhausted, retry in {retry_after:?}")
            }
            LimitError::InvalidRate(s) => write!(f, "invalid rate {s:?}"),
            LimitError::InvalidUnit(s) => write!(f, "invalid unit {s:?}"),
            LimitError::UnknownKey(s) => write!(f, "no quota for key {s:?}"),
        }
    }
}

impl std::error::Error for LimitError {}

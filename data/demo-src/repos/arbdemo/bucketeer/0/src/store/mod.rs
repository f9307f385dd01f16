//! Where per-key limiter state lives.

pub mod memory;
pub mod sharded;

use crate::error::LimitError;

/// A keyed collection of limiters.
pub trait Store: Send + Sync {
    fn take(&self, key: &str, cost: u32) -> Result<(), LimitError>;
    fn len(&self) -> usize;
}

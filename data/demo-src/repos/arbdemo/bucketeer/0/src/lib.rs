//! bucketeer: token buckets, sliding windows and per-key quotas.

pub mod backoff;
pub mod bucket;
pub mod clock;
pub mod config;
pub mod error;
pub mod headers;
pub mod key;
pub mod metrics;
pub mod policy;
pub mod quota;
pub mod store;
pub mod util;
pub mod window;

pub use bucket::TokenBucket;
pub use config::Rate;
pub use error::LimitError;
pub use window::SlidingWindow;

/// Anything that can admit or refuse `cost` units of work now.
pub trait Limiter {
    fn try_acquire(&self, cost: u32) -> Result<(), LimitError>;
}

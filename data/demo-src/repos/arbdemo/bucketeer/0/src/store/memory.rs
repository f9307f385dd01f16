use std::collections::HashMap;

use parking_lot::Mutex;

use crate::bucket::TokenBucket;
use crate::config::Rate;
use crate::error::LimitError;
use crate::store::Store;
use crate::Limiter;

/// One map of buckets behind one lock.
pub struct MemoryStore {
    rate: Rate,
    burst: u32,
    buckets: Mutex<HashMap<String, TokenBucket>>,
}

impl MemoryStore {
    pub fn new(rate: Rate, burst: u32) -> Self {
        MemoryStore { rate, burst, buckets: Mutex::new(HashMap::new()) }
    }
}

impl Store for MemoryStore {
    fn take(&self, key: &str, cost: u32) -> Result<(), LimitError> {
        let mut buckets = self.buckets.lock();
        let bucket = buckets
            .entry(key.to_string())
            .or_insert_with(|| TokenBucket::new(self.rate, self.burst));
        bucket.try_acquire(cost)
    }

    fn len(&self) -> usize {
        self.buckets.lock().len()
    }
}

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::config::Rate;
use crate::error::LimitError;
use crate::store::memory::MemoryStore;
use crate::store::Store;

/// Spreads keys over several independent stores to cut lock contention.
pub struct ShardedStore {
    shards: Vec<MemoryStore>,
}

impl ShardedStore {
    pub fn new(rate: Rate, burst: u32, count: usize) -> Self {
        let shards = (0..count).map(|_| MemoryStore::new(rate, burst)).collect();
        ShardedStore { shards }
    }

    fn index(&self, key: &str) -> usize {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        (hasher.finish() as usize) % self.shards.len()
    }
}

impl Store for ShardedStore {
    fn take(&self, key: &str, cost: u32) -> Result<(), LimitError> {
        let slot = &self.shards[self.index(key)];
        slot.take(key, cost)
    }

    fn len(&self) -> usize {
        self.shards.iter().map(Store::len).sum()
    }
}

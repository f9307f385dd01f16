use std::sync::atomic::{AtomicU64, Ordering};

/// Admitted and refused counters, readable while limiters run.
#[derive(Default)]
pub struct Counters {
    admitted: AtomicU64,
    refused: AtomicU64,
}

impl Counters {
    pub fn record(&self, admitted: bool) {
        let counter = if admitted { &self.admitted } else { &self.refused };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> (u64, u64) {
        (self.admitted.load(Ordering::Relaxed), self.refused.load(Ordering::Relaxed))
    }

    pub fn refusal_ratio(&self) -> f64 {
        let (ok, no) = self.snapshot();
        if ok + no == 0 { 0.0 } else { no as f64 / (ok + no) as f64 }
    }
}

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where limiters read the time; tests swap in a manual one.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that only moves when told to.
pub struct ManualClock {
    origin: Instant,
    offset_nanos: AtomicU64,
}

impl ManualClock {
    pub fn new() -> Self {
        ManualClock { origin: Instant::now(), offset_nanos: AtomicU64::new(0) }
    }

    pub fn advance(&self, by: Duration) {
        self.offset_nanos.fetch_add(by.as_nanos() as u64, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.origin + Duration::from_nanos(self.offset_nanos.load(Ordering::Relaxed))
    }
}

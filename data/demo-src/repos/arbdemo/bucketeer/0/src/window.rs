use std::collections::VecDeque;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::error::LimitError;
use crate::Limiter;

/// Counts events in the last `span`; refuses once `limit` is reached.
pub struct SlidingWindow {
    limit: u32,
    span: Duration,
    events: Mutex<VecDeque<Instant>>,
}

impl SlidingWindow {
    pub fn new(limit: u32, span: Duration) -> Self {
        SlidingWindow { limit, span, events: Mutex::new(VecDeque::new()) }
    }

    fn evict(&self, events: &mut VecDeque<Instant>, now: Instant) {
        while let Some(first) = events.front() {
            if now - *first > self.span {
                events.pop_front();
            } else {
                break;
            }
        }
    }
}

impl Limiter for SlidingWindow {
    fn try_acquire(&self, cost: u32) -> Result<(), LimitError> {
        let now = Instant::now();
        let mut events = self.events.lock();
        self.evict(&mut events, now);
        if events.len() as u32 + cost > self.limit {
            let oldest = *events.front().expect("window is full");
            return Err(LimitError::Exhausted { retry_after: self.span - (now - oldest) });
        }
        for _ in 0..cost {
            events.push_back(now);
        }
        Ok(())
    }
}

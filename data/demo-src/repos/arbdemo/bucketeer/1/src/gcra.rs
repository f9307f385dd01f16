use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::config::Rate;
use crate::error::LimitError;
use crate::Limiter;

/// Generic cell rate algorithm: one timestamp per key instead of a token count.
pub struct Gcra {
    emission: Duration,
    tolerance: Duration,
    tat: Mutex<Option<Instant>>,
}

impl Gcra {
    pub fn new(rate: Rate, burst: u32) -> Self {
        let emission = rate.period / rate.amount.max(1);
        Gcra { emission, tolerance: emission * burst, tat: Mutex::new(None) }
    }
}

impl Limiter for Gcra {
    fn try_acquire(&self, cost: u32) -> Result<(), LimitError> {
        let now = Instant::now();
        let mut tat = self.tat.lock();
        let theoretical = tat.unwrap_or(now).max(now);
        let next = theoretical + self.emission * cost;
        if next > now + self.tolerance {
            return Err(LimitError::Exhausted { retry_after: next - now - self.tolerance });
        }
        *tat = Some(next);
        Ok(())
    }
}

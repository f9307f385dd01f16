use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::config::Rate;
use crate::error::LimitError;
use crate::Limiter;

/// Classic token bucket: `capacity` tokens, refilled continuously at `rate`.
pub struct TokenBucket {
    rate: Rate,
    capacity: u32,
    state: Mutex<State>,
}

struct State {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    pub fn new(rate: Rate, capacity: u32) -> Self {
        let state = State { tokens: capacity as f64, last: Instant::now() };
        TokenBucket { rate, capacity, state: Mutex::new(state) }
    }

    fn refill(&self, state: &mut State, now: Instant) {
        let elapsed = now.duration_since(state.last).as_secs();
        let added = elapsed as f64 * self.rate.per_second();
        state.tokens = (state.tokens + added).min(self.capacity as f64);
        state.last = now;
    }

    pub fn available(&self) -> u32 {
        let mut state = self.state.lock();
        self.refill(&mut state, Instant::now());
        state.tokens as u32
    }
}

impl Limiter for TokenBucket {
    fn try_acquire(&self, cost: u32) -> Result<(), LimitError> {
        let mut state = self.state.lock();
        self.refill(&mut state, Instant::now());
        if state.tokens < cost as f64 {
            let missing = cost as f64 - state.tokens;
            let wait = Duration::from_secs_f64(missing / self.rate.per_second());
            return Err(LimitError::Exhausted { retry_after: wait });
        }
        state.tokens -= cost as f64;
        Ok(())
    }
}

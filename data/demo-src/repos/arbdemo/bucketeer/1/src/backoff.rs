use std::time::Duration;

/// Exponential backoff with a ceiling, for clients that were refused.
pub struct Backoff {
    base: Duration,
    ceiling: Duration,
    attempt: u32,
}

impl Backoff {
    pub fn new(base: Duration, ceiling: Duration) -> Self {
        Backoff { base, ceiling, attempt: 0 }
    }

    pub fn next_delay(&mut self) -> Duration {
        let factor = 1u32.checked_shl(self.attempt).unwrap_or(u32::MAX);
        self.attempt += 1;
        self.base.saturating_mul(factor).min(self.ceiling)
    }

    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}

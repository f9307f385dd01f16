use std::str::FromStr;
use std::time::Duration;

use crate::error::LimitError;
use crate::util::duration::parse_duration;

/// `amount` events per `period`, written like `10/s` or `600/1m`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub amount: u32,
    pub period: Duration,
}

impl Rate {
    pub fn per_second(self) -> f64 {
        self.amount as f64 / self.period.as_secs_f64()
    }

    pub fn per_second_of(amount: u32) -> Rate {
        Rate { amount, period: Duration::from_secs(1) }
    }
}

impl FromStr for Rate {
    type Err = LimitError;

    fn from_str(text: &str) -> Result<Rate, LimitError> {
        let (amount, period) = text
            .split_once('/')
            .ok_or_else(|| LimitError::InvalidRate(text.to_string()))?;
        let amount: u32 = amount
            .trim()
            .parse()
            .map_err(|_| LimitError::InvalidRate(text.to_string()))?;
        let period = parse_duration(period.trim())?;
        Ok(Rate { amount, period })
    }
}

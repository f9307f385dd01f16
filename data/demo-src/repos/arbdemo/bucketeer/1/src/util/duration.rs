use std::time::Duration;

use crate::error::LimitError;

/// `s`, `1m`, `2h` or `500ms` as a Duration; a bare unit means one of it.
pub fn parse_duration(text: &str) -> Result<Duration, LimitError> {
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = if digits.is_empty() {
        1
    } else {
        digits.parse().map_err(|_| LimitError::InvalidUnit(text.to_string()))?
    };
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(60 * n)),
        _ => Err(LimitError::InvalidUnit(unit.to_string())),
    }
}

use std::time::Duration;

/// `RateLimit-Limit`, `RateLimit-Remaining` and `Retry-After` values for a response.
pub fn rate_limit_headers(
    limit: u32,
    remaining: u32,
    retry: Option<Duration>,
) -> Vec<(String, String)> {
    let mut out = vec![
        ("RateLimit-Limit".to_string(), limit.to_string()),
        ("RateLimit-Remaining".to_string(), remaining.to_string()),
    ];
    if let Some(wait) = retry {
        out.push(("Retry-After".to_string(), retry_after_seconds(wait).to_string()));
    }
    out
}

/// Whole seconds a client should wait.
pub fn retry_after_seconds(wait: Duration) -> u64 {
    wait.as_secs()
}

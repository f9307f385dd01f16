use std::time::Duration;

use bucketeer::headers::{rate_limit_headers, retry_after_seconds};

#[test]
fn lists_limit_and_remaining() {
    let headers = rate_limit_headers(10, 4, None);
    assert_eq!(headers[0], ("RateLimit-Limit".to_string(), "10".to_string()));
    assert_eq!(headers.len(), 2);
}

#[test]
fn retry_after_never_zero_while_refused() {
    assert_eq!(retry_after_seconds(Duration::from_secs(3)), 3);
}

use std::time::Duration;

use bucketeer::Rate;

#[test]
fn parses_per_second() {
    let rate: Rate = "10/s".parse().unwrap();
    assert_eq!(rate.period, Duration::from_secs(1));
    assert_eq!(rate.amount, 10);
}

#[test]
fn parses_per_minute() {
    let rate: Rate = "600/1m".parse().unwrap();
    assert_eq!(rate.per_second(), 10.0);
}

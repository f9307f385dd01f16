use bucketeer::gcra::Gcra;
use bucketeer::{Limiter, Rate};

#[test]
fn allows_the_burst_then_refuses() {
    let gcra = Gcra::new(Rate::per_second_of(1), 2);
    assert!(gcra.try_acquire(1).is_ok());
    assert!(gcra.try_acquire(1).is_ok());
    assert!(gcra.try_acquire(1).is_err());
}

//! Fire a burst at a bucket and print which calls got through.

use bucketeer::{Limiter, Rate, TokenBucket};

fn main() {
    let bucket = TokenBucket::new(Rate::per_second_of(5), 5);
    for call in 0..12 {
        let verdict = match bucket.try_acquire(1) {
            Ok(()) => "ok".to_string(),
            Err(err) => err.to_string(),
        };
        println!("call {call:>2}: {verdict}");
    }
}

use criterion::{criterion_group, criterion_main, Criterion};

use bucketeer::store::{sharded::ShardedStore, Store};
use bucketeer::Rate;

fn contended(c: &mut Criterion) {
    let store = ShardedStore::new(Rate::per_second_of(1_000_000), 1_000, 16);
    let names: Vec<String> = (0..64).map(|i| format!("client-{i}")).collect();
    c.bench_function("sharded take", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % names.len();
            let _ = store.take(&names[i], 1);
        })
    });
}

criterion_group!(benches, contended);
criterion_main!(benches);

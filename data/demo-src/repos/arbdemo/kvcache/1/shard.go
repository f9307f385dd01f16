package kvcache

import "hash/fnv"

// Sharded spreads keys over several caches to reduce lock contention.
type Sharded struct {
	shards []*Cache
}

// NewSharded builds opts.Shards caches that share the other options.
func NewSharded(opts ...Option) *Sharded {
	o := defaultOptions()
	for _, apply := range opts {
		apply(&o)
	}
	shards := make([]*Cache, o.Shards)
	for i := range shards {
		shards[i] = New(opts...)
	}
	return &Sharded{shards: shards}
}

func (s *Sharded) shardFor(key string) *Cache {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return s.shards[int(h.Sum32())%len(s.shards)]
}

// Get looks key up in its shard.
func (s *Sharded) Get(key string) (any, bool) { return s.shardFor(key).Get(key) }

// Set stores key in its shard.
func (s *Sharded) Set(key string, value any) { s.shardFor(key).Set(key, value) }

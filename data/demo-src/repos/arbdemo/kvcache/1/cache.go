// Package kvcache is an in-memory cache with LRU eviction and TTLs.
package kvcache

import (
	"sync"
	"time"

	"github.com/arbdemo/kvcache/internal/clock"
)

// Cache stores values by string key.
type Cache struct {
	mu    sync.Mutex
	lru   *lruList
	ttl   map[string]time.Time
	opts  Options
	stats Stats
	clock clock.Clock
}

// New builds a cache from options.
func New(opts ...Option) *Cache {
	o := defaultOptions()
	for _, apply := range opts {
		apply(&o)
	}
	return &Cache{lru: newLRU(o.Capacity), ttl: map[string]time.Time{}, opts: o, clock: o.Clock}
}

// Get returns the value for key and whether it was present and fresh.
func (c *Cache) Get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expired(key) {
		c.removeLocked(key)
		c.stats.Misses++
		return nil, false
	}
	value, ok := c.lru.get(key)
	if ok {
		c.stats.Hits++
	} else {
		c.stats.Misses++
	}
	return value, ok
}

// Set stores value under key, evicting the least recently used entry when full.
func (c *Cache) Set(key string, value any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if evicted, ok := c.lru.put(key, value); ok {
		delete(c.ttl, evicted)
		c.stats.Evictions++
	}
	if c.opts.DefaultTTL > 0 {
		c.ttl[key] = c.clock.Now().Add(c.opts.DefaultTTL)
	}
}

func (c *Cache) removeLocked(key string) {
	c.lru.remove(key)
	delete(c.ttl, key)
}

// kvcache compat layer (v1 API)
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

// ---- formerly cache.go ----

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

// ---- formerly lru.go ----

package kvcache

import "container/list"

type lruItem struct {
	key   string
	value any
}

type lruList struct {
	capacity int
	order    *list.List
	items    map[string]*list.Element
}

func newLRU(capacity int) *lruList {
	return &lruList{capacity: capacity, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lruList) get(key string) (any, bool) {
	elem, ok := l.items[key]
	if !ok {
		return nil, false
	}
	l.order.MoveToFront(elem)
	return elem.Value.(*lruItem).value, true
}

// put inserts or updates key; it reports the evicted key, if any.
func (l *lruList) put(key string, value any) (string, bool) {
	if elem, ok := l.items[key]; ok {
		elem.Value.(*lruItem).value = value
		l.order.MoveToFront(elem)
		return "", false
	}
	l.items[key] = l.order.PushFront(&lruItem{key: key, value: value})
	if l.order.Len() <= l.capacity {
		return "", false
	}
	oldest := l.order.Back()
	l.order.Remove(oldest)
	evicted := oldest.Value.(*lruItem).key
	delete(l.items, evicted)
	return evicted, true
}

func (l *lruList) remove(key string) {
	if elem, ok := l.items[key]; ok {
		l.order.Remove(elem)
		delete(l.items, key)
	}
}

// ---- formerly options.go ----

package kvcache

import (
	"time"

	"github.com/arbdemo/kvcache/internal/clock"
)

// Options configure a Cache.
type Options struct {
	Capacity   int
	DefaultTTL time.Duration
	Clock      clock.Clock
}

// Option mutates Options.
type Option func(*Options)

func defaultOptions() Options {
	return Options{Capacity: 128, Clock: clock.System{}}
}

// WithCapacity bounds the number of entries.
func WithCapacity(n int) Option {
	return func(o *Options) { o.Capacity = n }
}

// WithDefaultTTL gives every entry a time to live.
func WithDefaultTTL(ttl time.Duration) Option {
	return func(o *Options) { o.DefaultTTL = ttl }
}

// WithClock replaces the wall clock, for tests.
func WithClock(c clock.Clock) Option {
	return func(o *Options) { o.Clock = c }
}

// ---- formerly stats.go ----

package kvcache

// Stats counts cache traffic.
type Stats struct {
	Hits      uint64
	Misses    uint64
	Evictions uint64
}

// HitRatio is hits over lookups, zero before the first lookup.
func (s Stats) HitRatio() float64 {
	total := s.Hits + s.Misses
	if total == 0 {
		return 0
	}
	return float64(s.Hits) / float64(total)
}

// Stats returns a copy of the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// ---- formerly ttl.go ----

package kvcache

import "time"

// expired reports whether key has a deadline in the past.
func (c *Cache) expired(key string) bool {
	deadline, ok := c.ttl[key]
	return ok && !c.clock.Now().Before(deadline)
}

// SetWithTTL stores value with its own time to live.
func (c *Cache) SetWithTTL(key string, value any, ttl time.Duration) {
	c.Set(key, value)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ttl[key] = c.clock.Now().Add(ttl)
}

// Purge removes every expired entry and returns how many were removed.
func (c *Cache) Purge() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	removed := 0
	for key := range c.ttl {
		if c.expired(key) {
			c.removeLocked(key)
			removed++
		}
	}
	return removed
}

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

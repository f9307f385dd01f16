// kvcache v1 compat tests
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

// ---- formerly cache_test.go ----

package kvcache

import "testing"

func TestGetMissThenHit(t *testing.T) {
	c := New(WithCapacity(2))
	if _, ok := c.Get("a"); ok {
		t.Fatal("empty cache returned a value")
	}
	c.Set("a", 1)
	if v, ok := c.Get("a"); !ok || v.(int) != 1 {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	if got := c.Stats().HitRatio(); got != 0.5 {
		t.Fatalf("HitRatio = %v, want 0.5", got)
	}
}

func TestSetEvictsOldest(t *testing.T) {
	c := New(WithCapacity(2))
	c.Set("a", 1)
	c.Set("b", 2)
	c.Get("a")
	c.Set("c", 3)
	if _, ok := c.Get("b"); ok {
		t.Fatal("b should have been evicted")
	}
	if c.Stats().Evictions != 1 {
		t.Fatalf("Evictions = %d", c.Stats().Evictions)
	}
}

// ---- formerly ttl_test.go ----

package kvcache

import (
	"testing"
	"time"

	"github.com/arbdemo/kvcache/internal/clock"
)

func TestEntryExpires(t *testing.T) {
	fake := &clock.Fake{T: time.Unix(0, 0)}
	c := New(WithClock(fake), WithDefaultTTL(time.Minute))
	c.Set("k", "v")
	fake.Advance(59 * time.Second)
	if _, ok := c.Get("k"); !ok {
		t.Fatal("entry expired too early")
	}
	fake.Advance(time.Second)
	if _, ok := c.Get("k"); ok {
		t.Fatal("entry should expire exactly at its deadline")
	}
}

func TestPurgeCountsRemoved(t *testing.T) {
	fake := &clock.Fake{T: time.Unix(0, 0)}
	c := New(WithClock(fake))
	c.SetWithTTL("a", 1, time.Second)
	c.SetWithTTL("b", 2, time.Hour)
	fake.Advance(2 * time.Second)
	if n := c.Purge(); n != 1 {
		t.Fatalf("Purge() = %d, want 1", n)
	}
}

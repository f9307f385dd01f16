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

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

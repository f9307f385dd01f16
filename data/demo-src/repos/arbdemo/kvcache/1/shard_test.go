package kvcache

import "testing"

func TestShardedRoundTrip(t *testing.T) {
	s := NewSharded(WithShards(4), WithCapacity(8))
	for _, key := range []string{"alpha", "beta", "gamma", "delta"} {
		s.Set(key, len(key))
	}
	if v, ok := s.Get("gamma"); !ok || v.(int) != 5 {
		t.Fatalf("Get(gamma) = %v, %v", v, ok)
	}
}

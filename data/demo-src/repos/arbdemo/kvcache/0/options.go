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

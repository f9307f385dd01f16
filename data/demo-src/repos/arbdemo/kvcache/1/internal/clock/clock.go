// Package clock abstracts time so tests can move it by hand.
package clock

import "time"

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// System is the wall clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// Fake is a manually advanced clock for tests.
type Fake struct {
	T time.Time
}

// Now returns the fake time.
func (f *Fake) Now() time.Time { return f.T }

// Advance moves the fake clock forward.
func (f *Fake) Advance(d time.Duration) { f.T = f.T.Add(d) }

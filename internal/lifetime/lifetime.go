// Package lifetime gives goroutines an owner that stops them and waits for
// them. A Group starts goroutines until it is closed; Wait closes it and
// returns once every goroutine it started has returned.
//
// A bare sync.WaitGroup is not enough for goroutines that start late: a
// timer that fires, a connection accepted or a request that arrives while
// the owner is stopping would call Add concurrently with Wait, which the
// race detector and the runtime call misuse. A Group refuses them instead
// (Go reports false), so what is started is always waited for.
package lifetime

import "sync"

// Group owns goroutines. The zero value is ready to use.
type Group struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	closed bool
}

// Go runs fn on a goroutine of the group and reports true, or does nothing
// and reports false once the group is closed.
func (g *Group) Go(fn func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn()
	}()
	return true
}

// Join counts the calling goroutine in the group until it calls leave (a
// connection handler that runs on its server's goroutine, not on one the
// group started), and reports false, with a leave that does nothing, once
// the group is closed.
func (g *Group) Join() (leave func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return func() {}, false
	}
	g.wg.Add(1)
	var once sync.Once
	return func() { once.Do(g.wg.Done) }, true
}

// Close refuses further goroutines; those running go on.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// Wait closes the group and returns once every goroutine it started has
// returned. Whatever stops them (a context, a closed listener) is the
// caller's to do first.
func (g *Group) Wait() {
	g.Close()
	g.wg.Wait()
}

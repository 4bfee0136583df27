package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// sharedEnv is the environment one test binary shares between its tests. It
// lives exactly as long as Main. Besides it, the package keeps only
// loggerOnce (logger.go).
var sharedEnv struct {
	sync.Mutex
	main    bool
	opts    []Option
	env     *Env
	err     error
	started bool
}

// Main runs a test package's tests with one shared environment, started on
// the first call to Shared (so a run that selects no test that needs it pays
// nothing) with opts, and stopped after the last test. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
func Main(m *testing.M, opts ...Option) int {
	sharedEnv.Lock()
	sharedEnv.main, sharedEnv.opts = true, opts
	sharedEnv.Unlock()

	code := m.Run()

	sharedEnv.Lock()
	defer sharedEnv.Unlock()
	if sharedEnv.env != nil {
		if err := sharedEnv.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	sharedEnv.env, sharedEnv.err, sharedEnv.started, sharedEnv.main = nil, nil, false, false
	return code
}

// Shared returns the test package's shared environment, starting it on first
// use. It fails the test when TestMain does not call Main or the environment
// cannot start (once it failed, every later call fails the same way). Tests
// using it should work in their own namespace (Env.Namespace).
func Shared(t testing.TB) *Env {
	t.Helper()
	sharedEnv.Lock()
	defer sharedEnv.Unlock()
	if !sharedEnv.main {
		t.Fatal("testenv.Shared needs TestMain to call testenv.Main")
	}
	if !sharedEnv.started {
		sharedEnv.started = true
		begin := time.Now()
		sharedEnv.env, sharedEnv.err = New(sharedEnv.opts...)
		t.Logf("shared test environment started in %v", time.Since(begin).Round(time.Millisecond))
	}
	if sharedEnv.err != nil {
		t.Fatalf("starting shared test environment: %v", sharedEnv.err)
	}
	return sharedEnv.env
}

// contextWithTimeout is a background context with a deadline, for cleanups
// that run after the test's context is canceled.
func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

package hub

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/corral-dev/corral/internal/testkit/pgtest"
)

// pg is the package's PostgreSQL, started by the first test that needs
// it (postgres_test.go).
var pg pgtest.Shared

// TestMain fails the tests if a goroutine outlives them: every connection a
// test attaches ends with it, and Run returns only once they have. The
// PostgreSQL server stops first: its process is the tests' own.
func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

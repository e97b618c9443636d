package link

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// Peer's Run returns only once the goroutines it started have.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

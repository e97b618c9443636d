package hub

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if a goroutine outlives them: every connection a
// test attaches ends with it, and Run returns only once they have.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

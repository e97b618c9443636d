package notify

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if a goroutine outlives them: Run returns only
// once its followers and sends have.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

package agentlink

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if a goroutine outlives them: Serve returns only
// once its forwarder, requests and pumps have.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

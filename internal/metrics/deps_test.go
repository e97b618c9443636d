package metrics

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package a leaf of corral's dependency order: the
// standard library and client_golang only.
func TestImports(t *testing.T) {
	imports.Only(t, "github.com/prometheus/client_golang/prometheus",
		"github.com/prometheus/client_golang/prometheus/collectors",
		"github.com/prometheus/client_golang/prometheus/promhttp")
}

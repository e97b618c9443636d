package claude

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package a leaf but for one generic helper: its
// subpackages build on it.
func TestImports(t *testing.T) {
	imports.Only(t, "github.com/corral-dev/corral/internal/regularfile")
}

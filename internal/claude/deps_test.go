package claude

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package near a leaf: the standard library,
// fsnotify, corral's wire types and its small generic helpers only.
func TestImports(t *testing.T) {
	imports.Only(t, "github.com/fsnotify/fsnotify", "github.com/corral-dev/corral/internal/api",
		"github.com/corral-dev/corral/internal/atomicfile", "github.com/corral-dev/corral/internal/jsonobject",
		"github.com/corral-dev/corral/internal/regularfile", "github.com/corral-dev/corral/internal/shellquote")
}

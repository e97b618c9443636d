package cli

import (
	"encoding/json"
	"io"

	"github.com/corral-dev/corral/internal/termsafe"
)

// Every string a command prints comes from a daemon, a hub or a device
// and may carry terminal escapes: text goes through safe (or
// termsafe.Text), JSON through newJSON. docs/cli.md describes the escapes.

// safe makes a string printable on one line of a terminal.
func safe(s string) string { return termsafe.String(s) }

// newJSON is a JSON encoder whose output carries no character that steers
// a terminal: C0 and C1 controls, DEL and bidi controls are \u escapes.
func newJSON(w io.Writer) *json.Encoder { return json.NewEncoder(termsafe.JSON(w)) }

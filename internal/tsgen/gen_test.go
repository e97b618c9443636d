package main

import (
	"os"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

const committed = "../../web/src/api.gen.ts"

// TestCommittedFileIsFresh: web/src/api.gen.ts is what the Go types make
// now. When this fails, run `go generate ./internal/api` and commit it.
func TestCommittedFileIsFresh(t *testing.T) {
	want, err := generate("../api")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is stale: run `go generate ./internal/api` and commit it", committed)
	}
}

func TestGenerated(t *testing.T) {
	b, err := generate("../api")
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, want := range []string{
		// Exhaustive unions, from the constants.
		"export type Status = 'starting' | 'idle' | 'busy' | 'needs-input' | 'review' | 'unknown' | 'exited';",
		"export type DialogKind = 'permission' | 'question' | 'plan' | 'trust' | 'api_key' | 'elicitation' | 'bypass_permissions' | 'mcp_server' | 'settings_error' | 'choice';",
		"  status: Status;\n",
		"  kind: DialogKind;\n",
		// omitempty is optional; a nil pointer without it is null.
		"  waiting_for: Waiting | null;\n",
		"  error_message?: string;\n",
		// The session's id is the path's, not the body's.
		"export interface RenameRequest {\n  name: string;\n}",
		"export interface CorralEvent {",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the generated file lacks %q", want)
		}
	}
	// Every op with a route is in the table.
	for _, o := range api.Ops() {
		if o.Path != "" && !strings.Contains(out, "  "+o.Name+": { method: '"+o.Method+"', path: '"+o.Path+"' },") {
			t.Errorf("op %s is not in the table", o.Name)
		}
	}
	if strings.Contains(out, "| string") {
		t.Error("a union is left open (| string)")
	}
}

// Package layers holds the test of corral's dependency order, for every
// package at once: each package of the module may import only the corral
// packages its entry below names. A new package, or a new arrow between
// two, is a deliberate change to this table, made where it can be read as a
// whole (docs/architecture.md draws it).
package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/corral-dev/corral/"

// The layers, bottom up. A package names the ones it may use.
var (
	// leaves import nothing of ours.
	leaves = []string{
		"internal/api", "internal/attach", "internal/datadir", "internal/devicekey", "internal/fetch",
		"internal/identity", "internal/lifetime", "internal/netguard", "internal/proc",
		"internal/store", "internal/term", "internal/termsafe", "internal/tmux", "internal/version",
		"internal/metrics",
		// Small generic helpers, none of them about Claude or corral.
		"internal/atomicfile", "internal/jsonobject", "internal/regularfile", "internal/shellquote",
	}
	// wire: the wire types and what reads Claude's and git's data,
	// depending on nothing of ours but api (and a leaf or two).
	wire = map[string][]string{
		"internal/backend": {"internal/api"},
		// Claude's data: what its packages share (paths, limits, lenient
		// decoding), the pane's screen, the live-session files, the
		// transcripts, and the hooks with their settings and status line.
		"internal/claude":             {"internal/regularfile"},
		"internal/claude/screen":      {}, // imports nothing of ours
		"internal/claude/pricing":     {}, // imports nothing of ours
		"internal/claude/sessionfile": {"internal/claude", "internal/regularfile"},
		"internal/claude/transcript":  {"internal/api", "internal/claude", "internal/claude/pricing", "internal/regularfile"},
		"internal/claude/hooks": {"internal/api", "internal/atomicfile", "internal/claude", "internal/claude/transcript",
			"internal/jsonobject", "internal/regularfile", "internal/shellquote"},
		"internal/status":   {"internal/api"},
		"internal/events":   {"internal/api"},
		"internal/gitrepo":  {"internal/api"},
		"internal/client":   {"internal/api"},
		"internal/tsgen":    {"internal/api"},
		"internal/link":     {"internal/api", "internal/lifetime"},
		"internal/bound":    {"internal/lifetime"},
		"internal/hookwire": {"internal/datadir", "internal/proc"},
		// systemd units and launchd plists, written atomically.
		"internal/service": {"internal/atomicfile"},
		// The store's other implementation and its conformance suite.
		"internal/store/postgres":  {"internal/store"},
		"internal/store/storetest": {"internal/store"},
	}
	// The machine, the people, and the serving layers. Serving (httpapi,
	// web) uses backend's interfaces, never hub or agent.
	upper = map[string][]string{
		"internal/agent": {"internal/api", "internal/atomicfile", "internal/backend", "internal/claude",
			"internal/claude/hooks", "internal/claude/screen", "internal/claude/sessionfile", "internal/claude/transcript",
			"internal/datadir", "internal/events", "internal/fetch", "internal/gitrepo", "internal/hookwire", "internal/lifetime",
			"internal/proc", "internal/shellquote", "internal/status", "internal/store", "internal/term", "internal/termsafe",
			"internal/tmux", "internal/version", "internal/metrics"},
		"internal/notify": {"internal/api", "internal/events", "internal/lifetime", "internal/netguard", "internal/store",
			"internal/metrics"},
		"internal/hub": {"internal/api", "internal/backend", "internal/devicekey", "internal/events", "internal/identity",
			"internal/lifetime", "internal/link", "internal/notify", "internal/store", "internal/version", "internal/metrics"},
		"internal/agentlink": {"internal/agent", "internal/api", "internal/backend", "internal/claude", "internal/devicekey",
			"internal/lifetime", "internal/link", "internal/term", "internal/version", "internal/metrics"},
		"internal/httpapi": {"internal/api", "internal/backend"},
		// The dashboard serves the browser's own (auth, WebSockets, files);
		// the user's data is the hub's, served as operations.
		"internal/web": {"internal/api", "internal/backend", "internal/httpapi", "internal/identity", "internal/store"},
	}
	// top: the commands, and the tests' kit, may use anything below them.
	top = []string{"internal/cli", "cmd/corral", "cmd/corral-hook", "bench/", "test/", "internal/testkit/"}
)

// forbidden are arrows that must never come back, whatever the table says.
var forbidden = [][2]string{
	{"internal/hub", "internal/web"}, {"internal/hub", "internal/httpapi"}, {"internal/hub", "internal/term"},
	{"internal/hub", "internal/agent"}, {"internal/web", "internal/hub"}, {"internal/web", "internal/agent"},
	{"internal/httpapi", "internal/hub"}, {"internal/httpapi", "internal/agent"}, {"internal/agent", "internal/hub"},
	{"internal/web", "internal/notify"}, {"cmd/corral-hook", "internal/cli"},
}

func allowed(pkg string) ([]string, bool) {
	if slices.Contains(leaves, pkg) {
		return nil, true
	}
	if a, ok := wire[pkg]; ok {
		return a, true
	}
	if a, ok := upper[pkg]; ok {
		return a, true
	}
	for _, t := range top {
		if pkg == strings.TrimSuffix(t, "/") || strings.HasPrefix(pkg, t) {
			return nil, true // anything
		}
	}
	return nil, false
}

func TestDependencyOrder(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]map[string]bool{} // package -> corral packages its non-test files import
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git", "dist", "bin":
				return filepath.SkipDir
			}
			if path == filepath.Join(root, "web") { // the front end's sources
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if q, ok := strings.CutPrefix(p, module); ok {
				imports[pkg][q] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	if len(pkgs) < 30 {
		t.Fatalf("only %d packages found; is the walk right?", len(pkgs))
	}
	for _, pkg := range pkgs {
		ok, known := allowed(pkg)
		if !known {
			t.Errorf("%s is in no layer: add it to internal/testkit/layers (and docs/architecture.md)", pkg)
			continue
		}
		for imp := range imports[pkg] {
			for _, f := range forbidden {
				if f[0] == pkg && (imp == f[1] || strings.HasPrefix(imp, f[1]+"/")) {
					t.Errorf("%s imports %s: that arrow points the wrong way", pkg, imp)
				}
			}
			if ok == nil {
				if slices.Contains(leaves, pkg) {
					t.Errorf("%s is a leaf but imports %s", pkg, imp)
				}
				continue
			}
			if !slices.Contains(ok, imp) {
				t.Errorf("%s imports %s, which its layer does not allow", pkg, imp)
			}
		}
	}
	// The table names no package that is gone.
	for _, group := range [][]string{leaves, keys(wire), keys(upper)} {
		for _, p := range group {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("the table names %s, which does not exist", p)
			}
		}
	}
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

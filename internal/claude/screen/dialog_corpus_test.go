package screen

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// flowsDir holds the recorded flows (testdata/claude-code-2.1.197/flows).
const flowsDir = fixtureDir + "/flows"

// corpusScreen is one recorded screen: flow, step (with " @50x30" for the
// phone-sized capture) and the pane's text.
type corpusScreen struct {
	flow, step, text string
}

func (c corpusScreen) name() string { return c.flow + "/" + c.step }

// splitScreens splits a screens.txt into its "=== step" sections.
func splitScreens(b []byte) (names []string, texts map[string]string) {
	texts = map[string]string{}
	name := ""
	var cur []string
	flush := func() {
		if name != "" {
			texts[name] = strings.Join(cur, "\n")
			names = append(names, name)
		}
	}
	for _, l := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(l, "=== "); ok {
			flush()
			name, cur = n, nil
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return names, texts
}

// corpus returns every recorded screen of every flow.
func corpus(t testing.TB) []corpusScreen {
	t.Helper()
	ents, err := os.ReadDir(flowsDir)
	if err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	var out []corpusScreen
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(flowsDir, e.Name(), "screens.txt"))
		if err != nil {
			t.Fatal(err)
		}
		names, texts := splitScreens(b)
		for _, n := range names {
			out = append(out, corpusScreen{flow: e.Name(), step: n, text: texts[n]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name() < out[j].name() })
	return out
}

// TestReadScreenDump prints Read for every recorded screen
// (CLAUDE_DUMP_SCREENS=1), to write and check the expectations by eye.
func TestReadScreenDump(t *testing.T) {
	if os.Getenv("CLAUDE_DUMP_SCREENS") == "" {
		t.Skip("set CLAUDE_DUMP_SCREENS=1 to print Read of every recorded screen")
	}
	only := os.Getenv("CLAUDE_DUMP_SCREENS")
	for _, c := range corpus(t) {
		if only != "1" && !strings.Contains(c.name(), only) {
			continue
		}
		b, _ := json.MarshalIndent(Read(c.text), "", "  ")
		t.Logf("%s:\n%s", c.name(), b)
	}
}

// summary is a one-line description of a Screen, for the dump and for
// failure messages.
func summary(s Screen) string {
	var b strings.Builder
	if s.Input != nil {
		b.WriteString("input " + strconvQuote(s.Input.Draft))
	}
	if d := s.Dialog; d != nil {
		b.WriteString(d.Kind + " title=" + strconvQuote(d.Title) + " q=" + strconvQuote(d.Question))
		if d.Tool != "" || d.Agent != "" {
			b.WriteString(" tool=" + d.Tool + " agent=" + d.Agent)
		}
		b.WriteString(" opts=[")
		for i, o := range d.Options {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(o.Label)
			if o.Text {
				b.WriteString("{text}")
			}
			if o.Chat {
				b.WriteString("{chat}")
			}
			if o.Checked != nil {
				if *o.Checked {
					b.WriteString("{x}")
				} else {
					b.WriteString("{ }")
				}
			}
			if o.Description != "" {
				b.WriteString(" (" + o.Description + ")")
			}
		}
		b.WriteString("] sel=" + strconvItoa(d.Selected) + " focus=" + strconvQuote(d.Focus) + " foot=" + strconvQuote(d.Footer))
		if d.Questions != nil {
			b.WriteString(" tabs=" + strings.Join(d.Questions, ",") + " cur=" + strconvItoa(d.Current))
		}
		if d.Body != "" {
			b.WriteString(" body=" + strconvQuote(d.Body))
		}
		if d.Plan != "" {
			b.WriteString(" plan=" + strconvQuote(d.Plan))
		}
		if d.Preview != "" {
			b.WriteString(" preview=" + strconvQuote(d.Preview))
		}
		for _, f := range d.Fields {
			b.WriteString(" field{" + f.Name + " " + f.Kind + "=" + strconvQuote(f.Value))
			if f.Missing {
				b.WriteString(" missing")
			}
			if len(f.Choices) > 0 {
				b.WriteString(" choices=" + strings.Join(f.Choices, "/") + "@" + strconvItoa(f.ChoiceFocus))
			}
			b.WriteString("}")
		}
		if d.Truncated {
			b.WriteString(" truncated")
		}
	}
	if s.Busy {
		b.WriteString(" busy")
	}
	if s.BackgroundTasks > 0 {
		b.WriteString(" bg=" + strconvItoa(s.BackgroundTasks))
	}
	if b.Len() == 0 {
		return "(nothing)"
	}
	return b.String()
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
func strconvItoa(i int) string     { b, _ := json.Marshal(i); return string(b) }

func TestReadScreenSummary(t *testing.T) {
	if os.Getenv("CLAUDE_DUMP_SCREENS") == "" {
		t.Skip("set CLAUDE_DUMP_SCREENS=1")
	}
	for _, c := range corpus(t) {
		t.Logf("%-60s %s", c.name(), summary(Read(c.text)))
	}
}

var updateGolden = flag.Bool("update", false, "rewrite testdata/screens.golden from Read")

// TestReadScreenCorpus reads every recorded screen, at 140x40 and at 50x30,
// and compares what Read says with testdata/screens.golden (checked
// by eye against the screens; -update rewrites it).
func TestReadScreenCorpus(t *testing.T) {
	var b strings.Builder
	for _, c := range corpus(t) {
		fmt.Fprintf(&b, "%s\t%s\n", c.name(), summary(Read(c.text)))
	}
	golden := filepath.Join("testdata", "screens.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	got := strings.Split(b.String(), "\n")
	wl := strings.Split(string(want), "\n")
	wm := map[string]string{}
	for _, l := range wl {
		if k, v, ok := strings.Cut(l, "\t"); ok {
			wm[k] = v
		}
	}
	for _, l := range got {
		k, v, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		w, found := wm[k]
		switch {
		case !found:
			t.Errorf("%s: not in the golden file (rerun with -update and check it): %s", k, v)
		case w != v:
			t.Errorf("%s:\n got %s\nwant %s", k, v, w)
		}
		delete(wm, k)
	}
	for k := range wm {
		t.Errorf("%s: in the golden file but not recorded", k)
	}
}

// TestReadScreenBothWidths checks that each dialog reads the same at 140x40
// and, after the pane was resized, at a phone's 50x30: same kind, options,
// focus and questions.
func TestReadScreenBothWidths(t *testing.T) {
	byName := map[string]Screen{}
	cs := corpus(t)
	for _, c := range cs {
		byName[c.name()] = Read(c.text)
	}
	// A capture taken while Claude redraws after the shrink (stale rules
	// above the dialog, its last option pushed off): a menu corral refuses.
	garbled := map[string]bool{"question/9-multi-review @50x30": true}
	n := 0
	for _, c := range cs {
		wide, ok := strings.CutSuffix(c.name(), " @50x30")
		if !ok || garbled[c.name()] {
			continue
		}
		n++
		a, b := byName[wide], byName[c.name()]
		if (a.Dialog == nil) != (b.Dialog == nil) || (a.Input == nil) != (b.Input == nil) {
			t.Errorf("%s: 140x40 %s, 50x30 %s", wide, summary(a), summary(b))
			continue
		}
		if a.Input != nil && a.Input.Draft != b.Input.Draft {
			t.Errorf("%s: draft %q at 140x40, %q at 50x30", wide, a.Input.Draft, b.Input.Draft)
		}
		if a.Dialog == nil {
			continue
		}
		da, db := a.Dialog, b.Dialog
		if da.Kind != db.Kind || da.Selected != db.Selected || da.Focus != db.Focus || !slices.Equal(da.Questions, db.Questions) ||
			da.Tool != db.Tool || da.Agent != db.Agent || da.Title != db.Title || da.Question != db.Question || da.Plan != db.Plan {
			t.Errorf("%s:\n140x40 %s\n 50x30 %s", wide, summary(a), summary(b))
		}
		if len(da.Options) != len(db.Options) {
			t.Errorf("%s: %d options at 140x40, %d at 50x30", wide, len(da.Options), len(db.Options))
			continue
		}
		for i := range da.Options {
			if da.Options[i].Label != db.Options[i].Label || da.Options[i].Description != db.Options[i].Description || da.Options[i].Text != db.Options[i].Text {
				t.Errorf("%s option %d: %+v at 140x40, %+v at 50x30", wide, i+1, da.Options[i], db.Options[i])
			}
		}
		if da.Kind != KindSettingsError && da.Fingerprint() != db.Fingerprint() && da.Body == db.Body {
			t.Errorf("%s: fingerprints differ", wide)
		}
	}
	if n < 20 {
		t.Fatalf("only %d screens recorded at both widths", n)
	}
}

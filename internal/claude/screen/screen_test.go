package screen

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fixtureScreens splits screens.txt into its "=== name" sections.
func fixtureScreens(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	name := ""
	var cur []string
	for _, l := range strings.Split(string(readFixture(t, "screens.txt")), "\n") {
		if n, ok := strings.CutPrefix(l, "=== "); ok {
			if name != "" {
				out[name] = strings.Join(cur, "\n")
			}
			name, cur = n, nil
			continue
		}
		cur = append(cur, l)
	}
	out[name] = strings.Join(cur, "\n")
	return out
}

func TestParsePromptFixture(t *testing.T) {
	screens := fixtureScreens(t)
	if len(screens) != 11 {
		t.Fatalf("%d screens", len(screens))
	}
	for name, screen := range screens {
		p, ok := ParsePrompt(screen)
		if name != "3-permission" {
			if ok {
				t.Errorf("%s: prompt found: %+v", name, p)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s: no prompt", name)
		}
		want := Prompt{
			Title:    "Bash command",
			Body:     "touch /home/dev/scratch/created_by_tool\ncreate file",
			Question: "Do you want to proceed?",
			Options: []PromptOption{
				{Label: "Yes", Keys: []string{"1"}},
				{Label: "Yes, and always allow access to mock/ from this project", Keys: []string{"2"}},
				{Label: "No", Keys: []string{"3"}},
			},
			Selected: 0,
			Footer:   "Esc to cancel · Tab to amend · ctrl+e to explain",
		}
		if !promptEqual(p, want) {
			t.Errorf("prompt\n%+v\nwant\n%+v", p, want)
		}
	}
}

func promptEqual(a, b Prompt) bool {
	if a.Title != b.Title || a.Body != b.Body || a.Question != b.Question || a.Selected != b.Selected ||
		a.Footer != b.Footer || len(a.Options) != len(b.Options) {
		return false
	}
	for i := range a.Options {
		if a.Options[i].Label != b.Options[i].Label || !slices.Equal(a.Options[i].Keys, b.Options[i].Keys) {
			return false
		}
	}
	return true
}

func TestParsePromptNarrowPane(t *testing.T) {
	// The same dialog in a 40-column pane: option 2 wraps, and the focus
	// has moved to it.
	screen := strings.Join([]string{
		"● Bash(touch /home/dev/scratch/created_by_",
		"  tool)",
		"────────────────────────────────────────",
		" Bash command",
		"",
		"   touch /home/dev/scratch/created_by_to",
		"   ol",
		"",
		" Do you want to proceed?",
		"   1. Yes",
		" ❯ 2. Yes, and always allow access to",
		"      mock/ from this project",
		"   3. No",
		"",
		" Esc to cancel · Tab to amend · ctrl+e",
		" to explain",
	}, "\n")
	p, ok := ParsePrompt(screen)
	if !ok {
		t.Fatal("no prompt")
	}
	if len(p.Options) != 3 || p.Options[1].Label != "Yes, and always allow access to mock/ from this project" ||
		p.Selected != 1 || p.Title != "Bash command" || p.Question != "Do you want to proceed?" {
		t.Fatalf("%+v", p)
	}
}

func TestParsePromptQuestionMenu(t *testing.T) {
	// An AskUserQuestion-style menu: descriptions under the options (not
	// wraps: the lines above them had room), and a text-input option.
	screen := strings.Join([]string{
		"● I need to know which database to use.",
		"",
		"────────────────────────────────────────────────────────────────────────────────",
		" ☐ Database",
		"",
		"Which database should the service use?",
		"",
		"❯ 1. PostgreSQL",
		"     Relational, what the team knows",
		"  2. SQLite",
		"     Embedded, no server",
		"  3. Type something.",
		"",
		"Enter to select · ↑/↓ to navigate · Esc to cancel",
	}, "\n")
	p, ok := ParsePrompt(screen)
	if !ok {
		t.Fatal("no prompt")
	}
	var labels []string
	for _, o := range p.Options {
		labels = append(labels, o.Label)
	}
	if !slices.Equal(labels, []string{"PostgreSQL", "SQLite", "Type something."}) || p.Question != "Which database should the service use?" ||
		p.Title != "☐ Database" || p.Footer != "Enter to select · ↑/↓ to navigate · Esc to cancel" {
		t.Fatalf("%+v", p)
	}
}

func TestParsePromptRejectsConversationLists(t *testing.T) {
	cases := map[string]string{
		"assistant list, idle": strings.Join([]string{
			"● Steps:",
			"  1. Build",
			"  2. Test",
			"",
			"────────────────",
			"❯\u00a0",
			"────────────────",
		}, "\n"),
		"typed numbered prompts": strings.Join([]string{
			"❯ 1. first thing",
			"",
			"● ok",
			"",
			"❯ 2. second thing",
			"",
			"● ok",
		}, "\n"),
		"old dialog scrolled up": strings.Join([]string{
			" Do you want to proceed?",
			" ❯ 1. Yes",
			"   2. No",
			"",
			"● Done.",
			"",
			"❯ ",
		}, "\n"),
		"single option":      " Question?\n ❯ 1. Only",
		"no cursor":          " Question?\n   1. A\n   2. B\n",
		"numbers not in row": " ❯ 1. A\n   3. C\n",
		"empty":              "",
	}
	for name, screen := range cases {
		if p, ok := ParsePrompt(screen); ok {
			t.Errorf("%s: prompt %+v", name, p)
		}
	}
}

func TestOptionKeysPastNine(t *testing.T) {
	var b strings.Builder
	b.WriteString(" Pick one\n")
	for i := 1; i <= 12; i++ {
		mark := "  "
		if i == 3 {
			mark = "❯ "
		}
		b.WriteString(" " + mark + strconv.Itoa(i) + ". item\n")
	}
	p, ok := ParsePrompt(b.String())
	if !ok || len(p.Options) != 12 || p.Selected != 2 {
		t.Fatalf("%+v %v", p, ok)
	}
	if k := p.Options[8].Keys; !slices.Equal(k, []string{"9"}) {
		t.Errorf("option 9 keys %v", k)
	}
	if k := p.Options[11].Keys; !slices.Equal(k, []string{"Down", "Down", "Down", "Down", "Down", "Down", "Down", "Down", "Down", "Enter"}) {
		t.Errorf("option 12 keys %v", k)
	}
	if k := optionKeys(9, 11); !slices.Equal(k, []string{"Up", "Up", "Enter"}) {
		t.Errorf("upwards %v", k)
	}
}

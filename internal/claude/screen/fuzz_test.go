package screen

import (
	"strings"
	"testing"
	"unicode"

	"github.com/corral-dev/corral/internal/tmux"
)

// Fuzz targets for the screen readers, seeded with the recorded screens:
//
//	go test ./internal/claude/screen -run '^$' -fuzz '^FuzzReadScreen$' -fuzztime 1m

func FuzzParsePrompt(f *testing.F) {
	for _, s := range fixtureScreens(f) {
		f.Add(s)
	}
	f.Add(" Q?\n ❯ 1. a\n   2. b\n")
	f.Fuzz(func(t *testing.T, screen string) {
		p, ok := ParsePrompt(screen)
		if !ok {
			return
		}
		if len(p.Options) < 2 || p.Selected < 0 || p.Selected >= len(p.Options) {
			t.Fatalf("bad prompt %+v", p)
		}
		for _, o := range p.Options {
			if len(o.Keys) == 0 {
				t.Fatalf("option without keys %+v", o)
			}
		}
	})
}

func FuzzReadScreen(f *testing.F) {
	for _, c := range corpus(f) {
		f.Add(c.text)
	}
	f.Add("\x1b[48;5;153m ☐ A \x1b[0m ☐ B\n❯ 1. x\n  2. y")
	f.Add(strings.Repeat("─", 40) + "\n❯\u00a0\n" + strings.Repeat("─", 40))
	f.Fuzz(func(t *testing.T, screen string) {
		s := Read(screen)
		if again := Read(screen); jsonOf(again) != jsonOf(s) {
			t.Fatalf("not deterministic:\n%s\n%s", jsonOf(s), jsonOf(again))
		}
		if s.Dialog != nil && s.Input != nil {
			t.Fatal("a dialog and the input box at once")
		}
		if s.BackgroundTasks < 0 {
			t.Fatal("negative background tasks")
		}
		if d := s.Dialog; d != nil {
			if d.Selected < -1 || d.Selected >= len(d.Options) {
				t.Fatalf("selected %d of %d options", d.Selected, len(d.Options))
			}
			if d.Current < CurrentUnknown || d.Questions != nil && d.Current >= len(d.Questions) {
				t.Fatalf("current %d of %d questions", d.Current, len(d.Questions))
			}
			if len(d.Answered) != len(d.Questions) {
				t.Fatal("answered and questions differ in length")
			}
			if d.Fingerprint() == "" {
				t.Fatal("empty fingerprint")
			}
		}
	})
}

func FuzzKeys(f *testing.F) {
	for _, c := range corpus(f) {
		if Read(c.text).Dialog != nil {
			f.Add(c.text, 1, "", uint8(0), false)
			f.Add(c.text, 3, "some text", uint8(5), false)
		}
	}
	f.Fuzz(func(t *testing.T, screen string, option int, text string, options uint8, cancel bool) {
		d := Read(screen).Dialog
		if d == nil {
			return
		}
		var opts []int
		for i := 0; i < 8; i++ {
			if options&(1<<i) != 0 {
				opts = append(opts, i+1)
			}
		}
		a := Answer{Option: option, Text: text, Options: opts, Cancel: cancel}
		if d.Kind == KindElicitation && text != "" {
			a = Answer{Option: option, Fields: map[string]string{}}
			for _, fl := range d.Fields {
				a.Fields[fl.Name] = text
			}
		}
		p, err := d.Keys(a)
		if err != nil {
			return
		}
		if len(p.Steps) == 0 {
			t.Fatal("a plan without steps")
		}
		for _, s := range p.Steps {
			if (len(s.Keys) == 0) == (s.Text == "") {
				t.Fatalf("a step must hold keys or text: %+v", s)
			}
			for _, k := range s.Keys {
				if !tmux.ValidKey(k) {
					t.Fatalf("invalid key %q", k)
				}
			}
			for _, r := range s.Text {
				if unicode.IsControl(r) {
					t.Fatalf("control character in typed text %q", s.Text)
				}
			}
			if s.Until.What == "" {
				t.Fatalf("a step without a condition: %+v", s)
			}
		}
		if d.Kind == KindChoice {
			t.Fatal("planned keys for an unknown menu")
		}
	})
}

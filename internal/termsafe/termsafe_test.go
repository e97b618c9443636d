package termsafe

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

func TestImports(t *testing.T) { imports.Only(t) }

// hostile carries what a device or payload could send to steer a terminal.
var hostile = []struct{ in, one, multi string }{
	{"plain", "plain", "plain"},
	{"café ✓ 日本", "café ✓ 日本", "café ✓ 日本"},
	{"\x1b]52;c;SGVsbG8=\x07", `\x1b]52;c;SGVsbG8=\x07`, `\x1b]52;c;SGVsbG8=\x07`},
	{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`, `\x1b[2J\x1b[31mred`},
	{"a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
	{"a\u009d52;c;x\u009c", `a\u009d52;c;x\u009c`, `a\u009d52;c;x\u009c`},
	{"evil\u202egnp.exe", `evil\u202egnp.exe`, `evil\u202egnp.exe`},
	{"\u2066x\u2069\u200e\u200f\u061c", `\u2066x\u2069\u200e\u200f\u061c`, `\u2066x\u2069\u200e\u200f\u061c`},
	{"line\nnext\tcol\rover", `line\nnext\tcol\rover`, "line\nnext\tcol\\rover"},
	{"del\x7f nul\x00", `del\x7f nul\x00`, `del\x7f nul\x00`},
	{"bad\xffutf8\xc3", `bad\xffutf8\xc3`, `bad\xffutf8\xc3`},
	{"sep\u2028par\u2029", `sep\u2028par\u2029`, `sep\u2028par\u2029`},
}

func TestString(t *testing.T) {
	for _, c := range hostile {
		if got := String(c.in); got != c.one {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.one)
		}
		if got := Text(c.in); got != c.multi {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.multi)
		}
		if Clean(c.in) != (c.in == c.one) {
			t.Errorf("Clean(%q) = %v", c.in, Clean(c.in))
		}
	}
}

func TestJSON(t *testing.T) {
	type rec struct {
		Name string            `json:"name"`
		Tags []string          `json:"tags"`
		M    map[string]string `json:"m"`
	}
	for _, c := range hostile {
		in := rec{Name: c.in, Tags: []string{c.in, "x"}, M: map[string]string{c.in: c.in}}
		var buf bytes.Buffer
		enc := json.NewEncoder(JSON(&buf))
		enc.SetIndent("", "  ")
		if err := enc.Encode(in); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsFunc(buf.String(), func(r rune) bool { return Unsafe(r) && r != '\n' }) {
			t.Errorf("JSON of %q carries an unsafe character: %q", c.in, buf.String())
		}
		var out rec
		if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
			t.Fatalf("JSON of %q does not decode: %v\n%s", c.in, err, buf.String())
		}
		want := in
		if !utf8.ValidString(c.in) {
			// encoding/json itself replaces invalid UTF-8 with U+FFFD.
			b, _ := json.Marshal(in)
			want = rec{}
			json.Unmarshal(b, &want)
		}
		if !reflect.DeepEqual(out, want) {
			t.Errorf("JSON of %q decodes to %+v, want %+v", c.in, out, want)
		}
	}
}

// TestJSONSplitWrites: a character cut between two writes is escaped whole.
func TestJSONSplitWrites(t *testing.T) {
	doc := []byte(`{"a":"x` + "\u202e\u009b" + `y"}`)
	for cut := range len(doc) {
		var buf bytes.Buffer
		w := JSON(&buf)
		if n, err := w.Write(doc[:cut]); err != nil || n != cut {
			t.Fatalf("write: %d, %v", n, err)
		}
		if _, err := w.Write(doc[cut:]); err != nil {
			t.Fatal(err)
		}
		if got, want := buf.String(), `{"a":"x\u202e\u009by"}`; got != want {
			t.Fatalf("cut at %d: %q, want %q", cut, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{String(s), Text(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q: output %q is not UTF-8", s, out)
			}
			if strings.ContainsFunc(out, func(r rune) bool { return Unsafe(r) && r != '\n' && r != '\t' }) {
				t.Fatalf("%q: output %q keeps an unsafe character", s, out)
			}
		}
		if strings.ContainsFunc(String(s), Unsafe) {
			t.Fatalf("%q: String keeps a newline or tab", s)
		}
		if Clean(s) && (String(s) != s || Text(s) != s) {
			t.Fatalf("%q is clean but changed", s)
		}
	})
}

func FuzzJSON(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		if err := json.NewEncoder(JSON(&buf)).Encode(map[string]string{s: s}); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsFunc(buf.String(), func(r rune) bool { return Unsafe(r) && r != '\n' }) {
			t.Fatalf("%q: %q", s, buf.String())
		}
		var got, want map[string]string
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		b, _ := json.Marshal(map[string]string{s: s})
		json.Unmarshal(b, &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decodes to %q, want %q", s, got, want)
		}
	})
}

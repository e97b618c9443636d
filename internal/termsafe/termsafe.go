// Package termsafe makes untrusted strings safe to print on a terminal.
// Every string corral prints comes from somewhere it does not control: a
// device's hostname, a session's name, Claude's last message, a hub's error.
// Printed raw, an ESC, CSI or OSC sequence in one of them steers the
// terminal (OSC 52 writes the clipboard), a C1 control does the same on
// terminals that read 8-bit controls, and a bidi override makes text read
// differently from what it is. The CLI passes every such string through
// String or Text, and every JSON document through JSON.
//
// The package depends on the standard library only.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether r must not reach a terminal as it is: C0 controls,
// DEL, C1 controls, the bidi embedding, override, isolate and mark
// characters, and the line and paragraph separators.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, // ARABIC LETTER MARK
		r == 0x200e, r == 0x200f, // LRM, RLM
		r >= 0x202a && r <= 0x202e, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069, // LRI, RLI, FSI, PDI
		r == 0x2028, r == 0x2029:   // LINE and PARAGRAPH SEPARATOR
		return true
	}
	return false
}

// Clean reports whether s is valid UTF-8 without an unsafe character.
func Clean(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, Unsafe)
}

// String makes s printable on one line: every unsafe character (newline
// and tab included) and every byte that is not UTF-8 is shown as an escape
// such as \x1b, \n or \u202e, so what was sent stays visible without
// acting. A clean string comes back unchanged.
func String(s string) string { return escape(s, false) }

// Text is String for text of several lines: newlines and tabs stay.
func Text(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	keep := func(r rune) bool { return multiline && (r == '\n' || r == '\t') }
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || Unsafe(r) && !keep(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !Unsafe(r) || keep(r):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// JSON returns a writer that passes JSON text to w with every unsafe
// character written as a \u escape. encoding/json already escapes C0
// controls, U+2028 and U+2029 and replaces invalid UTF-8; DEL, C1 controls
// and bidi controls it writes raw. Outside strings JSON has only ASCII
// punctuation and whitespace, so the escapes land inside strings and the
// document decodes to the same data.
//
// Writes may split a character: its first bytes wait for the next Write.
func JSON(w io.Writer) io.Writer { return &jsonWriter{w: w} }

type jsonWriter struct {
	w    io.Writer
	held []byte // the start of a character cut by the last Write
	out  []byte
}

func (j *jsonWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(j.held) > 0 {
		p = append(j.held, p...)
		j.held = nil
	}
	out := j.out[:0]
	i := 0
	for i < len(p) {
		c := p[i]
		if c < utf8.RuneSelf {
			if c == 0x7f || c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
				// JSON allows these raw only inside strings, where
				// encoding/json never writes them; escape them anyway.
				out = fmt.Appendf(out, `\u%04x`, c)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(p[i:]) {
			j.held = append([]byte(nil), p[i:]...)
			break
		}
		r, size := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError && Unsafe(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	j.out = out
	if _, err := j.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

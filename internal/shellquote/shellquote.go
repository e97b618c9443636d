// Package shellquote quotes words for a POSIX shell and splits the first
// words of a command line back, for commands written into files that a
// shell will run (Claude's status-line command).
package shellquote

import "strings"

// Words splits the first n words of a POSIX shell command, honouring
// quotes and backslashes (enough to find a program and its first
// argument; no expansion).
func Words(s string, n int) []string {
	var out []string
	var cur strings.Builder
	in := false // inside a word
	for i := 0; i < len(s) && len(out) < n; i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			cur.WriteByte(s[i])
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in && len(out) < n {
		out = append(out, cur.String())
	}
	return out
}

// Quote quotes s for a POSIX shell, leaving plain words as they are.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join joins arguments into a shell command line, quoting each.
// Build hook and status-line commands with it ("corral" path, "hook").
func Join(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

package gitrepo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/corral-dev/corral/internal/api"
)

// Limits of a diff.
const (
	// maxDiffOutput caps what git diff may print; past it the patches
	// are cut (the counts, printed first, are whole).
	maxDiffOutput = 4 << 20
	// PatchBudget is how much patch text one answer carries.
	PatchBudget = 384 << 10
	// maxUntrackedDiff bounds the untracked files shown as new ones.
	maxUntrackedDiff = 200
	// MaxAnswer bounds an answer's JSON, well inside the device link's
	// 1 MiB message.
	MaxAnswer = 900 << 10
)

// CheckPath refuses a path that is not a clean relative path inside the
// working tree ("src/a b.go"): no "..", no leading "/", no NUL.
func CheckPath(p string) error {
	switch {
	case p == "":
		return nil
	case strings.ContainsRune(p, 0), len(p) > 4096:
		return api.Errorf(api.CodeBadRequest, "path %q: not a file name", p)
	case path.IsAbs(p), path.Clean(p) != p, p == "..", strings.HasPrefix(p, "../"), p == ".":
		return api.Errorf(api.CodeBadRequest, "path %q: give a clean path relative to the repository's root, as git status names it", p)
	}
	return nil
}

// Diff reads the working tree's diff: the unstaged changes (index to the
// files, and every untracked file as a new one) or, with staged, the staged
// ones (HEAD to index). p, when set, limits it to that path (relative to
// the top, a literal path: no pattern).
func (g *Git) Diff(ctx context.Context, r Repo, staged bool, p string) (api.GitDiff, error) {
	if err := CheckPath(p); err != nil {
		return api.GitDiff{}, err
	}
	args := []string{diffCommand(staged), "--numstat", "-z", "--patch", "-M", "-U3", "--no-color", "--no-ext-diff", "--no-textconv",
		"--no-relative", "--src-prefix=a/", "--dst-prefix=b/", "--submodule=short"}
	if staged {
		args = append(args, "--cached")
	}
	if p != "" {
		paths, err := g.renamedFrom(ctx, r, staged, p)
		if err != nil {
			return api.GitDiff{}, err
		}
		args = append(append(args, "--"), paths...)
	}
	res, err := g.run(ctx, r.Top, limits{timeout: diffTimeout, max: maxDiffOutput}, args...)
	if err != nil {
		return api.GitDiff{}, err
	}
	d := api.GitDiff{Root: r.Top, Staged: staged, Files: []api.GitFileDiff{}}
	files, patchesCut := splitDiff(res.out, res.cut)
	d.Truncated = patchesCut
	d.Files = append(d.Files, files...)
	if !staged {
		un, cut, err := g.untracked(ctx, r, p)
		if err != nil {
			return api.GitDiff{}, err
		}
		d.Truncated = d.Truncated || cut
		d.Files = append(d.Files, un...)
	}
	budget(&d, PatchBudget)
	FitDiff(&d, MaxAnswer)
	return d, nil
}

// diffCommand is the git command that compares without writing: `git
// diff` of the files refreshes the index, and takes index.lock to do it
// (a commit of Claude's or the person's then fails), whatever
// --no-optional-locks says; its plumbing, `git diff-files`, writes nothing.
// `git diff --cached` writes nothing either.
func diffCommand(staged bool) string {
	if staged {
		return "diff"
	}
	return "diff-files"
}

// renamedFrom is the paths a diff of p must name: p, and where p was
// renamed from, or git would show a rename limited to its new name as an
// added file.
func (g *Git) renamedFrom(ctx context.Context, r Repo, staged bool, p string) ([]string, error) {
	if !staged {
		return []string{p}, nil // the index and the files: no renames
	}
	res, err := g.run(ctx, r.Top, limits{timeout: diffTimeout, max: maxNumstat},
		"diff", "--cached", "-M", "--numstat", "-z", "--no-ext-diff", "--no-textconv", "--no-relative")
	if err != nil {
		return nil, err
	}
	for _, n := range ParseNumstat(res.out, res.cut) {
		if n.Path == p && n.OldPath != "" {
			return []string{n.OldPath, p}, nil
		}
	}
	return []string{p}, nil
}

// splitDiff reads `git diff --numstat -z --patch`: the counts of every
// file (NUL-separated), an empty entry, then the patches, one `diff --git`
// section a file in the same order. cut: the output was cut short.
func splitDiff(out []byte, cut bool) (files []api.GitFileDiff, patchesCut bool) {
	numPart, patch := out, []byte(nil)
	if i := bytes.Index(out, []byte{0, 0}); i >= 0 {
		numPart, patch = out[:i+1], out[i+2:]
	} else if !cut {
		// Counts alone (a diff of mode changes only still has patches).
		numPart = out
	}
	nums := ParseNumstat(numPart, cut && patch == nil)
	sections := splitPatch(patch)
	for i, n := range nums {
		f := api.GitFileDiff{Path: n.Path, OldPath: n.OldPath, Binary: n.Lines.Binary, Added: n.Lines.Added, Removed: n.Lines.Removed, Status: "M"}
		if n.OldPath != "" {
			f.Status = "R"
		}
		if i < len(sections) {
			sec := sections[i]
			last := i == len(sections)-1
			f.Status = sectionStatus(sec, f.Status)
			if bytes.Contains(sec, []byte("\nBinary files ")) {
				f.Binary = true
			}
			if !f.Binary {
				f.Patch = string(sec)
				if last && cut {
					f.Patch, f.Truncated = cutAtLine(f.Patch, len(f.Patch)), true
				}
			}
		} else if !f.Binary {
			f.Truncated = true
			patchesCut = true
		}
		files = append(files, f)
	}
	return files, patchesCut || cut
}

// splitPatch cuts a patch at each line that starts a file's section.
func splitPatch(p []byte) [][]byte {
	var out [][]byte
	start := -1
	for i := 0; i < len(p); {
		j := bytes.IndexByte(p[i:], '\n')
		end := len(p)
		if j >= 0 {
			end = i + j + 1
		}
		if bytes.HasPrefix(p[i:end], []byte("diff --git ")) {
			if start >= 0 {
				out = append(out, p[start:i])
			}
			start = i
		}
		i = end
	}
	if start >= 0 {
		out = append(out, p[start:])
	}
	return out
}

// sectionStatus reads a section's header for what happened to the file.
func sectionStatus(sec []byte, def string) string {
	hdr := sec
	if i := bytes.Index(sec, []byte("\n@@ ")); i >= 0 {
		hdr = sec[:i]
	}
	for _, l := range bytes.Split(hdr, []byte{'\n'}) {
		switch {
		case bytes.HasPrefix(l, []byte("new file mode ")):
			return "A"
		case bytes.HasPrefix(l, []byte("deleted file mode ")):
			return "D"
		case bytes.HasPrefix(l, []byte("rename from ")):
			return "R"
		case bytes.HasPrefix(l, []byte("copy from ")):
			return "C"
		}
	}
	return def
}

// untracked lists the untracked files (not ignored) under p and shows each
// as a new file, as `git diff --no-index /dev/null FILE` would.
func (g *Git) untracked(ctx context.Context, r Repo, p string) ([]api.GitFileDiff, bool, error) {
	args := []string{"ls-files", "--others", "--exclude-standard", "-z", "--full-name"}
	if p != "" {
		args = append(args, "--", p)
	}
	res, err := g.run(ctx, r.Top, limits{timeout: statusTimeout, max: maxNumstat}, args...)
	if err != nil {
		return nil, false, err
	}
	names := bytes.Split(res.out, []byte{0})
	if res.cut && len(names) > 0 {
		names = names[:len(names)-1]
	}
	cut := res.cut
	var out []api.GitFileDiff
	for _, n := range names {
		if len(n) == 0 {
			continue
		}
		if len(out) == maxUntrackedDiff {
			cut = true
			break
		}
		out = append(out, newFileDiff(r.Top, string(n)))
	}
	return out, cut, nil
}

// newFileDiff shows an untracked file as added, the way git writes it.
func newFileDiff(top, name string) api.GitFileDiff {
	f := api.GitFileDiff{Path: name, Status: "?"}
	full := filepath.Join(top, filepath.FromSlash(name))
	fi, err := os.Lstat(full)
	if err != nil {
		f.Truncated = true // gone since git listed it
		return f
	}
	a, b := quoteName("a/"+name), quoteName("b/"+name)
	var buf strings.Builder
	fmt.Fprintf(&buf, "diff --git %s %s\n", a, b)
	mode := "100644"
	var content []byte
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		mode = "120000"
		t, err := os.Readlink(full)
		if err != nil {
			f.Truncated = true
			return f
		}
		content = []byte(t)
	case fi.Mode().IsRegular():
		if fi.Mode()&0o111 != 0 {
			mode = "100755"
		}
		c, cut, ok := readInside(top, full)
		if !ok {
			f.Truncated = true
			return f
		}
		content, f.Truncated = c, cut
	default:
		f.Truncated = true
		return f
	}
	fmt.Fprintf(&buf, "new file mode %s\n", mode)
	if binary(content) {
		f.Binary = true
		fmt.Fprintf(&buf, "Binary files /dev/null and %s differ\n", b)
		f.Patch = ""
		return f
	}
	if len(content) == 0 {
		f.Patch = buf.String()
		return f
	}
	n := countLines(content)
	f.Added = n
	fmt.Fprintf(&buf, "--- /dev/null\n+++ %s%s\n", b, tabIfSpace(name))
	if n == 1 {
		buf.WriteString("@@ -0,0 +1 @@\n")
	} else {
		fmt.Fprintf(&buf, "@@ -0,0 +1,%d @@\n", n)
	}
	for _, l := range strings.SplitAfter(string(content), "\n") {
		if l == "" {
			continue
		}
		buf.WriteByte('+')
		buf.WriteString(l)
	}
	if content[len(content)-1] != '\n' {
		buf.WriteString("\n\\ No newline at end of file\n")
	}
	f.Patch = buf.String()
	return f
}

// readInside reads at most maxCountBytes of a regular file of the working
// tree, refusing one reached through a symlinked folder that leads out,
// and a final symlink (O_NOFOLLOW).
func readInside(top, full string) ([]byte, bool, bool) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(full))
	if err != nil || !Within(dir, []string{top}) {
		return nil, false, false
	}
	fd, err := syscall.Open(full, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, false
	}
	file := os.NewFile(uintptr(fd), full)
	defer file.Close()
	if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false, false
	}
	b, err := io.ReadAll(io.LimitReader(file, maxCountBytes+1))
	if err != nil {
		return nil, false, false
	}
	if len(b) > maxCountBytes {
		return []byte(cutAtLine(string(b[:maxCountBytes]), maxCountBytes)), true, true
	}
	return b, false, true
}

// quoteName writes a file name as git does in a diff header: as is, or in
// double quotes with C escapes when it holds a control character, a quote
// or a backslash (core.quotepath=off leaves other bytes alone).
func quoteName(s string) string {
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '"' || c == '\\' {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tabIfSpace: git ends a ---/+++ name that has a space with a tab, so that
// readers do not take the rest for a timestamp.
func tabIfSpace(name string) string {
	if strings.ContainsRune(name, ' ') {
		return "\t"
	}
	return ""
}

// cutAtLine cuts s to at most n bytes, at the end of a line.
func cutAtLine(s string, n int) string {
	if len(s) <= n {
		if i := strings.LastIndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			return s[:i+1] // a last line cut off midway
		}
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= 0 {
		return s[:i+1]
	}
	return ""
}

// budget keeps at most total bytes of patch text, in file order: a patch
// that does not fit whole is cut at a line end, and the ones after it are
// left out, each marked Truncated.
func budget(d *api.GitDiff, total int) {
	left := total
	for i := range d.Files {
		f := &d.Files[i]
		if len(f.Patch) <= left {
			left -= len(f.Patch)
			continue
		}
		f.Patch, f.Truncated, d.Truncated = cutAtLine(f.Patch, left), true, true
		left -= len(f.Patch)
	}
}

// FitDiff makes d's JSON fit in limit bytes: JSON escapes can make a patch
// of control characters six times longer. The longest patch is halved
// until it fits, then files are dropped from the end.
func FitDiff(d *api.GitDiff, limit int) {
	for {
		b, err := json.Marshal(d)
		if err != nil || len(b) <= limit {
			return
		}
		longest := -1
		for i := range d.Files {
			if longest < 0 || len(d.Files[i].Patch) > len(d.Files[longest].Patch) {
				longest = i
			}
		}
		d.Truncated = true
		if longest >= 0 && d.Files[longest].Patch != "" {
			f := &d.Files[longest]
			f.Patch, f.Truncated = cutAtLine(f.Patch, len(f.Patch)/2), true
			continue
		}
		if len(d.Files) == 0 {
			return
		}
		d.Files = d.Files[:len(d.Files)*3/4]
	}
}

// FitStatus makes st's JSON fit in limit bytes, dropping files from the
// end (FilesTruncated).
func FitStatus(st *api.GitStatus, limit int) {
	for {
		b, err := json.Marshal(st)
		if err != nil || len(b) <= limit || len(st.Files) == 0 {
			return
		}
		st.Files, st.FilesTruncated = st.Files[:len(st.Files)*3/4], true
	}
}

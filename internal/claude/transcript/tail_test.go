package transcript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func line(uuid string) string { return fmt.Sprintf(`{"type":"user","uuid":%q}`+"\n", uuid) }

func uuids(es []Entry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.UUID)
	}
	return strings.Join(s, ",")
}

func mustRead(t *testing.T, tl *Tailer) TailBatch {
	t.Helper()
	b, err := tl.Read()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTailerIncremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tl := NewTailer(path, Position{})
	if _, err := tl.Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	writeFile(t, path, line("a")+line("b")+`{"type":"user","uu`)
	b := mustRead(t, tl)
	if uuids(b.Entries) != "a,b" || b.Reset || b.Bad != 0 {
		t.Fatalf("first read %+v", b)
	}
	if b := mustRead(t, tl); len(b.Entries) != 0 {
		t.Fatalf("partial line returned: %+v", b)
	}
	appendFile(t, path, `id":"c"}`+"\r\n"+"not json\n\n"+`{"no":"type"}`+"\n"+line("d"))
	b = mustRead(t, tl)
	if uuids(b.Entries) != "c,d" || b.Bad != 2 || b.Reset {
		t.Fatalf("second read %+v", b)
	}
	fi, _ := os.Stat(path)
	if tl.Position().Offset != fi.Size() {
		t.Fatalf("offset %d, size %d", tl.Position().Offset, fi.Size())
	}

	// Resume from the saved position in a new Tailer.
	appendFile(t, path, line("e"))
	tl2 := NewTailer(path, tl.Position())
	if b := mustRead(t, tl2); uuids(b.Entries) != "e" || b.Reset {
		t.Fatalf("resumed read %+v", b)
	}
}

func TestTailerTruncateAndReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	writeFile(t, path, line("a")+line("b"))
	tl := NewTailer(path, Position{})
	mustRead(t, tl)

	// Truncated and rewritten shorter: start over.
	writeFile(t, path, line("x"))
	b := mustRead(t, tl)
	if !b.Reset || uuids(b.Entries) != "x" {
		t.Fatalf("after truncation %+v", b)
	}

	// Replaced by another file (new inode), even a longer one.
	tmp := filepath.Join(dir, "new")
	writeFile(t, tmp, line("n1")+line("n2")+line("n3"))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	b = mustRead(t, tl)
	if !b.Reset || uuids(b.Entries) != "n1,n2,n3" {
		t.Fatalf("after replacement %+v", b)
	}

	// Rewritten in place to a longer content whose offset is no longer a
	// line boundary.
	off := tl.Position().Offset
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("x", int(off)+2)+"\n"+line("m")), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b = mustRead(t, tl)
	if !b.Reset || uuids(b.Entries) != "m" || b.Bad != 1 {
		t.Fatalf("after in-place rewrite %+v", b)
	}

	// A saved position from another file is not trusted.
	pos := tl.Position()
	pos.Ino++
	if b := mustRead(t, NewTailer(path, pos)); !b.Reset {
		t.Fatalf("foreign position accepted: %+v", b)
	}
}

func TestTailerOversizedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	huge := `{"type":"user","uuid":"huge","x":"` + strings.Repeat("h", 300_000) + `"}` + "\n"
	writeFile(t, path, line("a")+huge+line("b"))
	tl := NewTailer(path, Position{})
	tl.MaxLine = 1000
	b := mustRead(t, tl)
	if uuids(b.Entries) != "a,b" || b.Oversized != 1 {
		t.Fatalf("%+v", b)
	}

	// A long line still being written is skipped as it grows, without
	// re-reading it.
	appendFile(t, path, `{"type":"user","x":"`+strings.Repeat("g", 5000))
	b = mustRead(t, tl)
	if len(b.Entries) != 0 || b.Oversized != 1 || !tl.Position().InLongLine {
		t.Fatalf("growing line: %+v pos %+v", b, tl.Position())
	}
	before := tl.Position().Offset
	appendFile(t, path, strings.Repeat("g", 5000))
	b = mustRead(t, tl)
	if b.Oversized != 0 || tl.Position().Offset <= before {
		t.Fatalf("continuing: %+v pos %+v", b, tl.Position())
	}
	appendFile(t, path, `"}`+"\n"+line("c"))
	b = mustRead(t, tl)
	if uuids(b.Entries) != "c" || tl.Position().InLongLine {
		t.Fatalf("after the long line: %+v", b)
	}
}

func TestTailerBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var sb strings.Builder
	for i := range 100 {
		sb.WriteString(line(fmt.Sprint(i)))
	}
	writeFile(t, path, sb.String())
	tl := NewTailer(path, Position{})
	tl.MaxRead = 200
	var all []Entry
	for range 200 {
		b := mustRead(t, tl)
		all = append(all, b.Entries...)
		if !b.More {
			break
		}
	}
	if len(all) != 100 || all[99].UUID != "99" {
		t.Fatalf("got %d entries", len(all))
	}
}

func TestTailerNotRegular(t *testing.T) {
	if _, err := NewTailer(t.TempDir(), Position{}).Read(); err == nil {
		t.Fatal("directory tailed")
	}
	if tl := NewTailer("x", Position{Offset: -5}); tl.Position().Offset != 0 || tl.Path() != "x" {
		t.Fatal("negative offset kept")
	}
}

func TestTailerFixtureMatchesWholeParse(t *testing.T) {
	// Feeding the fixture in odd-sized chunks yields exactly the entries of
	// a whole parse.
	data := readFixture(t, "transcript.jsonl")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, "")
	tl := NewTailer(path, Position{})
	var got []Entry
	for i := 0; i < len(data); i += 997 {
		appendFile(t, path, string(data[i:min(i+997, len(data))]))
		b := mustRead(t, tl)
		if b.Reset || b.Bad != 0 {
			t.Fatalf("chunk at %d: %+v", i, b)
		}
		got = append(got, b.Entries...)
	}
	if uuids(got) != uuids(fixtureEntries(t)) || len(got) != len(fixtureEntries(t)) {
		t.Fatalf("entries differ: %d vs %d", len(got), len(fixtureEntries(t)))
	}
}

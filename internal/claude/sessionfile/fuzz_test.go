package sessionfile

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzParseSessionFile(f *testing.F) {
	ents, _ := os.ReadDir(filepath.Join(fixtureDir, "sessions"))
	for _, e := range ents {
		f.Add(readFixture(f, "sessions/"+e.Name()))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err == nil && s.PID <= 0 {
			t.Fatalf("accepted pid %d", s.PID)
		}
	})
}

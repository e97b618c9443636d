package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// fill writes n sessions with a state big enough that the table spans
// many pages.
func fill(t *testing.T, s *Store, n int) {
	t.Helper()
	now := time.Unix(1700000000, 0)
	var rs []Session
	for i := range n {
		rs = append(rs, Session{ID: fmt.Sprintf("s%04d", i), Name: fmt.Sprintf("name-%d", i), Dir: "/src", Kind: "claude",
			State: []byte(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", 300))), CreatedAt: now, UpdatedAt: now})
	}
	if err := s.PutSessions(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
}

func newFilled(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "corral.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, n)
	if err := s.Close(); err != nil { // the last close checkpoints the WAL into the file
		t.Fatal(err)
	}
	return path
}

// pageOf returns the page size and the root page of a table.
func pageOf(t *testing.T, path, table string) (size, root int64) {
	t.Helper()
	db, err := openReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = ?", table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	return size, root
}

func TestQuickCheckCatchesACorruptPage(t *testing.T) {
	path := newFilled(t, 200)
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the WAL was not checkpointed at close")
	}
	// Garbage into the sessions table's root page, as a bad disk would.
	size, root := pageOf(t, path, "sessions")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte{0xA5, 0x5A, 0x00, 0xFF}, int(size)/4)
	if _, err := f.WriteAt(garbage[:size-16], (root-1)*size+8); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, _ := os.ReadFile(path)

	_, err = Open(path)
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("Open of a damaged file = %v, want a CorruptError", err)
	}
	msg := err.Error()
	for _, want := range []string{path, "damaged", "corral restore", "mv " + path + " " + path + ".damaged"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("Open changed the damaged file")
	}
	if _, err := Inspect(context.Background(), path); !errors.As(err, &ce) {
		t.Errorf("Inspect of a damaged file = %v", err)
	}
	if _, err := Backup(context.Background(), path, filepath.Join(t.TempDir(), "b.db")); err == nil {
		t.Error("backed up a damaged file")
	}
}

func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "corral.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fill(t, s, 100)
	if err := s.Set(ctx, "secret", []byte("v")); err != nil {
		t.Fatal(err)
	}

	// A writer goes on during the backups, as the daemon does.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var writes int
	var werr error
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := Session{ID: fmt.Sprintf("w%06d", i), Name: "w", Dir: "/", Kind: "shell", CreatedAt: time.Now(), UpdatedAt: time.Now()}
			if err := s.PutSession(ctx, r); err != nil {
				werr = err
				return
			}
			writes++
		}
	}()
	dst := filepath.Join(t.TempDir(), "backup.db")
	os.WriteFile(dst, []byte("an older backup"), 0o644) // replaced whole
	var infos []FileInfo
	for range 3 {
		info, err := Backup(ctx, path, dst)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatalf("a write during the backup failed: %v", werr)
	}
	if writes == 0 {
		t.Fatal("no write ran during the backups")
	}
	fi, err := os.Stat(dst)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v, %v", fi.Mode(), err)
	}
	last := infos[len(infos)-1]
	if last.Schema != len(migrations) || last.Sessions < 100 || last.Sessions > 100+writes {
		t.Fatalf("backup info %+v (%d writes)", last, writes)
	}
	b, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v, err := b.Get(ctx, "secret"); err != nil || string(v) != "v" {
		t.Fatalf("backup kv = %q, %v", v, err)
	}
	// Nothing but the backup is left beside it.
	entries, _ := os.ReadDir(filepath.Dir(dst))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "backup.db") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestBackupRefusesTheDatabaseItself(t *testing.T) {
	path := newFilled(t, 1)
	if _, err := Backup(context.Background(), path, path); err == nil || !strings.Contains(err.Error(), "database itself") {
		t.Fatalf("backup onto itself: %v", err)
	}
	if _, err := Open(path); err != nil {
		t.Fatal(err)
	}
}

func TestRestoreKeepsTheOldAside(t *testing.T) {
	ctx := context.Background()
	backup := newFilled(t, 3)
	dir := t.TempDir()
	path := filepath.Join(dir, "corral.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 7)
	// Left open: its -wal holds writes not yet in the file, as after a kill -9.
	if err := s.Set(ctx, "only-in-old", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL beside an open database: %v", err)
	}
	s.Close()

	aside, info, err := Restore(ctx, backup, path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Sessions != 3 || aside == "" {
		t.Fatalf("restore = %q %+v", aside, info)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Sessions(ctx); len(got) != 3 {
		t.Errorf("restored database has %d sessions, want 3", len(got))
	}
	if _, err := r.Get(ctx, "only-in-old"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the old database's write is in the restored one: %v", err)
	}
	r.Close()
	old, err := Open(aside)
	if err != nil {
		t.Fatalf("the old database kept aside does not open: %v", err)
	}
	defer old.Close()
	if got, _ := old.Sessions(ctx); len(got) != 7 {
		t.Errorf("the old database kept aside has %d sessions, want 7", len(got))
	}
	if v, err := old.Get(ctx, "only-in-old"); err != nil || string(v) != "1" {
		t.Errorf("the old database lost its last write: %q %v", v, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("restored database mode %v, %v", fi.Mode(), err)
	}
}

func TestRestoreRefusesWhatIsNotACorralDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := newFilled(t, 2)
	before, _ := os.ReadFile(path)

	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 100)), 0o600)
	other := filepath.Join(dir, "other.db")
	odb, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	odb.Exec("CREATE TABLE t (x)")
	odb.Close()
	fake := filepath.Join(dir, "fake.db") // says schema 2 but lacks its tables
	fdb, _ := sql.Open("sqlite", fake)
	fdb.Exec("CREATE TABLE sessions (id TEXT); PRAGMA user_version = 2")
	fdb.Close()
	newer := newFilled(t, 1)
	ndb, _ := sql.Open("sqlite", newer)
	ndb.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1))
	ndb.Close()

	for name, c := range map[string]struct{ file, want string }{
		"text":    {text, "not a corral database"},
		"other":   {other, "not a corral database"},
		"fake":    {fake, "not a corral database (schema 2, but"},
		"newer":   {newer, "newer corral"},
		"missing": {filepath.Join(dir, "nope.db"), "no such file"},
	} {
		if _, _, err := Restore(ctx, c.file, path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: restore = %v, want %q", name, err, c.want)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a refused restore changed the database")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != "corral.db" {
			t.Errorf("a refused restore left %s", e.Name())
		}
	}
}

// atVersion makes a database as the first v migrations left it, with one
// row in every table, and returns the rows written.
func atVersion(t *testing.T, path string, v int) map[string]map[string]any {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, m := range migrations[:v] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		t.Fatal(err)
	}
	schema, err := schemaOf(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string]any{}
	for table := range schema {
		types := map[string]string{}
		r, err := db.Query("SELECT name, type FROM pragma_table_info(?)", table)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			var n, ty string
			r.Scan(&n, &ty)
			types[n] = ty
		}
		r.Close()
		row := map[string]any{}
		var cols, marks []string
		var args []any
		for c, ty := range types {
			var val any
			switch ty {
			case "INTEGER":
				val = int64(7)
			case "BLOB":
				val = []byte("blob-" + table + "-" + c)
			default:
				val = "text-" + table + "-" + c
			}
			if table == "sessions" && c == "args" {
				val = `["--x"]` // Sessions() decodes it
			}
			if table == "sessions" && c == "state" {
				val = `{"k":1}`
			}
			row[c] = val
			cols, marks, args = append(cols, c), append(marks, "?"), append(args, val)
		}
		q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), strings.Join(marks, ", "))
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows[table] = row
	}
	return rows
}

// TestMigrateFromEveryEarlierSchema opens a database made at every earlier
// schema version and checks that it is migrated with its rows kept. A
// migration that rewrites old values on purpose says so here.
func TestMigrateFromEveryEarlierSchema(t *testing.T) {
	for v := range len(migrations) {
		t.Run(fmt.Sprintf("schema%d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "corral.db")
			rows := atVersion(t, path, v)
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got int
			s.db.QueryRow("PRAGMA user_version").Scan(&got)
			if got != len(migrations) {
				t.Fatalf("user_version %d after migrating from %d, want %d", got, v, len(migrations))
			}
			for table, row := range rows {
				var cols []string
				for c := range row {
					cols = append(cols, c)
				}
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				var n int
				s.db.QueryRow("SELECT count(*) FROM " + table).Scan(&n)
				if n != 1 {
					t.Errorf("%s has %d rows after migrating, want 1", table, n)
					continue
				}
				if err := s.db.QueryRow(fmt.Sprintf("SELECT %s FROM %s", strings.Join(cols, ", "), table)).Scan(ptrs...); err != nil {
					t.Fatalf("%s: %v", table, err)
				}
				for i, c := range cols {
					if fmt.Sprint(vals[i]) != fmt.Sprint(row[c]) {
						t.Errorf("%s.%s = %v after migrating, was %v", table, c, vals[i], row[c])
					}
				}
			}
			if v > 0 {
				if got, err := s.Sessions(context.Background()); err != nil || len(got) != 1 {
					t.Errorf("Sessions after migrating = %+v, %v", got, err)
				}
			}
			if _, err := Inspect(context.Background(), path); err != nil {
				t.Errorf("Inspect after migrating: %v", err)
			}
		})
	}
}

// TestMigrateAFileFromTheFirstCorral opens a database that corral at commit
// d65b6cf (schema 1) wrote, with two shell sessions, and migrates a copy.
func TestMigrateAFileFromTheFirstCorral(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile("testdata/schema1-d65b6cf.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "corral.db")
	os.WriteFile(path, b, 0o600)
	info, err := Inspect(ctx, path)
	if err != nil || info.Schema != 1 || info.Sessions != 2 {
		t.Fatalf("Inspect = %+v, %v", info, err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Sessions(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("sessions %+v, %v", got, err)
	}
	if got[0].Name != "first-shell" || got[1].Name != "second shell" || got[0].Kind != "shell" ||
		got[0].Status != "idle" || !strings.Contains(string(got[0].State), `"Status":"idle"`) {
		t.Errorf("sessions after migrating: %+v", got)
	}
	if _, err := s.Notifications(ctx, "", 10); err != nil {
		t.Errorf("a table of a later schema: %v", err)
	}
}

func TestNewerSchemaRefusedAndLeftAlone(t *testing.T) {
	path := newFilled(t, 2)
	db, _ := sql.Open("sqlite", path)
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), "newer corral") {
		t.Fatalf("Open of a newer schema = %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("Open changed a database of a newer schema")
	}
}

// BenchmarkBackup compares VACUUM INTO (what Backup uses) with SQLite's
// page-by-page backup API on a database of 5000 sessions.
func BenchmarkBackup(b *testing.B) {
	path := filepath.Join(b.TempDir(), "corral.db")
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	var rs []Session
	for i := range 5000 {
		rs = append(rs, Session{ID: fmt.Sprintf("s%05d", i), Name: "n", Dir: "/src", Kind: "claude",
			State: []byte(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", 400))), CreatedAt: now, UpdatedAt: now})
	}
	if err := s.PutSessions(context.Background(), rs); err != nil {
		b.Fatal(err)
	}
	if info, err := Backup(context.Background(), path, filepath.Join(b.TempDir(), "size.db")); err == nil {
		b.Logf("database of %d sessions: %d KiB", info.Sessions, info.Size/1024)
	}
	b.Run("vacuum-into", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := Backup(context.Background(), path, filepath.Join(b.TempDir(), "b.db")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("backup-api", func(b *testing.B) {
		db, err := openReadOnly(path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		for b.Loop() {
			conn, err := db.Conn(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			dst := filepath.Join(b.TempDir(), "b.db")
			err = conn.Raw(func(dc any) error {
				bk, err := dc.(interface {
					NewBackup(string) (*sqlite.Backup, error)
				}).NewBackup(dst)
				if err != nil {
					return err
				}
				if _, err := bk.Step(-1); err != nil {
					return err
				}
				return bk.Finish()
			})
			conn.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("quick_check", func(b *testing.B) {
		for b.Loop() {
			if err := quickCheck(context.Background(), s.db, path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

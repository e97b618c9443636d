package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The safety of the data: an integrity check at every open, online
// backups, and the checks a file passes before it may replace the database.

// maxProblems bounds what quick_check reports: the first few say enough.
const maxProblems = 10

// CorruptError says a database file is damaged and how to get out of it.
type CorruptError struct {
	Path     string
	Problems []string // from PRAGMA quick_check, or SQLite's own error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("database %s is damaged (%s); corral will not use it. Restore a backup with "+
		"'corral restore FILE' (the damaged file is kept aside), or move it aside to start with an empty database: "+
		"mv %s %s.damaged (and its -wal and -shm files, if any)",
		e.Path, strings.Join(e.Problems, "; "), e.Path, e.Path)
}

// ErrNotCorral is returned by Inspect for a file that is no corral database.
var ErrNotCorral = errors.New("not a corral database")

// isCorrupt tells whether err is SQLite saying the file is damaged or is
// not a database at all.
func isCorrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// quickCheck runs PRAGMA quick_check: every page and every row's format,
// in time linear in the file's size (it skips only the cross-check of
// indexes against their tables that integrity_check adds).
func quickCheck(ctx context.Context, db *sql.DB, path string) error {
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA quick_check(%d)", maxProblems))
	if err != nil {
		if isCorrupt(err) {
			return &CorruptError{Path: path, Problems: []string{err.Error()}}
		}
		return fmt.Errorf("database %s: integrity check: %w", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("database %s: integrity check: %w", path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		if isCorrupt(err) {
			return &CorruptError{Path: path, Problems: append(problems, err.Error())}
		}
		return fmt.Errorf("database %s: integrity check: %w", path, err)
	}
	if len(problems) > 0 {
		return &CorruptError{Path: path, Problems: problems}
	}
	return nil
}

// openReadOnly opens path for reading only, without creating it or
// changing its journal mode.
func openReadOnly(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// FileInfo describes a database file that Inspect found sound.
type FileInfo struct {
	Schema   int   // its PRAGMA user_version
	Current  int   // the schema this build writes
	Sessions int   // rows in its sessions table
	Size     int64 // bytes
}

// Inspect checks that the file at path is a sound corral database of a
// schema this build knows (the same or older: Open migrates it), without
// changing it.
func Inspect(ctx context.Context, path string) (FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileInfo{}, err
	}
	if !fi.Mode().IsRegular() {
		return FileInfo{}, fmt.Errorf("%s is not a regular file", path)
	}
	db, err := openReadOnly(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer db.Close()
	if err := quickCheck(ctx, db, path); err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) && len(ce.Problems) == 1 && strings.Contains(ce.Problems[0], "not a database") {
			return FileInfo{}, fmt.Errorf("%s: %w (not an SQLite file)", path, ErrNotCorral)
		}
		return FileInfo{}, err
	}
	info := FileInfo{Current: len(migrations), Size: fi.Size()}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&info.Schema); err != nil {
		return FileInfo{}, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case info.Schema == 0:
		return FileInfo{}, fmt.Errorf("%s: %w (an SQLite file without corral's schema)", path, ErrNotCorral)
	case info.Schema > len(migrations):
		return FileInfo{}, fmt.Errorf("%s is from a newer corral (schema %d, this build knows %d): use that corral's build", path, info.Schema, len(migrations))
	}
	want, err := schemaAt(ctx, info.Schema)
	if err != nil {
		return FileInfo{}, err
	}
	have, err := schemaOf(ctx, db)
	if err != nil {
		return FileInfo{}, fmt.Errorf("%s: %w", path, err)
	}
	for table, cols := range want {
		got, ok := have[table]
		if !ok {
			return FileInfo{}, fmt.Errorf("%s: %w (schema %d, but no table %s)", path, ErrNotCorral, info.Schema, table)
		}
		for _, c := range cols {
			if !slices.Contains(got, c) {
				return FileInfo{}, fmt.Errorf("%s: %w (schema %d, but table %s has no column %s)", path, ErrNotCorral, info.Schema, table, c)
			}
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sessions").Scan(&info.Sessions); err != nil {
		return FileInfo{}, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// schemaAt returns the tables and columns that the first v migrations make.
func schemaAt(ctx context.Context, v int) (map[string][]string, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for i, m := range migrations[:v] {
		if _, err := db.ExecContext(ctx, m); err != nil {
			return nil, fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return schemaOf(ctx, db)
}

// schemaOf lists a database's tables and their columns.
func schemaOf(ctx context.Context, db *sql.DB) (map[string][]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(tables))
	for _, t := range tables {
		cols, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			return nil, err
		}
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				cols.Close()
				return nil, err
			}
			out[t] = append(out[t], c)
		}
		cols.Close()
		if err := cols.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Backup writes a consistent copy of the database at src to dst while
// others may be writing to it, checks the copy, and only then puts it in
// place: dst is never a half-written file, and it has mode 0600 (it holds
// token hashes and push keys).
//
// It uses VACUUM INTO: one read transaction (in WAL mode writers go on),
// and a copy rebuilt row by row, compact, and readable on its own without
// -wal or -shm files; a damaged page of the source fails the backup instead
// of being copied. SQLite's page-by-page backup API would copy free pages
// and damage alike.
func Backup(ctx context.Context, src, dst string) (FileInfo, error) {
	if same, err := sameFile(src, dst); err != nil {
		return FileInfo{}, err
	} else if same {
		return FileInfo{}, fmt.Errorf("%s is the database itself; give another file", dst)
	}
	db, err := openReadOnly(src)
	if err != nil {
		return FileInfo{}, fmt.Errorf("database: %w", err)
	}
	defer db.Close()

	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return FileInfo{}, fmt.Errorf("backup: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	keep := false
	defer func() {
		if !keep {
			removeDB(tmpPath)
		}
	}()
	// CreateTemp made it 0600 and empty; VACUUM INTO fills an empty file.
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmpPath); err != nil {
		if isCorrupt(err) {
			return FileInfo{}, &CorruptError{Path: src, Problems: []string{err.Error()}}
		}
		return FileInfo{}, fmt.Errorf("backup: %w", err)
	}
	info, err := Inspect(ctx, tmpPath)
	if err != nil {
		return FileInfo{}, fmt.Errorf("backup: the copy does not check out: %w", err)
	}
	removeSidecars(tmpPath) // a read-only check leaves none, but be sure
	if err := syncFile(tmpPath); err != nil {
		return FileInfo{}, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmpPath, dst); err != nil {
		return FileInfo{}, fmt.Errorf("backup: %w", err)
	}
	keep = true
	if err := syncDir(dir); err != nil {
		return FileInfo{}, fmt.Errorf("backup: %w", err)
	}
	return info, nil
}

// Restore replaces the database at dbPath with a checked copy of src. The
// old database, with its -wal and -shm files, is renamed aside (its path is
// returned; "" when there was none). The caller makes sure nothing has
// dbPath open: it holds the data directory's lock.
func Restore(ctx context.Context, src, dbPath string) (aside string, info FileInfo, err error) {
	// Checked before anything moves; Backup checks its copy again.
	if _, err = Inspect(ctx, src); err != nil {
		return "", FileInfo{}, err
	}
	next := dbPath + ".restoring"
	removeDB(next)
	if info, err = Backup(ctx, src, next); err != nil {
		removeDB(next)
		return "", FileInfo{}, err
	}
	if _, err := os.Stat(dbPath); err == nil {
		aside = dbPath + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
		if err := moveDB(dbPath, aside); err != nil {
			removeDB(next)
			return "", FileInfo{}, fmt.Errorf("restore: keeping the old database aside: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		removeDB(next)
		return "", FileInfo{}, err
	}
	if err := os.Rename(next, dbPath); err != nil {
		if aside != "" {
			moveDB(aside, dbPath)
		}
		removeDB(next)
		return "", FileInfo{}, fmt.Errorf("restore: %w", err)
	}
	return aside, info, syncDir(filepath.Dir(dbPath))
}

// sidecars are the files SQLite keeps beside a database in WAL mode; they
// belong to it and move with it.
var sidecars = []string{"-wal", "-shm", "-journal"}

// moveDB renames a database and its sidecars.
func moveDB(from, to string) error {
	for _, s := range sidecars {
		if err := os.Rename(from+s, to+s); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.Rename(from, to)
}

func removeSidecars(path string) {
	for _, s := range sidecars {
		os.Remove(path + s)
	}
}

func removeDB(path string) {
	removeSidecars(path)
	os.Remove(path)
}

func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, fmt.Errorf("database: %w", err)
	}
	fb, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

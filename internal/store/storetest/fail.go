package storetest

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// Helpers for tests of the SQLite store's users: faults and rows as an
// older corral left them, through connections of their own.

// FailWrites makes every write to table of the SQLite database at path
// fail, as a full disk or a broken database would, until the returned
// function is called (or for the rest of the test). The triggers are made through a connection of its
// own: a store open on the file sees them at its next statement.
func FailWrites(tb testing.TB, path, table string) (restore func()) {
	tb.Helper()
	db := rawSQLite(tb, path)
	var names []string
	for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
		name := "test_fail_" + strings.ToLower(op) + "_" + table
		q := fmt.Sprintf(`CREATE TRIGGER %s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`, name, op, table)
		if _, err := db.Exec(q); err != nil {
			db.Close()
			tb.Fatal(err)
		}
		names = append(names, name)
	}
	// Closed at the end of the test if restore is never called.
	tb.Cleanup(func() { db.Close() })
	return func() {
		tb.Helper()
		defer db.Close()
		for _, n := range names {
			if _, err := db.Exec("DROP TRIGGER " + n); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// FailWrite makes one kind of write (INSERT, UPDATE or DELETE) to table
// fail, until restore is called.
func FailWrite(tb testing.TB, path, op, table string) (restore func()) {
	tb.Helper()
	db := rawSQLite(tb, path)
	name := "test_fail_one_" + strings.ToLower(op) + "_" + table
	if _, err := db.Exec(fmt.Sprintf(`CREATE TRIGGER %s BEFORE %s ON %s BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`, name, op, table)); err != nil {
		db.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return func() {
		tb.Helper()
		defer db.Close()
		if _, err := db.Exec("DROP TRIGGER " + name); err != nil {
			tb.Fatal(err)
		}
	}
}

// Exec runs a statement on the SQLite database at path through a
// connection of its own: for a test that writes rows as an older corral
// left them, which no method of today's store writes.
func Exec(tb testing.TB, path, q string, args ...any) {
	tb.Helper()
	db := rawSQLite(tb, path)
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}

// Count runs a SELECT count(*) on the SQLite database at path: for a
// test that checks what is stored as it is (no secret in plain text).
func Count(tb testing.TB, path, q string, args ...any) int {
	tb.Helper()
	db := rawSQLite(tb, path)
	defer db.Close()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

func rawSQLite(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

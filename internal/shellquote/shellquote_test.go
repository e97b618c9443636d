package shellquote

import (
	"slices"
	"testing"
)

func TestShellQuoteRoundTrip(t *testing.T) {
	args := []string{"/usr/bin/corral", "with space", "it's", `dq"x`, "$HOME", "", "a\\b", "plain-word_1.2"}
	got := Words(Join(args...), 100)
	if !slices.Equal(got, args) {
		t.Fatalf("round trip:\n%q\n%q", Join(args...), got)
	}
	if Quote("abc/d-e.f") != "abc/d-e.f" || Quote("") != "''" {
		t.Fatal("plain words quoted")
	}
	if w := Words(`a "b \"c\" d" 'e`, 10); !slices.Equal(w, []string{"a", `b "c" d`, "e"}) {
		t.Fatalf("%q", w)
	}
}

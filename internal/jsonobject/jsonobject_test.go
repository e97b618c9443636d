package jsonobject

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestEdit(t *testing.T) {
	o, err := Parse([]byte(`{"z": 1, "a": {"keep": [1, 2]}, "z": 3, "m": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	o.Set("m", json.RawMessage(`"y"`))
	o.Set("new", json.RawMessage(`true`))
	o.Del("a")
	o.Del("absent")
	if k := o.Keys(); len(k) != 3 || k[0] != "z" || k[2] != "new" {
		t.Fatalf("keys %q", k)
	}
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":3,"m":"y","new":true}`; string(b) != want || o.Len() != 3 {
		t.Fatalf("%s (len %d), want %s", b, o.Len(), want)
	}
	if v, ok := o.Get("z"); !ok || string(v) != "3" {
		t.Fatalf("Get z = %s %v", v, ok)
	}
	for _, bad := range []string{`[1]`, `{"a":1} {}`, `{"a":}`, ``} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// FuzzParseJSONObject compares the order-keeping parser with
// encoding/json.
func FuzzParseJSONObject(f *testing.F) {
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]},"statusLine":{"type":"command","command":"a && b <c>"}}`))
	f.Add([]byte(`{"a":1,"a":{"b":2}}`))
	f.Add([]byte(`{"x":"\u003c"} `))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Parse(b)
		var want map[string]any
		werr := json.Unmarshal(b, &want)
		if err != nil {
			return // stricter than encoding/json is fine (e.g. invalid UTF-8)
		}
		if werr != nil {
			t.Fatalf("accepted what encoding/json rejects: %v", werr)
		}
		out, err := o.Indented()
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("differs:\n%s\n%s", b, out)
		}
	})
}

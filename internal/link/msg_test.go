package link

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// The wire, exactly as docs/protocol.md shows it.
func TestEncodeMsgWire(t *testing.T) {
	ev := api.Event{Seq: 8, Type: api.EventRemoved, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ID: "s1"}
	req, err := NewReq(3, "kill", api.SessionRef{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := NewRes(3, nil, nil)
	okScreen, _ := NewRes(4, api.Screen{Text: "hi", Cols: 80, Rows: 24, Cursor: [2]int{1, 2}}, nil)
	fail, _ := NewRes(5, nil, api.Errorf(api.CodeNotFound, "no session s1"))
	internal, _ := NewRes(6, nil, errors.New("disk on fire"))
	for _, c := range []struct {
		m    Msg
		want string
	}{
		{Msg{T: TypeChallenge, Nonce: "bm9uY2U", HubID: "h1"}, `{"t":"challenge","nonce":"bm9uY2U","hub_id":"h1"}`},
		{Msg{T: TypeHello, Protocol: 2, Hostname: "box", OS: "linux", Arch: "amd64", Version: "0.3",
			Host: "hub.example.com", Sig: "c2ln"},
			`{"t":"hello","protocol":2,"hostname":"box","os":"linux","arch":"amd64","version":"0.3","host":"hub.example.com","sig":"c2ln"}`},
		{Msg{T: TypeWelcome, DeviceID: "d1", DeviceName: "box", HubVersion: "0.3", HeartbeatMS: 15000},
			`{"t":"welcome","device_id":"d1","device_name":"box","hub_version":"0.3","heartbeat_ms":15000}`},
		{Msg{T: TypeWelcome, DeviceID: "d1", Enrolled: true}, `{"t":"welcome","device_id":"d1","enrolled":true}`},
		{Msg{T: TypeSync}, `{"t":"sync","seq":0,"sessions":[]}`},
		{Msg{T: TypeSync, Seq: 7, Sessions: []api.Session{{ID: "s1"}}},
			`{"t":"sync","seq":7,"sessions":[{"id":"s1","name":"","dir":"","kind":"","status":"","claude_session_id":"","current_tool":"","waiting_for":null,"error":"","usage":{},"created_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z"}]}`},
		{Msg{T: TypeEvent, Seq: 8, Event: &ev},
			`{"t":"event","seq":8,"event":{"seq":8,"type":"removed","time":"2026-01-02T03:04:05Z","id":"s1"}}`},
		{req, `{"t":"req","id":3,"op":"kill","args":{"id":"s1"}}`},
		{ok, `{"t":"res","id":3,"ok":true,"result":{}}`},
		{okScreen, `{"t":"res","id":4,"ok":true,"result":{"text":"hi","cols":80,"rows":24,"cursor":[1,2]}}`},
		{fail, `{"t":"res","id":5,"ok":false,"error":{"code":"not_found","error":"no session s1"}}`},
		{internal, `{"t":"res","id":6,"ok":false,"error":{"code":"internal","error":"disk on fire"}}`},
		{Msg{T: TypePing, ID: 9}, `{"t":"ping","id":9}`},
		{Msg{T: TypePong, ID: 9}, `{"t":"pong","id":9}`},
		{Msg{T: TypeTermExit, Stream: 2, Reason: "exited"}, `{"t":"term_exit","stream":2,"reason":"exited"}`},
		{Msg{T: TypeTermRedraw, Stream: 2, NewStream: 3}, `{"t":"term_redraw","stream":2,"new_stream":3}`},
	} {
		b, err := EncodeMsg(c.m)
		if err != nil {
			t.Fatalf("%s: %v", c.m.T, err)
		}
		if string(b) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.m.T, b, c.want)
		}
		back, err := DecodeMsg(b)
		if err != nil {
			t.Fatalf("%s: decode: %v", c.m.T, err)
		}
		again, _ := EncodeMsg(back)
		if string(again) != c.want {
			t.Errorf("%s: re-encoded as %s", c.m.T, again)
		}
		if string(back.Raw) != string(b) {
			t.Errorf("%s: Raw = %s", c.m.T, back.Raw)
		}
	}
}

func TestEncodeMsgRefuses(t *testing.T) {
	if _, err := EncodeMsg(Msg{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no type: %v", err)
	}
	big := Msg{T: TypeTermExit, Reason: strings.Repeat("x", MaxFrame)}
	if _, err := EncodeMsg(big); !errors.Is(err, ErrTooBig) {
		t.Errorf("too big: %v", err)
	}
	if _, err := EncodeMsg(Msg{T: TypeReq, ID: 1, Args: json.RawMessage("{")}); err == nil {
		t.Error("invalid args accepted")
	}
	if _, err := NewReq(1, "kill", json.RawMessage("{")); err == nil {
		t.Error("NewReq: invalid raw args accepted")
	}
	if _, err := NewReq(1, "kill", make(chan int)); err == nil {
		t.Error("NewReq: unencodable args accepted")
	}
}

func TestDecodeMsg(t *testing.T) {
	for _, c := range []struct {
		in      string
		wantErr error // nil: accepted
		check   func(Msg) bool
	}{
		{in: `{"t":"ping","id":1}`, check: func(m Msg) bool { return m.T == TypePing && m.ID == 1 && m.Known() }},
		{in: " \n{\"t\":\"pong\"}\n", check: func(m Msg) bool { return m.T == TypePong }},
		{in: `{"t":"sync","seq":3,"sessions":[{"id":"a"}],"later":{"x":1}}`,
			check: func(m Msg) bool { return m.Seq == 3 && len(m.Sessions) == 1 && m.Sessions[0].ID == "a" }},
		// Unknown types pass, even with fields we would read otherwise.
		{in: `{"t":"future","id":7,"payload":[1,2]}`, check: func(m Msg) bool { return m.T == "future" && m.ID == 7 && !m.Known() }},
		{in: `{"t":"future","id":"abc","seq":-1,"sessions":{}}`, check: func(m Msg) bool { return m.T == "future" && m.ID == 0 }},
		{in: ``, wantErr: ErrInvalid},
		{in: `null`, wantErr: ErrInvalid},
		{in: `[]`, wantErr: ErrInvalid},
		{in: `"t"`, wantErr: ErrInvalid},
		{in: `42`, wantErr: ErrInvalid},
		{in: `{}`, wantErr: ErrInvalid},
		{in: `{"t":""}`, wantErr: ErrInvalid},
		{in: `{"t":5}`, wantErr: ErrInvalid},
		{in: `{"t":null}`, wantErr: ErrInvalid},
		{in: `{"t":"ping"`, wantErr: ErrInvalid},
		{in: `{"t":"ping"} {}`, wantErr: ErrInvalid},
		{in: `{"t":"ping","id":-1}`, wantErr: ErrInvalid},
		{in: `{"t":"ping","id":1.5}`, wantErr: ErrInvalid},
		{in: `{"t":"event","seq":1,"event":{"seq":"x"}}`, wantErr: ErrInvalid},
		{in: `{"t":"sync","sessions":{}}`, wantErr: ErrInvalid},
		{in: `{"t":"req","op":"kill"}`, wantErr: ErrInvalid},
		{in: `{"t":"res","ok":true}`, wantErr: ErrInvalid},
		{in: `{"t":"res","id":1,"ok":"yes"}`, wantErr: ErrInvalid},
		{in: `{"t":"x","y":` + strings.Repeat(" ", MaxFrame) + `1}`, wantErr: ErrTooBig},
	} {
		m, err := DecodeMsg([]byte(c.in))
		short := c.in
		if len(short) > 60 {
			short = short[:60] + "…"
		}
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: err = %v, want %v", short, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", short, err)
			continue
		}
		if !c.check(m) {
			t.Errorf("%s: decoded as %+v", short, m)
		}
	}
}

func TestResErrors(t *testing.T) {
	m, _ := NewRes(1, nil, api.Errorf(api.CodeNotFound, "no session x"))
	b, _ := EncodeMsg(m)
	back, err := DecodeMsg(b)
	if err != nil {
		t.Fatal(err)
	}
	err = back.Err()
	var ae *api.Error
	if !errors.Is(err, api.ErrNotFound) || !errors.As(err, &ae) || ae.Message != "no session x" {
		t.Fatalf("Err() = %#v", err)
	}
	if err := back.DecodeResult(&api.Screen{}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("DecodeResult: %v", err)
	}
	// A res that failed without saying why, or without a code.
	for _, in := range []string{`{"t":"res","id":1,"ok":false}`, `{"t":"res","id":1,"error":{"error":"boom"}}`} {
		m, err := DecodeMsg([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var ae *api.Error
		if err := m.Err(); !errors.As(err, &ae) || ae.Code != api.CodeInternal {
			t.Errorf("%s: Err() = %v", in, err)
		}
	}
	// A success with no result decodes as {}.
	m, _ = DecodeMsg([]byte(`{"t":"res","id":1,"ok":true}`))
	var e api.Empty
	if err := m.DecodeResult(&e); err != nil {
		t.Error(err)
	}
	if err := m.DecodeResult(nil); err != nil {
		t.Error(err)
	}
	var n int
	m, _ = DecodeMsg([]byte(`{"t":"res","id":1,"ok":true,"result":"x"}`))
	if err := m.DecodeResult(&n); err == nil {
		t.Error("mistyped result accepted")
	}
}

func TestDecodeArgs(t *testing.T) {
	want := api.RenameRequest{SessionRef: api.SessionRef{ID: "s1"}, Name: "new"}
	req, _ := NewReq(1, "rename", want)
	var a api.RenameRequest
	if err := req.DecodeArgs(&a); err != nil || a != want {
		t.Fatalf("%+v %v", a, err)
	}
	bad := Msg{T: TypeReq, ID: 1, Op: "rename", Args: json.RawMessage(`{"id":5}`)}
	if err := bad.DecodeArgs(&a); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("mistyped args: %v", err)
	}
	var c api.CreateRequest
	if err := (Msg{T: TypeReq, ID: 1, Op: "create"}).DecodeArgs(&c); err != nil {
		t.Errorf("no args: %v", err)
	}
}

func TestCutReason(t *testing.T) {
	if got := cutReason("short"); got != "short" {
		t.Error(got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got := cutReason(long)
	if len(got) > maxReason || !strings.HasPrefix(long, got) || len(got) < maxReason-1 {
		t.Errorf("%d bytes: %q", len(got), got)
	}
}

// wireMsg must have every field of Msg, named alike, in the same order.
func TestWireMsgInStep(t *testing.T) {
	names := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			f := rt.Field(i)
			if tag := f.Tag.Get("json"); tag != "-" {
				out = append(out, f.Name+" "+tag)
			}
		}
		return out
	}
	m, w := names(Msg{}), names(wireMsg{})
	if !reflect.DeepEqual(m, w) {
		t.Errorf("Msg and wireMsg differ:\n%v\n%v", m, w)
	}
}

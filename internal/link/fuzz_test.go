package link

// Fuzz targets for the codec. Plain `go test` runs the seeds;
//
//	go test ./internal/link -run '^$' -fuzz '^FuzzDecodeMsg$' -fuzztime 1m
//
// explores one target.

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

func FuzzDecodeMsg(f *testing.F) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 123, time.FixedZone("x", 3600))
	s := api.Session{ID: "s1", Name: "n", Status: api.StatusBusy, WaitingFor: &api.Waiting{Kind: "permission"}, UpdatedAt: now}
	req, _ := NewReq(1, "create", api.CreateRequest{Dir: "/tmp", Args: []string{"--x"}})
	res, _ := NewRes(1, s, nil)
	bad, _ := NewRes(2, nil, api.Errorf(api.CodeConflict, "taken"))
	for _, m := range []Msg{
		{T: TypeHello, Protocol: 1, Hostname: "h"},
		{T: TypeWelcome, DeviceID: "d", HeartbeatMS: 15000},
		{T: TypeSync, Seq: 4, Sessions: []api.Session{s}},
		{T: TypeEvent, Seq: 5, Event: &api.Event{Seq: 5, Type: api.EventSession, Session: &s, Prev: api.StatusStarting, Time: now}},
		req, res, bad,
		{T: TypePing, ID: 3}, {T: TypePong, ID: 3},
		{T: TypeTermExit, Stream: 1, Reason: "exit"}, {T: TypeTermRedraw, Stream: 1, NewStream: 2},
	} {
		b, err := EncodeMsg(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"t":""}`, `{"t":1}`, `{"t":"future","id":"x"}`, `{"t":"res","id":1}`,
		`{"t":"req","id":1,"op":"kill","args":[1]}`, `{"t":"sync","sessions":null}`, `{"t":"ping","id":1e3}`,
		`{"t":"event","seq":1,"event":{"time":"not a time"}}`, "{\"t\":\"x\xff\"}", `{"t":"a","t":"b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMsg(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooBig) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		if m.T == "" {
			t.Fatal("accepted without a type")
		}
		if (m.T == TypeReq || m.T == TypeRes) && m.ID == 0 {
			t.Fatal("accepted a req or res without an id")
		}
		_ = m.Err()
		_ = m.DecodeResult(new(any))
		_ = m.DecodeArgs(new(any))
		// What decodes encodes, and encodes the same way again.
		enc, err := EncodeMsg(m)
		if errors.Is(err, ErrTooBig) {
			return // escaping can grow it past the limit
		}
		if err != nil {
			t.Fatalf("re-encode %+v: %v", m, err)
		}
		m2, err := DecodeMsg(enc)
		if err != nil {
			t.Fatalf("decode of our own %s: %v", enc, err)
		}
		enc2, err := EncodeMsg(m2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("unstable:\n%s\n%s %v", enc, enc2, err)
		}
	})
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(EncodeFrame(OutputFrame(1, 0, []byte("hello"))))
	f.Add(EncodeFrame(OutputFrame(1<<31, 1<<62, nil)))
	f.Add(EncodeFrame(InputFrame(2, []byte("\x1b[A"))))
	f.Add([]byte{})
	f.Add([]byte{0x01, 0, 0, 0})
	f.Add([]byte{0x01, 0, 0, 0, 1, 0, 0})
	f.Add([]byte{0x99, 0, 0, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		switch {
		case errors.Is(err, ErrUnknownFrame):
			if fr.Type == FrameOutput || fr.Type == FrameInput {
				t.Fatalf("known type %v reported unknown", fr.Type)
			}
			return
		case err != nil:
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooBig) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		if fr.Type != FrameOutput && fr.Type != FrameInput {
			t.Fatalf("accepted type %v", fr.Type)
		}
		if enc := EncodeFrame(fr); !bytes.Equal(enc, b) {
			t.Fatalf("round trip: % x -> % x", b, enc)
		}
	})
}

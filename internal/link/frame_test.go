package link

import (
	"bytes"
	"errors"
	"testing"
)

func TestFrameWire(t *testing.T) {
	out := EncodeFrame(OutputFrame(0x01020304, 0x1122334455667788, []byte("hi")))
	want := []byte{0x01, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 'h', 'i'}
	if !bytes.Equal(out, want) {
		t.Errorf("output: % x", out)
	}
	in := EncodeFrame(InputFrame(7, []byte("\r")))
	if !bytes.Equal(in, []byte{0x11, 0, 0, 0, 7, '\r'}) {
		t.Errorf("input: % x", in)
	}
	// Offset is not part of an input frame.
	if b := EncodeFrame(Frame{Type: FrameInput, Stream: 7, Offset: 9, Data: []byte("\r")}); !bytes.Equal(b, in) {
		t.Errorf("input with offset: % x", b)
	}
}

func TestDecodeFrame(t *testing.T) {
	for _, f := range []Frame{
		OutputFrame(1, 0, nil),
		OutputFrame(1, 1<<40, []byte("output")),
		OutputFrame(^uint32(0), ^uint64(0), bytes.Repeat([]byte{0xff}, MaxOutputChunk)),
		InputFrame(2, nil),
		InputFrame(2, []byte("keys\x1b[A")),
	} {
		got, err := DecodeFrame(EncodeFrame(f))
		if err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		if got.Type != f.Type || got.Stream != f.Stream || got.Offset != f.Offset || !bytes.Equal(got.Data, f.Data) {
			t.Errorf("got %+v, want %+v", got, f)
		}
	}
	for _, c := range []struct {
		in   []byte
		want error
	}{
		{nil, ErrInvalid},
		{[]byte{0x01}, ErrInvalid},
		{[]byte{0x11, 0, 0, 0}, ErrInvalid},
		{[]byte{0x01, 0, 0, 0, 1}, ErrInvalid},                      // no offset
		{[]byte{0x01, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, ErrInvalid}, // 7 bytes of offset
		{[]byte{0x42, 0, 0, 0, 1, 'x'}, ErrUnknownFrame},
		{make([]byte, MaxFrame+1), ErrTooBig},
	} {
		_, err := DecodeFrame(c.in)
		if !errors.Is(err, c.want) {
			t.Errorf("% x: err = %v, want %v", c.in[:min(len(c.in), 16)], err, c.want)
		}
	}
	// An unknown type still says what it was, so it can be skipped.
	f, err := DecodeFrame([]byte{0x42, 0, 0, 0, 9, 'x', 'y'})
	if !errors.Is(err, ErrUnknownFrame) || f.Type != 0x42 || f.Stream != 9 || string(f.Data) != "xy" {
		t.Errorf("%+v %v", f, err)
	}
	// An output frame of exactly its header is empty output.
	f, err = DecodeFrame([]byte{0x01, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5})
	if err != nil || f.Offset != 5 || len(f.Data) != 0 {
		t.Errorf("%+v %v", f, err)
	}
}

package link

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// FrameType is the first byte of a binary terminal frame.
type FrameType byte

const (
	// FrameOutput (A→H) carries terminal output: its payload is the
	// offset of the first byte in the stream, 8 bytes big-endian, then
	// the bytes.
	FrameOutput FrameType = 0x01
	// FrameInput (H→A) carries keystrokes.
	FrameInput FrameType = 0x11
)

// Sizes of frame headers.
const (
	// FrameHeader is the type byte and the 4-byte stream number.
	FrameHeader = 5
	// OutputHeader is FrameHeader and the 8-byte offset of an output frame.
	OutputHeader = FrameHeader + 8
	// MaxOutputChunk is the most output the agent puts in one frame.
	MaxOutputChunk = 64 << 10
)

// ErrUnknownFrame: a binary frame of a type this version does not know.
var ErrUnknownFrame = errors.New("unknown frame type")

// Frame is one binary terminal frame.
type Frame struct {
	Type   FrameType
	Stream uint32
	// Offset is the position in the stream of Data's first byte (output
	// frames only).
	Offset uint64
	Data   []byte
}

// OutputFrame makes an output frame.
func OutputFrame(stream uint32, offset uint64, data []byte) Frame {
	return Frame{Type: FrameOutput, Stream: stream, Offset: offset, Data: data}
}

// InputFrame makes an input frame.
func InputFrame(stream uint32, data []byte) Frame {
	return Frame{Type: FrameInput, Stream: stream, Data: data}
}

// EncodeFrame returns the bytes of f: [type][stream 4B BE], then for an
// output frame [offset 8B BE], then Data. Offset is not written for other
// types.
func EncodeFrame(f Frame) []byte {
	return AppendFrame(make([]byte, 0, OutputHeader+len(f.Data)), f)
}

// AppendFrame appends the bytes of f to dst.
func AppendFrame(dst []byte, f Frame) []byte {
	dst = append(dst, byte(f.Type))
	dst = binary.BigEndian.AppendUint32(dst, f.Stream)
	if f.Type == FrameOutput {
		dst = binary.BigEndian.AppendUint64(dst, f.Offset)
	}
	return append(dst, f.Data...)
}

// DecodeFrame parses a binary frame. Data aliases b. A frame shorter than
// its header is an error wrapping ErrInvalid; one of an unknown type wraps
// ErrUnknownFrame and still returns its Type, Stream and the rest as Data,
// so a caller can skip it (newer peers may send types older ones do not
// know).
func DecodeFrame(b []byte) (Frame, error) {
	if len(b) > MaxFrame {
		return Frame{}, fmt.Errorf("%w: frame of %d bytes, the limit is %d", ErrTooBig, len(b), MaxFrame)
	}
	if len(b) < FrameHeader {
		return Frame{}, fmt.Errorf("%w: frame of %d bytes, shorter than its %d-byte header", ErrInvalid, len(b), FrameHeader)
	}
	f := Frame{Type: FrameType(b[0]), Stream: binary.BigEndian.Uint32(b[1:FrameHeader])}
	switch f.Type {
	case FrameOutput:
		if len(b) < OutputHeader {
			return Frame{}, fmt.Errorf("%w: output frame of %d bytes, shorter than its %d-byte header", ErrInvalid, len(b), OutputHeader)
		}
		f.Offset = binary.BigEndian.Uint64(b[FrameHeader:OutputHeader])
		f.Data = b[OutputHeader:]
	case FrameInput:
		f.Data = b[FrameHeader:]
	default:
		f.Data = b[FrameHeader:]
		return f, fmt.Errorf("%w 0x%02x (stream %d, %d bytes)", ErrUnknownFrame, b[0], f.Stream, len(b))
	}
	return f, nil
}

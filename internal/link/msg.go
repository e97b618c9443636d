package link

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corral-dev/corral/internal/api"
)

// Protocol is the version of the device link this package speaks. Version
// 2 starts with the hub's challenge, which the agent's hello answers with
// a signature of its device key (docs/protocol.md, "Connecting").
const Protocol = 2

// HeaderDeviceKey is the header of the upgrade request that names the
// device's public key (base64url, internal/devicekey).
const HeaderDeviceKey = "Corral-Device-Key"

// MaxFrame is the largest message, text or binary, either end accepts; a
// larger one closes the link with status 1009.
const MaxFrame = 1 << 20

// Message types (the "t" of every control message).
const (
	TypeChallenge  = "challenge"   // H→A, first message: nonce and hub_id
	TypeHello      = "hello"       // A→H, its answer, signed
	TypeWelcome    = "welcome"     // H→A, the hello was accepted
	TypeSync       = "sync"        // A→H, seq and the full list of sessions
	TypeEvent      = "event"       // A→H, seq and one api.Event
	TypeReq        = "req"         // a request: id, op (an api op's name), args (its request)
	TypeRes        = "res"         // its answer: id, ok, result or error
	TypePing       = "ping"        // heartbeat, id
	TypePong       = "pong"        // its answer, id
	TypeTermExit   = "term_exit"   // A→H, stream and reason
	TypeTermRedraw = "term_redraw" // A→H, stream: it fell behind, open a new one
	TypeTermAck    = "term_ack"    // H→A, stream and offset: delivered so far
	TypeCancel     = "cancel"      // id of a req whose caller gave up: stop it
)

// Errors of the codec.
var (
	// ErrInvalid: the bytes are not a message of this protocol (not a
	// JSON object, no "t", a field of the wrong type, a frame too short).
	ErrInvalid = errors.New("invalid message")
	// ErrTooBig: the message is over MaxFrame.
	ErrTooBig = errors.New("message too big")
)

// Msg is every control message of the protocol: T says which, and only the
// fields of that type are set (the table in docs/protocol.md). Build
// requests and replies with NewReq and NewRes; other messages are literals:
//
//	link.Msg{T: link.TypeEvent, Seq: ev.Seq, Event: &ev}
//
// EncodeMsg writes the fields a type requires even when they are zero (ok of
// a res, seq and sessions of a sync, seq of an event, result of a
// successful res) and leaves out every other zero field.
type Msg struct {
	T string `json:"t"`
	// ID is set on req, res and cancel (the request's id), ping and pong,
	// and on unknown types that expect an answer.
	ID uint64 `json:"id,omitempty"`

	// challenge: a fresh random nonce (base64url) and the hub's id
	Nonce string `json:"nonce,omitempty"`
	HubID string `json:"hub_id,omitempty"`

	// hello. Host and Sig answer the challenge: the hub's host as the
	// agent dialed it, and the device key's signature (base64url) of
	// host, hub id and nonce (internal/devicekey).
	Protocol int    `json:"protocol,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	OS       string `json:"os,omitempty"`
	Arch     string `json:"arch,omitempty"`
	Version  string `json:"version,omitempty"`
	// NoClaude: the agent found no claude to start when it connected.
	NoClaude bool   `json:"no_claude,omitempty"`
	Host     string `json:"host,omitempty"`
	Sig      string `json:"sig,omitempty"`

	// welcome. Enrolled: this connection bound the device's key, and the
	// enrolment token it came with is spent.
	DeviceID    string `json:"device_id,omitempty"`
	DeviceName  string `json:"device_name,omitempty"`
	HubVersion  string `json:"hub_version,omitempty"`
	HeartbeatMS int64  `json:"heartbeat_ms,omitempty"`
	Enrolled    bool   `json:"enrolled,omitempty"`

	// sync and event. Seq is the agent's event sequence number.
	Seq      uint64        `json:"seq,omitempty"`
	Sessions []api.Session `json:"sessions,omitempty"`
	Event    *api.Event    `json:"event,omitempty"`

	// req
	Op   string          `json:"op,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`

	// res
	OK     bool            `json:"ok,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *api.Error      `json:"error,omitempty"`

	// term_exit, term_redraw and term_ack
	Stream    uint32 `json:"stream,omitempty"`
	Reason    string `json:"reason,omitempty"`
	NewStream uint32 `json:"new_stream,omitempty"`
	Offset    uint64 `json:"offset,omitempty"`

	// Raw is the message as received (set by DecodeMsg, never sent), for
	// callers that read a type this package does not know.
	Raw json.RawMessage `json:"-"`
}

// Known reports whether m.T is a type of this protocol version. A peer
// should answer an unknown type that carries an id with a bad_request res,
// and log and ignore the others.
func (m Msg) Known() bool {
	switch m.T {
	case TypeChallenge, TypeHello, TypeWelcome, TypeSync, TypeEvent, TypeReq, TypeRes,
		TypePing, TypePong, TypeTermExit, TypeTermRedraw, TypeTermAck, TypeCancel:
		return true
	}
	return false
}

// MarshalJSON writes the fields m.T requires even when zero, and no other
// zero field.
func (m Msg) MarshalJSON() ([]byte, error) {
	w := wireMsg{
		T: m.T, ID: m.ID,
		Nonce: m.Nonce, HubID: m.HubID,
		Protocol: m.Protocol, Hostname: m.Hostname, OS: m.OS, Arch: m.Arch, Version: m.Version, NoClaude: m.NoClaude,
		Host: m.Host, Sig: m.Sig,
		DeviceID: m.DeviceID, DeviceName: m.DeviceName, HubVersion: m.HubVersion, HeartbeatMS: m.HeartbeatMS, Enrolled: m.Enrolled,
		Event: m.Event,
		Op:    m.Op, Args: m.Args,
		Result: m.Result, Error: m.Error,
		Stream: m.Stream, Reason: m.Reason, NewStream: m.NewStream, Offset: m.Offset,
	}
	if m.Seq != 0 || m.T == TypeSync || m.T == TypeEvent {
		w.Seq = &m.Seq
	}
	if m.Sessions != nil || m.T == TypeSync {
		s := m.Sessions
		if s == nil {
			s = []api.Session{}
		}
		w.Sessions = &s
	}
	if m.OK || m.T == TypeRes {
		w.OK = &m.OK
	}
	if m.T == TypeRes && m.OK && len(m.Result) == 0 {
		w.Result = json.RawMessage("{}")
	}
	return json.Marshal(w)
}

// wireMsg is Msg as written: the same fields in the same order, with
// pointers for those some types require even when zero. (A test keeps the
// two in step.)
type wireMsg struct {
	T           string          `json:"t"`
	ID          uint64          `json:"id,omitempty"`
	Nonce       string          `json:"nonce,omitempty"`
	HubID       string          `json:"hub_id,omitempty"`
	Protocol    int             `json:"protocol,omitempty"`
	Hostname    string          `json:"hostname,omitempty"`
	OS          string          `json:"os,omitempty"`
	Arch        string          `json:"arch,omitempty"`
	Version     string          `json:"version,omitempty"`
	NoClaude    bool            `json:"no_claude,omitempty"`
	Host        string          `json:"host,omitempty"`
	Sig         string          `json:"sig,omitempty"`
	DeviceID    string          `json:"device_id,omitempty"`
	DeviceName  string          `json:"device_name,omitempty"`
	HubVersion  string          `json:"hub_version,omitempty"`
	HeartbeatMS int64           `json:"heartbeat_ms,omitempty"`
	Enrolled    bool            `json:"enrolled,omitempty"`
	Seq         *uint64         `json:"seq,omitempty"`
	Sessions    *[]api.Session  `json:"sessions,omitempty"`
	Event       *api.Event      `json:"event,omitempty"`
	Op          string          `json:"op,omitempty"`
	Args        json.RawMessage `json:"args,omitempty"`
	OK          *bool           `json:"ok,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       *api.Error      `json:"error,omitempty"`
	Stream      uint32          `json:"stream,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	NewStream   uint32          `json:"new_stream,omitempty"`
	Offset      uint64          `json:"offset,omitempty"`
}

// EncodeMsg returns the JSON of m, or an error wrapping ErrTooBig when it
// is over MaxFrame.
func EncodeMsg(m Msg) ([]byte, error) {
	if m.T == "" {
		return nil, fmt.Errorf("link: encode: %w: no type", ErrInvalid)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("link: encode %s: %w", m.T, err)
	}
	if len(b) > MaxFrame {
		return nil, fmt.Errorf("link: encode %s: %w: %d bytes, the limit is %d", m.T, ErrTooBig, len(b), MaxFrame)
	}
	return b, nil
}

// DecodeMsg parses one control message. It refuses input over MaxFrame
// (ErrTooBig), anything but a JSON object, a missing or empty "t", a req or
// res without an id, and, for the known types, a field of the wrong type
// (ErrInvalid). Unknown fields are ignored, and so is a mistyped field of an
// unknown type: newer peers may send both. An unknown type is not an error:
// check Known. Raw is set to b.
func DecodeMsg(b []byte) (Msg, error) {
	if len(b) > MaxFrame {
		return Msg{}, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooBig, len(b), MaxFrame)
	}
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Msg{}, fmt.Errorf("%w: not a JSON object", ErrInvalid)
	}
	var m Msg
	err := json.Unmarshal(b, &m)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
	case errors.As(err, &typeErr) && m.T != "" && !m.Known():
		// A newer type whose fields we would read differently: keep what
		// decoded; the caller reads Raw if it cares.
	default:
		return Msg{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if m.T == "" {
		return Msg{}, fmt.Errorf("%w: no \"t\"", ErrInvalid)
	}
	if (m.T == TypeReq || m.T == TypeRes) && m.ID == 0 {
		return Msg{}, fmt.Errorf("%w: %s without an id", ErrInvalid, m.T)
	}
	m.Raw = b
	return m, nil
}

// NewReq makes a request. Args is encoded as JSON; nil becomes {}.
func NewReq(id uint64, op string, args any) (Msg, error) {
	raw, err := marshalValue(args)
	if err != nil {
		return Msg{}, fmt.Errorf("link: %s args: %w", op, err)
	}
	return Msg{T: TypeReq, ID: id, Op: op, Args: raw}, nil
}

// NewRes makes the answer to request id: a failure when err is not nil
// (its *api.Error, or an internal error with its text), else a success
// carrying result (nil becomes {}).
func NewRes(id uint64, result any, err error) (Msg, error) {
	if err != nil {
		return Msg{T: TypeRes, ID: id, Error: api.AsError(err)}, nil
	}
	raw, err := marshalValue(result)
	if err != nil {
		return Msg{}, fmt.Errorf("link: result: %w", err)
	}
	return Msg{T: TypeRes, ID: id, OK: true, Result: raw}, nil
}

// Err returns the error a res carries: nil when it succeeded, else an
// *api.Error (internal when the peer sent none).
func (m Msg) Err() error {
	if m.OK {
		return nil
	}
	if m.Error == nil {
		return &api.Error{Code: api.CodeInternal, Message: "request failed without an error"}
	}
	if m.Error.Code == "" {
		return &api.Error{Code: api.CodeInternal, Message: m.Error.Message}
	}
	return m.Error
}

// DecodeResult reads a res into v: its error when it failed, else its
// result. A nil v only checks the error.
func (m Msg) DecodeResult(v any) error {
	if err := m.Err(); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	res := m.Result
	if len(res) == 0 {
		res = json.RawMessage("{}")
	}
	if err := json.Unmarshal(res, v); err != nil {
		return fmt.Errorf("link: decoding the result: %w", err)
	}
	return nil
}

// DecodeArgs reads a req's args into v. A failure is an *api.Error with
// code bad_request, ready to send back with Reply.
func (m Msg) DecodeArgs(v any) error {
	args := m.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return api.Errorf(api.CodeBadRequest, "bad arguments for %s: %v", m.Op, err)
	}
	return nil
}

// marshalValue encodes v; nil becomes {} and a json.RawMessage stays as is.
func marshalValue(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case json.RawMessage:
		if len(v) == 0 {
			return json.RawMessage("{}"), nil
		}
		if !json.Valid(v) {
			return nil, errors.New("invalid JSON")
		}
		return v, nil
	}
	return json.Marshal(v)
}

package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corral-dev/corral/internal/regularfile"
)

// ErrTooLarge is wrapped by every error about input over a size limit.
var ErrTooLarge = regularfile.ErrTooLarge

// CheckObject rejects input that is not a single JSON object, with an error
// that says what it is instead.
func CheckObject(what string, b []byte, limit int) error {
	if len(b) > limit {
		return fmt.Errorf("%s: %w (%d bytes, limit %d)", what, ErrTooLarge, len(b), limit)
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return fmt.Errorf("%s: empty input", what)
	}
	if t[0] != '{' {
		return fmt.Errorf("%s: not a JSON object (starts with %q)", what, Clip(string(t), 16))
	}
	if !json.Valid(t) {
		return fmt.Errorf("%s: malformed JSON", what)
	}
	return nil
}

// DecodeLoose unmarshals b (already checked to be a valid object) into v.
// A field of an unexpected type is left zero instead of failing the whole
// value: Claude's formats drift between versions, and one odd field must not
// hide an event. FlexString never fails, so any other error is real and
// returned.
func DecodeLoose(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if err == nil || errors.As(err, &te) {
		return nil
	}
	return err
}

// Clip shortens s to at most n runes, for error messages and previews.
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// FlexString is a string field that also accepts any other JSON value
// (stored as its JSON text), for fields whose type Claude has changed.
type FlexString string

func (f *FlexString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = FlexString(s)
		return nil
	}
	if string(b) == "null" {
		*f = ""
		return nil
	}
	*f = FlexString(b)
	return nil
}

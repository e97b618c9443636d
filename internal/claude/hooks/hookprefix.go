package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/corral-dev/corral/internal/claude"
)

// ParsePrefix decodes the start of a hook payload that was cut at a
// size limit: the members of the top-level object that arrived whole.
// Claude writes the small fields (session_id, transcript_path,
// hook_event_name, tool_name) before the large ones (tool_input,
// tool_response), so a cut PreToolUse, PostToolUse or PermissionRequest
// still says what happened, without its tool's input or output. The
// payload must still name its hook_event_name.
func ParsePrefix(b []byte) (Payload, error) {
	if len(b) > MaxPayload {
		return Payload{}, fmt.Errorf("hook payload prefix: %w (%d bytes, limit %d)", claude.ErrTooLarge, len(b), MaxPayload)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Payload{}, fmt.Errorf("hook payload prefix: not a JSON object")
	}
	whole := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, ok := tok.(string)
		if !ok {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break // the member the cut went through
		}
		whole[key] = v
	}
	obj, err := json.Marshal(whole)
	if err != nil {
		return Payload{}, fmt.Errorf("hook payload prefix: %w", err)
	}
	var h hookJSON
	if err := claude.DecodeLoose(obj, &h); err != nil {
		return Payload{}, fmt.Errorf("hook payload prefix: %w", err)
	}
	p := h.Payload
	p.Error = string(h.Error)
	p.CustomInstructions = string(h.CustomInstructions)
	if p.HookEventName == "" {
		return Payload{}, fmt.Errorf("hook payload prefix: no hook_event_name before the cut")
	}
	return p, nil
}

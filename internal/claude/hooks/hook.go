package hooks

import (
	"encoding/json"
	"fmt"

	"github.com/corral-dev/corral/internal/claude"
)

// Size limits: generous enough for real data, small enough that a hostile
// input cannot exhaust memory.
const (
	// MaxPayload bounds one hook's stdin. Tool inputs and responses ride
	// along (a Write of a large file), so this is not tiny.
	MaxPayload = 16 << 20
	// MaxStatusLine bounds one status-line input.
	MaxStatusLine = 4 << 20
	// MaxSettingsFile bounds a settings.json.
	MaxSettingsFile = 8 << 20
)

// Hook event names, as Claude sends them in hook_event_name and expects
// them as keys of the settings "hooks" object.
const (
	EventSessionStart       = "SessionStart"
	EventSessionEnd         = "SessionEnd"
	EventUserPromptSubmit   = "UserPromptSubmit"
	EventPreToolUse         = "PreToolUse"
	EventPostToolUse        = "PostToolUse"
	EventPostToolUseFailure = "PostToolUseFailure"
	EventPermissionRequest  = "PermissionRequest"
	EventNotification       = "Notification"
	EventStop               = "Stop"
	EventStopFailure        = "StopFailure"
	EventPreCompact         = "PreCompact"
	EventPostCompact        = "PostCompact"
	EventSubagentStart      = "SubagentStart"
	EventSubagentStop       = "SubagentStop"
	EventElicitation        = "Elicitation"
	EventElicitationResult  = "ElicitationResult"
	EventTaskCreated        = "TaskCreated"
	EventTaskCompleted      = "TaskCompleted"
)

// Events returns the events corral registers a hook for, in a fresh
// slice. SubagentStart and SubagentStop never end a turn (SubagentStop also
// fires inside /compact), but they say which subagents run; Elicitation
// opens an MCP server's dialog at once (its Notification comes ~6 s later);
// TaskCreated and TaskCompleted are the task list's progress (TodoWrite is
// off in 2.1.197).
func Events() []string {
	return []string{
		EventSessionStart,
		EventSessionEnd,
		EventUserPromptSubmit,
		EventPreToolUse,
		EventPostToolUse,
		EventPostToolUseFailure,
		EventPermissionRequest,
		EventNotification,
		EventStop,
		EventStopFailure,
		EventPreCompact,
		EventPostCompact,
		EventSubagentStart,
		EventSubagentStop,
		EventElicitation,
		EventElicitationResult,
		EventTaskCreated,
		EventTaskCompleted,
	}
}

// isToolEvent reports whether an event's matcher is compared with a tool
// name. Claude treats a missing, empty or "*" matcher as "match everything";
// we write "*" only where a matcher means something, as Claude's docs do.
func isToolEvent(event string) bool {
	switch event {
	case EventPreToolUse, EventPostToolUse, EventPostToolUseFailure, EventPermissionRequest:
		return true
	}
	return false
}

// Notification types (notification_type) seen from Claude 2.1.197. The
// first four mean a person must act; the others change nothing.
const (
	NotifyPermissionPrompt       = "permission_prompt"
	NotifyWorkerPermissionPrompt = "worker_permission_prompt"
	NotifyElicitationDialog      = "elicitation_dialog"
	NotifyElicitationURLDialog   = "elicitation_url_dialog"
	NotifyIdlePrompt             = "idle_prompt"
)

// NeedsPerson reports whether a notification type means Claude waits for a
// person (a permission prompt or an MCP elicitation).
func NeedsPerson(notificationType string) bool {
	switch notificationType {
	case NotifyPermissionPrompt, NotifyWorkerPermissionPrompt, NotifyElicitationDialog, NotifyElicitationURLDialog:
		return true
	}
	return false
}

// Payload is what Claude writes to a hook command's stdin. Which fields
// are set depends on the event; raw fields are kept verbatim for the UI.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	CWD            string `json:"cwd,omitempty"`
	HookEventName  string `json:"hook_event_name"`
	PromptID       string `json:"prompt_id,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`

	// SessionStart: "startup", "resume", "clear", "compact".
	Source string `json:"source,omitempty"`
	// SessionStart: the model id, e.g. "claude-opus-4-8[1m]", and the
	// session's title.
	Model        string `json:"model,omitempty"`
	SessionTitle string `json:"session_title,omitempty"`
	// SessionEnd: "clear", "logout", "prompt_input_exit", "other", ...
	Reason string `json:"reason,omitempty"`

	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`

	// PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest.
	ToolName              string          `json:"tool_name,omitempty"`
	ToolInput             json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID             string          `json:"tool_use_id,omitempty"`
	ToolResponse          json.RawMessage `json:"tool_response,omitempty"`
	PermissionSuggestions json.RawMessage `json:"permission_suggestions,omitempty"`
	DurationMS            int64           `json:"duration_ms,omitempty"`

	// Notification.
	Message          string `json:"message,omitempty"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`

	// StopFailure: the error kind ("unknown", "rate_limit", ...); also
	// PostToolUseFailure's error text.
	Error                string `json:"error,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	StopHookActive       bool   `json:"stop_hook_active,omitempty"`

	// PreCompact, PostCompact: "manual" or "auto".
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`
	CompactSummary     string `json:"compact_summary,omitempty"`

	// AgentID is set on every hook fired inside a subagent (its tool
	// calls too, not only SubagentStart/SubagentStop); empty in the main
	// conversation.
	AgentID             string `json:"agent_id,omitempty"`
	AgentType           string `json:"agent_type,omitempty"`
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`

	// Effort is the reasoning effort, e.g. {"level":"high"}, verbatim.
	Effort json.RawMessage `json:"effort,omitempty"`

	// Stop: the background work still running when the main turn ended
	// (subagents started with run_in_background, background shells).
	BackgroundTasks []BackgroundTask `json:"background_tasks,omitempty"`

	// Elicitation, ElicitationResult: the MCP server and its question;
	// the answer's action ("accept", "decline", "cancel").
	MCPServerName string `json:"mcp_server_name,omitempty"`
	Action        string `json:"action,omitempty"`

	// TaskCreated, TaskCompleted.
	TaskID      string `json:"task_id,omitempty"`
	TaskSubject string `json:"task_subject,omitempty"`
}

// BackgroundTask is one entry of Stop's background_tasks.
type BackgroundTask struct {
	ID          string `json:"id,omitempty"`
	Type        string `json:"type"` // "subagent", "shell"
	Status      string `json:"status,omitempty"`
	Description string `json:"description,omitempty"`
	Command     string `json:"command,omitempty"`
	AgentType   string `json:"agent_type,omitempty"`
}

// hookJSON decodes the fields whose JSON type varies (error has been a
// string; tool errors may be objects) without failing the payload.
type hookJSON struct {
	Payload
	Error              claude.FlexString `json:"error"`
	CustomInstructions claude.FlexString `json:"custom_instructions"`
}

// Parse decodes one hook payload. It rejects input over MaxPayload,
// anything but a JSON object, and a payload without hook_event_name. Fields
// of an unexpected type are left empty rather than failing the payload.
func Parse(b []byte) (Payload, error) {
	if err := claude.CheckObject("hook payload", b, MaxPayload); err != nil {
		return Payload{}, err
	}
	var h hookJSON
	if err := claude.DecodeLoose(b, &h); err != nil {
		return Payload{}, fmt.Errorf("hook payload: %w", err)
	}
	p := h.Payload
	p.Error = string(h.Error)
	p.CustomInstructions = string(h.CustomInstructions)
	if p.HookEventName == "" {
		return Payload{}, fmt.Errorf("hook payload: missing hook_event_name")
	}
	return p, nil
}

// WaitsForPerson reports whether this hook means Claude now waits for a
// person, and what for: a PermissionRequest (at once, with the tool and
// suggestions), an AskUserQuestion tool call, or a Notification of a kind
// that needs someone.
func (p Payload) WaitsForPerson() (kind string, ok bool) {
	switch p.HookEventName {
	case EventPermissionRequest:
		return "permission", true
	case EventPreToolUse:
		if p.ToolName == "AskUserQuestion" {
			return "question", true
		}
	case EventNotification:
		switch p.NotificationType {
		case NotifyPermissionPrompt, NotifyWorkerPermissionPrompt:
			return "permission", true
		case NotifyElicitationDialog, NotifyElicitationURLDialog:
			return "elicitation", true
		}
	}
	return "", false
}

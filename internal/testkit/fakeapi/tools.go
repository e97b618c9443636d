package fakeapi

import (
	"regexp"
	"strings"
)

// Builders of tool_use replies for Claude Code 2.1.197's own tools, with the
// input shapes of its sdk-tools.d.ts. Each returns a Reply asking to run one
// tool; combine blocks by hand for more.

// Edit asks to replace oldString by newString in the file at path (absolute).
func Edit(path, oldString, newString string) Reply {
	return ToolUse("Edit", map[string]any{"file_path": path, "old_string": oldString, "new_string": newString})
}

// Write asks to write content to the file at path (absolute).
func Write(path, content string) Reply {
	return ToolUse("Write", map[string]any{"file_path": path, "content": content})
}

// WebFetch asks to fetch url and run prompt on its content.
func WebFetch(url, prompt string) Reply {
	return ToolUse("WebFetch", map[string]any{"url": url, "prompt": prompt})
}

// BashBackground asks to run a Bash command in the background
// (run_in_background: true).
func BashBackground(command, description string) Reply {
	return ToolUse("Bash", map[string]any{"command": command, "description": description, "run_in_background": true})
}

// QuestionOption is one choice of an AskUserQuestion question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Question is one question of an AskUserQuestion tool_use.
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect"`
}

// AskQuestions asks the AskUserQuestion tool the given questions (1-4).
func AskQuestions(qs ...Question) Reply {
	return ToolUse("AskUserQuestion", map[string]any{"questions": qs})
}

// ExitPlanMode asks to leave plan mode with plan (markdown). Claude 2.1.197
// reads the plan from its plan file when the input has none; a plan in the
// input is shown as given.
func ExitPlanMode(plan string) Reply {
	return ToolUse("ExitPlanMode", map[string]any{"plan": plan})
}

// Agent asks to run a subagent of subagentType ("general-purpose" when
// empty) with prompt; background sets run_in_background.
func Agent(description, prompt, subagentType string, background bool) Reply {
	if subagentType == "" {
		subagentType = "general-purpose"
	}
	in := map[string]any{"description": description, "prompt": prompt, "subagent_type": subagentType}
	if background {
		in["run_in_background"] = true
	}
	return ToolUse("Agent", in)
}

// Todo is one item of a TodoWrite list; Status is "pending", "in_progress"
// or "completed".
type Todo struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"activeForm"`
}

// TodoWrite asks to replace the todo list with todos.
func TodoWrite(todos ...Todo) Reply {
	return ToolUse("TodoWrite", map[string]any{"todos": todos})
}

// MCPTool asks to call tool of the MCP server named server (Claude names
// it mcp__<server>__<tool>) with input.
func MCPTool(server, tool string, input any) Reply {
	return ToolUse("mcp__"+server+"__"+tool, input)
}

// Steps is a rule that scripts a turn of several model requests: the turn
// whose typed prompt contains contains gets replies[0] first, replies[1]
// after the first tool result, and so on; once they are used up the rule no
// longer matches (the default text answer ends the turn).
func Steps(contains string, replies ...Reply) Rule {
	return Rule{
		Name: contains + " (steps)",
		Match: func(r *Request) bool {
			return strings.Contains(r.TurnPrompt, contains) && r.TurnSteps < len(replies)
		},
		ReplyFunc: func(r *Request) Reply { return replies[r.TurnSteps] },
	}
}

// Read asks to read the file at path (absolute). Claude's Edit tool refuses
// to edit a file that was not read first in the session.
func Read(path string) Reply {
	return ToolUse("Read", map[string]any{"file_path": path})
}

// planPathRE finds the plan file Claude 2.1.197 names in plan mode's
// system reminder ("create your plan at <path> using the Write tool", or
// "A plan file already exists at <path>.").
var planPathRE = regexp.MustCompile(`(?:create your plan at|A plan file already exists at) (/[^\s"\\]+?)\.?(?:\s|\\n|")`)

// PlanPath returns the plan file path named in a request's body, or "".
func PlanPath(r *Request) string {
	m := planPathRE.FindSubmatch(r.Body)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// Plan scripts the plan-mode turn whose prompt contains contains: the model
// writes plan to the plan file Claude named, then calls ExitPlanMode.
func Plan(contains, plan string) Rule {
	return Rule{
		Name: contains + " (plan)",
		Match: func(r *Request) bool {
			return strings.Contains(r.TurnPrompt, contains) && r.TurnSteps < 2
		},
		ReplyFunc: func(r *Request) Reply {
			if r.TurnSteps == 0 {
				if p := PlanPath(r); p != "" {
					return Write(p, plan)
				}
			}
			return ToolUse("ExitPlanMode", map[string]any{})
		},
	}
}

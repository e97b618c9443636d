package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/termsafe"
)

func newTimelineCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "timeline ID",
		Short: "Print a session's conversation: prompts, answers, tool calls",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			tl, err := c.Timeline(cmd.Context(), s.ID)
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(tl)
			}
			return printTimeline(e.stdout, tl)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: every item with its tool call, result and edits")
	return cmd
}

// maxResultLine bounds the line of a tool's result that is printed.
const maxResultLine = 200

// printTimeline writes the conversation as text, one item after another
// with a blank line between them. Every string came from a transcript on
// some machine: it is escaped (termsafe.Text keeps newlines and tabs).
func printTimeline(w io.Writer, tl api.Timeline) error {
	var b strings.Builder
	for i, it := range tl.Items {
		if i > 0 {
			b.WriteString("\n")
		}
		switch it.Kind {
		case api.TimelinePrompt:
			b.WriteString(indent("> ", "  ", it.Text))
			if m := turnMeta(it); m != "" {
				b.WriteString("  (" + m + ")\n")
			}
		case api.TimelineThinking:
			b.WriteString(indent("  (thinking) ", "  ", it.Text))
		case api.TimelineTool:
			b.WriteString(toolLine(it.Tool))
		case api.TimelineInterrupt:
			b.WriteString("[" + oneLine(it.Text) + "]\n")
		case api.TimelineCompaction:
			b.WriteString("--- conversation compacted (" + oneLine(it.Text) + ") ---\n")
		case api.TimelineAPIError:
			b.WriteString(indent(fmt.Sprintf("API error %d: ", it.Status), "  ", it.Text))
		default: // text, command, and kinds this version does not know
			b.WriteString(indent("", "", it.Text))
		}
	}
	_, err := io.WriteString(w, termsafe.Text(b.String()))
	return err
}

// turnMeta is what a prompt's turn took, used and cost, as the agent
// counted it: "took 1m23s, 1500 in, 20 out, $0.42" (the cost only when
// every response had a price).
func turnMeta(it api.TimelineItem) string {
	var parts []string
	if it.DurationMS > 0 {
		parts = append(parts, "took "+(time.Duration(it.DurationMS)*time.Millisecond).Round(time.Second).String())
	}
	if tk := it.Tokens; tk != nil {
		parts = append(parts, fmt.Sprintf("%d in, %d out", tk.Input+tk.CacheRead+tk.CacheCreation, tk.Output))
		if tk.Unpriced == 0 {
			parts = append(parts, fmt.Sprintf("$%.2f", tk.CostUSD))
		}
	}
	return strings.Join(parts, ", ")
}

// toolLine is a tool call and how it ended: "* Bash(ls -l)", then the
// first line of its result.
func toolLine(t *api.ToolCall) string {
	if t == nil {
		return "* (a tool)\n"
	}
	line := "* " + oneLine(t.Name)
	if sub := toolSubject(t.Input); sub != "" {
		line += "(" + sub + ")"
	}
	line += "\n"
	switch {
	case !t.Done:
		return line + "  ... running\n"
	case t.IsError:
		return line + "  error: " + firstLine(t.Result) + "\n"
	case t.Result != "":
		return line + "  -> " + firstLine(t.Result) + "\n"
	}
	return line
}

// toolSubject is what a tool call is about, for a line: its command, file,
// pattern, URL or description.
func toolSubject(input json.RawMessage) string {
	var in struct {
		Command     string `json:"command"`
		FilePath    string `json:"file_path"`
		Pattern     string `json:"pattern"`
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, v := range []string{in.Command, in.FilePath, in.Pattern, in.URL, in.Description} {
		if v != "" {
			return firstLine(v)
		}
	}
	return ""
}

// indent prefixes the first line of text with first and the others with
// rest, and ends it with a newline.
func indent(first, rest, text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else if lines[i] != "" {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstLine is s's first non-empty line, cut to maxResultLine runes.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if r := []rune(l); len(r) > maxResultLine {
				return string(r[:maxResultLine-1]) + "…"
			}
			return l
		}
	}
	return ""
}

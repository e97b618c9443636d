// Package screen reads what Claude Code's pane shows at its bottom, from
// the text of `tmux capture-pane` (checked against 2.1.197): Read tells
// which dialog is open (or the input box and its draft) and whether a turn
// runs, Dialog.Keys plans the keys that answer a dialog from that screen
// alone, and ParsePrompt reads a numbered menu. Pure functions of the
// screen's text; the recordings they are tested against are in
// testdata/claude-code-2.1.197/flows at the top of the repository.
package screen

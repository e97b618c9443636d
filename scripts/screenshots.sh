#!/usr/bin/env bash
# Makes the screenshot tour: runs the browser tests that take the pictures
# with CORRAL_SCREENSHOTS=docs/tour (test/e2e/shots_test.go saves a PNG of the
# viewport at chosen moments), then writes docs/tour.md from the table below.
# The pictures come from the tests' own moments, after their assertions, so
# a rerun shows what the product does now; a shot the table names and no
# test took fails the script, and a PNG the table does not name is removed.
# Needs what the browser tests need: tmux, claude, chromium, node (for the UI).
# Usage: scripts/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
# The tests must not skip quietly when claude or chromium is missing.
export CORRAL_REQUIRE_CLAUDE=1

# The tests that take the shots (each at 1440x900 and, where it has one, 390x844).
tests='TestBrowserGlance|TestBrowserDialogs|TestBrowserQuestion|TestBrowserTimelineRich|TestBrowserGit|TestBrowserTerminalTwoDevices|TestBrowserClaudeMissing'

# name|what it shows, in the order of the tour; -desktop and -phone name the size.
shots='
dashboard-desktop|Three sessions in two project folders; the group holding the session that asks shows the amber needs-input dot, its row a Respond button.
needs-input-desktop|"u" opened the session that needs you: the card offers Claude Code'"'"'s own answers as buttons, above the live terminal.
dialog-permission-desktop|A permission dialog with the timeline open: the command, the answers as buttons (the focus on the first), and the box below that answers "3. No" with your words.
dialog-question-desktop|A question from Claude (AskUserQuestion): its options with their descriptions, and a field for an answer of your own.
dialog-multi-desktop|A multi-select question with two options ticked, then Submit.
dialog-submit-step-desktop|The last step of a question: the answers chosen, then Submit answers or Cancel.
dialog-trust-desktop|A session in a folder not yet trusted waits on Claude Code'"'"'s trust dialog; its row says so.
timeline-desktop|The timeline: markdown with highlighted code and a task list, an edit as a patch with line numbers, each prompt with its time, tokens and cost (docs/api.md, Costs).
git-desktop|The Git panel: the branch, the changed file and its diff with git'"'"'s line numbers.
switcher-desktop|The quick switcher (Ctrl+K) finds a session by a few letters of its name.
terminal-desktop|The live terminal (xterm.js over tmux): a shell typed into from a phone and then from this desktop.
claude-missing-desktop|No claude on the PATH: the banner with the install command and a Copy button, and the three first steps.
dashboard-phone|On a phone: the sessions by project folder, the one that asks with a Respond button.
dialog-permission-phone|On a phone: a permission dialog; the answers are full-width buttons and the card fits the screen.
dialog-question-phone|On a phone: a question whose "Type something" option is a text field.
exited-phone|On a phone: Claude has exited; Restart starts a new conversation, Resume the last one.
switcher-phone|On a phone: the quick switcher, full screen.
terminal-phone|On a phone: the terminal at the phone'"'"'s width, with the bar of special keys (Esc, Tab, Ctrl, arrows, 1-3, Enter, Copy).
terminal-following-phone|On a phone: the desktop typed last, so the window is its size; the phone draws it small and offers "Fit to this screen".
claude-missing-phone|On a phone: the Claude-missing banner and the first steps fit the width.
'

out=docs/tour
mkdir -p "$out"
rm -f "$out"/*.png

echo "== web UI"
scripts/build-web.sh

echo "== browser tests, saving shots to $out"
# -parallel 2: the shots come from a loaded machine's real Chromium; fewer at
# once keeps the tests' deadlines comfortable.
CORRAL_SCREENSHOTS="$PWD/$out" go test -count=1 -parallel 2 -timeout 20m -run "^($tests)\$" ./test/e2e/

echo "== $out.md"
missing=0
{
	echo "# A tour of corral in screenshots"
	echo
	echo "Made by \`scripts/screenshots.sh\` from the browser tests (test/e2e), each picture at a"
	echo "moment a test has just checked, with real Claude Code, tmux and Chromium (only the model"
	echo "is fake). Rerun the script to bring the pictures up to date. Desktop is 1440x900, phone"
	echo "390x844."
	section=""
	while IFS='|' read -r name caption; do
		[[ -z "$name" ]] && continue
		size=${name##*-}
		if [[ "$size" != "$section" ]]; then
			section=$size
			echo
			if [[ "$size" == phone ]]; then echo "## Phone (390x844)"; else echo "## Desktop (1440x900)"; fi
		fi
		if [[ ! -f "$out/$name.png" ]]; then
			echo "screenshots: no test took $name" >&2
			missing=1
		fi
		width=720
		[[ "$size" == phone ]] && width=300
		echo
		echo "**$caption**"
		echo
		echo "<img src=\"tour/$name.png\" width=\"$width\" alt=\"$name\">"
	done <<<"$shots"
} >"$out.md"

# A PNG the table does not name is not in the tour: remove it.
for f in "$out"/*.png; do
	n=$(basename "$f" .png)
	if ! grep -q "^$n|" <<<"$shots"; then
		echo "screenshots: $n is not in the table; removed" >&2
		rm -f "$f"
	fi
done
[[ $missing == 0 ]] || exit 1
du -k "$out"/*.png | sort -n | tail -3
echo "== wrote $out.md and $(ls "$out"/*.png | wc -l) pictures"

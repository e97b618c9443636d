import { useState } from 'preact/hooks';
import { devices, machineMode } from '../store';
import { copyText } from '../terminal';
import { unreachable } from '../reach';

/** The command that installs Claude Code (internal/agent says the same when Start is refused). */
export const CLAUDE_INSTALL = 'npm install -g @anthropic-ai/claude-code';

function Cmd(props: { cmd: string; testid?: string; block?: boolean }) {
  const [done, setDone] = useState(false);
  return (
    <span class={props.block ? 'cmd-line cmd-block' : 'cmd-line'}>
      <code data-testid={props.testid}>{props.cmd}</code>
      <button
        type="button"
        class="btn btn-small"
        aria-label={`Copy the command ${props.cmd}`}
        onClick={async () => {
          setDone(await copyText(props.cmd));
          setTimeout(() => setDone(false), 1500);
        }}
      >
        {done ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
}

/**
 * corral itself cannot be reached (the server is down, or a proxy in front of it says so): one
 * message for the page, with the command that starts it, rather than every row going stale.
 */
export function UnreachableBanner() {
  if (!unreachable.value) return null;
  return (
    <div class="setup-banner setup-down" role="alert" data-testid="unreachable">
      <h2>corral is not reachable</h2>
      <p>
        This page cannot reach corral at {location.host}. On that machine, start it with <Cmd cmd="corral serve" testid="start-command" />{' '}
        (installed as a service: <code>corral service status</code> says how it runs). The page reconnects by itself.
      </p>
    </div>
  );
}

/** Claude Code is missing on a machine: say so on the home screen, with the command, before Start fails. */
export function ClaudeMissingBanner() {
  const missing = devices.value.filter((d) => d.online && d.claude_missing);
  if (missing.length === 0) return null;
  const where = machineMode.value ? ` on ${missing.map((d) => d.name).join(', ')}` : ' on this machine';
  return (
    <div class="setup-banner" role="status" data-testid="claude-missing">
      <h2>Claude Code is not installed{where}</h2>
      <p>
        corral starts Claude Code sessions, and it did not find <code>claude</code> on the PATH. Install it with:
      </p>
      {/* The command on a line of its own, with its button: inline, a phone's width broke the sentence around it. */}
      <Cmd cmd={CLAUDE_INSTALL} testid="claude-install-command" block />
      <p>Then restart corral so that it finds it. Shell sessions work meanwhile.</p>
    </div>
  );
}

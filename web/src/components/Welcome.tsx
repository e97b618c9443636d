import { loaded, openNewSession, sessions, settingsOpen } from '../store';

/** For a newcomer (no sessions yet): what corral does, in three steps, each with its control. */
export function Welcome() {
  if (!loaded.value || sessions.value.length > 0) return null;
  return (
    <section class="welcome" aria-labelledby="welcome-title" data-testid="welcome">
      <h2 id="welcome-title">Get started in three steps</h2>
      <ol class="welcome-steps">
        <li>
          <h3>Start a session</h3>
          <p>Pick a project folder: Claude Code starts there, in tmux, and keeps running when you close this page.</p>
          <button type="button" class="btn btn-primary btn-small" data-testid="welcome-new" onClick={() => openNewSession()}>
            New session
          </button>
        </li>
        <li>
          <h3>Give it work</h3>
          <p>Type a prompt in the timeline, or use the terminal as you would at the machine.</p>
        </li>
        <li>
          <h3>Hear when it needs you</h3>
          <p>A session that asks for permission or finishes turns its dot amber or violet. Turn on notifications to hear it elsewhere.</p>
          <button type="button" class="btn btn-small" onClick={() => (settingsOpen.value = true)}>
            Notification settings
          </button>
        </li>
      </ol>
    </section>
  );
}

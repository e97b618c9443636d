import { useEffect } from 'preact/hooks';
import {
  attention,
  auth,
  bellOpen,
  closeSession,
  helpOpen,
  loaded,
  narrow,
  needsYou,
  newSessionOpen,
  openNewSession,
  selected,
  selectedId,
  settingsOpen,
  sidebarOpen,
  switcherOpen,
} from '../store';
import { dialogSummary } from '../dialog';
import { Icon } from './Icon';
import { NewSessionDialog } from './NewSession';
import { Bell, BellDrawer } from './Bell';
import { ConnIndicator } from './ConnIndicator';
import { HelpDialog } from './HelpDialog';
import { Login } from './Login';
import { SettingsPanel } from './Settings';
import { NotifyOffer } from './NotifyOffer';
import { QuickSwitcher } from './QuickSwitcher';
import { Toasts } from './Toasts';
import { SessionView } from './SessionView';
import { ClaudeMissingBanner, UnreachableBanner } from './SetupBanners';
import { Welcome } from './Welcome';
import { Counts, ListTools, NewSessionButton, SessionList, Sidebar } from './Sidebar';

export function App() {
  const n = attention.value.length;
  const badge = needsYou.value.length > 0 ? 'needs-input' : n > 0 ? 'review' : '';
  // A session that needs you says what it asks in the tab's title: the one
  // open here, else the first.
  const sel = selected.value;
  const asking = sel && sel.status === 'needs-input' ? sel : needsYou.value[0];
  const asks = asking ? `${dialogSummary(asking.waiting_for)} · ${asking.name} · ` : '';
  const title = n > 0 ? `(${n}) ${asks}corral` : 'corral';
  useEffect(() => setTab(title, badge), [title, badge]);

  if (auth.value === 'checking') {
    return (
      <div class="splash" aria-busy="true">
        <img src="/icon.svg" alt="" width={48} height={48} />
      </div>
    );
  }
  if (auth.value === 'login') return <Login />;

  const isNarrow = narrow.value;
  const s = selected.value;
  return (
    <div class={`app${isNarrow ? ' narrow' : ''}`}>
      <TopBar />
      <NotifyOffer />
      <UnreachableBanner />
      <div class="body">
        {!isNarrow && <Sidebar />}
        <main class="main" id="main">
          {s ? (
            <SessionView key={s.id} s={s} />
          ) : selectedId.value && loaded.value ? (
            <Gone />
          ) : selectedId.value ? (
            <div class="empty muted">Loading…</div>
          ) : isNarrow ? (
            <div class="home">
              <ListTools />
              <ClaudeMissingBanner />
              <Welcome />
              <h2 class="sr-only">Sessions</h2>
              <SessionList />
            </div>
          ) : (
            <Empty />
          )}
        </main>
      </div>
      {isNarrow && sidebarOpen.value && selectedId.value && <Drawer />}
      {newSessionOpen.value && <NewSessionDialog />}
      {bellOpen.value && <BellDrawer />}
      {settingsOpen.value && <SettingsPanel />}
      {helpOpen.value && <HelpDialog />}
      {switcherOpen.value && <QuickSwitcher />}
      <Toasts />
    </div>
  );
}

function TopBar() {
  const isNarrow = narrow.value;
  return (
    <header class="topbar">
      {/* The page's one h1, for screen readers (the brand and the session's name show it): panels and groups are h2 below it. */}
      <h1 class="sr-only" data-testid="page-title">
        {selected.value ? `${selected.value.name || selected.value.id} · corral` : 'corral'}
      </h1>
      {isNarrow && selectedId.value && (
        <button
          type="button"
          class="icon-btn"
          aria-label="Sessions"
          aria-expanded={sidebarOpen.value}
          data-testid="menu"
          onClick={() => (sidebarOpen.value = !sidebarOpen.value)}
        >
          <Icon name="menu" size={20} />
        </button>
      )}
      {/* biome-ignore lint/a11y/useValidAnchor: a real link home (it opens in a new tab too); a click stays in the page */}
      <a
        class="brand"
        href="#/"
        onClick={(e) => {
          e.preventDefault();
          closeSession();
        }}
        aria-label="corral home"
      >
        <img src="/icon.svg" alt="" width={20} height={20} />
        <span>corral</span>
      </a>
      {!isNarrow && <Counts />}
      <span class="spacer" />
      <ConnIndicator />
      {isNarrow && <NewSessionButton compact />}
      <Bell />
      <button
        type="button"
        class="icon-btn"
        aria-label="Settings"
        data-testid="settings-button"
        title="Settings (,)"
        onClick={() => (settingsOpen.value = true)}
      >
        <Icon name="gear" size={18} />
      </button>
    </header>
  );
}

function Drawer() {
  const close = () => (sidebarOpen.value = false);
  useEffect(() => {
    const k = (e: KeyboardEvent) => e.key === 'Escape' && close();
    window.addEventListener('keydown', k);
    return () => window.removeEventListener('keydown', k);
  }, []);
  return (
    <div class="drawer-wrap">
      <div class="drawer-scrim" onClick={close} aria-hidden="true" />
      <div class="drawer" role="dialog" aria-modal="true" aria-label="Sessions" data-testid="drawer">
        <Sidebar />
      </div>
    </div>
  );
}

function Empty() {
  const att = attention.value;
  return (
    <div class="empty">
      <img src="/icon.svg" alt="" width={56} height={56} class="empty-logo" />
      <h2 class="empty-title">corral</h2>
      <ClaudeMissingBanner />
      {att.length > 0 ? (
        <p>
          {att.length} session{att.length === 1 ? '' : 's'} waiting for you: pick one on the left.
        </p>
      ) : (
        <p class="muted">Pick a session on the left, or start a new one.</p>
      )}
      <button type="button" class="btn btn-primary" onClick={() => openNewSession()} data-testid="new-session-empty">
        <Icon name="plus" /> New session
      </button>
      <Welcome />
      <p class="muted small">
        Press <kbd>?</kbd> for keyboard shortcuts.
      </p>
    </div>
  );
}

function Gone() {
  return (
    <div class="empty">
      <h2 class="empty-title">Session gone</h2>
      <p class="muted">It was closed or killed.</p>
      <button type="button" class="btn" onClick={closeSession}>
        Back
      </button>
    </div>
  );
}

const BADGE: Record<string, string> = { 'needs-input': '#f5a524', review: '#a78bfa' };

/** The browser tab's icon: corral's, with an amber (needs you) or violet (review) dot. */
function iconURL(kind: string): string {
  if (!kind) return '/icon.svg';
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#151922"/>` +
    `<circle cx="32" cy="32" r="21" fill="none" stroke="#6ea8ff" stroke-width="4" stroke-dasharray="7.7 3.3"/>` +
    `<circle cx="48" cy="16" r="15" fill="${BADGE[kind]}" stroke="#151922" stroke-width="4"/></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

// A new favicon costs the browser a few ms of main thread, and statuses can
// flip every few ms (hooks back to back): applied on every change, the tab
// chrome delayed every later event. So the title and icon are applied at
// once when nothing changed lately, then at most every TAB_EVERY ms, and only
// when they differ. A timer, not requestAnimationFrame: rAF does not run in a
// background tab, which is where the badge matters.
const TAB_EVERY = 100;
const tab = { title: '', icon: '', wantTitle: '', wantIcon: '', last: 0, timer: 0 };

function setTab(title: string, kind: string): void {
  tab.wantTitle = title;
  tab.wantIcon = iconURL(kind);
  if (tab.timer) return;
  const wait = tab.last + TAB_EVERY - performance.now();
  if (wait <= 0) applyTab();
  else tab.timer = window.setTimeout(applyTab, wait);
}

function applyTab(): void {
  tab.timer = 0;
  tab.last = performance.now();
  if (tab.title !== tab.wantTitle) {
    tab.title = tab.wantTitle;
    document.title = tab.title;
  }
  if (tab.icon !== tab.wantIcon) {
    const link = document.querySelector<HTMLLinkElement>('link[rel="icon"][type="image/svg+xml"]');
    if (link) {
      tab.icon = tab.wantIcon;
      link.href = tab.icon;
    }
  }
}

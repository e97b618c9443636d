import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import {
  devicesLoaded,
  knownDevices,
  loadDevices,
  machineMode,
  newSessionDevice,
  newSessionOpen,
  now,
  openSession,
  selected,
  upsertSession,
} from '../store';
import type { CreateRequest, Device, DirListing, Resumable } from '../types';
import { ago, baseName, bytes, oneLine, shortDir } from '../util';
import { Icon } from './Icon';
import { Modal } from './Modal';

type Step = 'device' | 'dir' | 'start';

export function NewSessionDialog() {
  // On a hub (several machines) it asks which machine, and always says it to the server.
  const multi = machineMode.value;
  const devs = knownDevices.value;
  const [device, setDevice] = useState<string>(() => {
    const list = knownDevices.peek();
    const on = (n: string | undefined) => !!n && list.some((d) => d.name === n && d.online);
    const preset = newSessionDevice.peek();
    if (on(preset)) return preset;
    const cur = selected.peek()?.device;
    if (on(cur)) return cur!;
    const online = list.filter((d) => d.online);
    return online.length === 1 ? online[0]!.name : '';
  });
  const [step, setStep] = useState<Step>(() => {
    if (!multi) return 'dir';
    const list = knownDevices.peek();
    // Picked already (a machine's + in the sidebar), or the only machine there is.
    if (device && (newSessionDevice.peek() === device || list.length === 1)) return 'dir';
    return 'device';
  });
  const [dir, setDir] = useState('');
  useEffect(() => {
    if (multi) void loadDevices();
  }, []);
  const close = () => {
    newSessionOpen.value = false;
    newSessionDevice.value = '';
  };

  return (
    <Modal title="New session" onClose={close} testid="new-session-dialog" class="new-session">
      {multi && (
        <ol class="steps" aria-label="Steps">
          <li class={step === 'device' ? 'current' : ''}>{step !== 'device' && device ? `Machine: ${device}` : 'Machine'}</li>
          <li class={step === 'dir' ? 'current' : ''}>Folder</li>
          <li class={step === 'start' ? 'current' : ''}>Start</li>
        </ol>
      )}
      {step === 'device' && (
        <DevicePicker
          devices={devs}
          value={device}
          onPick={(d) => {
            setDevice(d);
            setStep('dir');
          }}
        />
      )}
      {step === 'dir' && (
        <DirPicker
          device={multi ? device : ''}
          back={multi ? () => setStep('device') : undefined}
          onUse={(p) => {
            setDir(p);
            setStep('start');
          }}
        />
      )}
      {step === 'start' && <StartForm device={multi ? device : ''} dir={dir} back={() => setStep('dir')} done={close} />}
    </Modal>
  );
}

function DevicePicker(props: { devices: Device[]; value: string; onPick: (d: string) => void }) {
  const list = props.devices;
  return (
    <div class="device-picker">
      <p class="muted">Which machine should run it?</p>
      <ul class="pick-list">
        {list.map((d) => {
          const seen = !d.online && d.last_seen ? ago(d.last_seen, now.value) : '';
          const info = [d.hostname && d.hostname !== d.name ? d.hostname : '', d.os, d.version].filter(Boolean).join(' · ');
          return (
            <li key={d.name}>
              <button
                type="button"
                class={`pick pick-device${d.name === props.value ? ' current' : ''}${d.online ? '' : ' pick-offline'}`}
                disabled={!d.online}
                onClick={() => props.onPick(d.name)}
                data-testid="device-option"
                data-device={d.name}
                data-online={d.online ? 'true' : 'false'}
                title={d.online ? `Start it on ${d.name}` : `${d.name} is offline`}
              >
                <span class={`dev-state ${d.online ? 'dev-online' : 'dev-offline'}`} aria-hidden="true" />
                <span class="pick-main">
                  <span class="pick-name">{d.name}</span>
                  {info && <span class="pick-info muted small">{info}</span>}
                </span>
                <span class={`pick-state small${d.online ? ' ok-text' : ' muted'}`}>
                  {d.online ? 'online' : seen ? `offline · seen ${seen}` : d.last_seen ? 'offline' : 'never connected'}
                </span>
              </button>
            </li>
          );
        })}
      </ul>
      {list.length === 0 && (
        <p class="muted">
          {devicesLoaded.value ? (
            <>
              No machines yet. Add one on the hub with <code>corral hub device add NAME --user USER</code>, then run{' '}
              <code>corral agent</code> on it.
            </>
          ) : (
            'Loading machines…'
          )}
        </p>
      )}
      {list.length > 0 && list.every((d) => !d.online) && <p class="warn-text small">No machine is online right now.</p>}
    </div>
  );
}

function DirPicker(props: { device: string; back?: () => void; onUse: (path: string) => void }) {
  const [listing, setListing] = useState<DirListing | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState('');
  const [filter, setFilter] = useState('');
  const [hidden, setHidden] = useState(false);
  const [typed, setTyped] = useState('');

  const load = (path: string) => {
    setLoading(true);
    setError('');
    api
      .dirs(path, props.device || undefined)
      .then((l) => {
        setListing(l);
        setTyped(l.path);
        setFilter('');
      })
      .catch((e) => setError(errorText(e)))
      .finally(() => setLoading(false));
  };
  useEffect(() => load(''), [props.device]);

  const crumbs = useMemo(() => {
    if (!listing) return [];
    const parts = listing.path.split('/').filter(Boolean);
    const out = [{ name: '/', path: '/' }];
    let acc = '';
    for (const p of parts) {
      acc += '/' + p;
      out.push({ name: p, path: acc });
    }
    return out;
  }, [listing?.path]);

  const entries = (listing?.entries ?? [])
    .filter((e) => e.is_dir)
    .filter((e) => hidden || !e.name.startsWith('.'))
    .filter((e) => !filter || e.name.toLowerCase().includes(filter.toLowerCase()))
    .sort((a, b) => a.name.localeCompare(b.name));

  return (
    <div class="dir-picker">
      <form
        class="path-row"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed.trim()) load(typed.trim());
        }}
      >
        {props.back && (
          <button type="button" class="icon-btn" aria-label="Back to machines" onClick={props.back}>
            <Icon name="back" />
          </button>
        )}
        <input
          class="input"
          value={typed}
          aria-label="Path"
          placeholder="/path/to/project"
          onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="btn">
          Go
        </button>
      </form>
      {listing && (
        <nav class="crumbs" aria-label="Breadcrumbs">
          {listing.parent && (
            <button type="button" class="icon-btn" aria-label="Parent folder" onClick={() => load(listing.parent!)}>
              <Icon name="up" size={14} />
            </button>
          )}
          {crumbs.map((c, i) => (
            <span key={c.path}>
              {i > 1 && <span class="crumb-sep">/</span>}
              <button
                type="button"
                class="crumb"
                aria-current={i === crumbs.length - 1 ? 'location' : undefined}
                onClick={() => load(c.path)}
              >
                {c.name}
              </button>
            </span>
          ))}
        </nav>
      )}
      {error && (
        <div class="form-error" role="alert">
          {error}
        </div>
      )}
      <div class="dir-tools">
        <input
          class="input input-small"
          value={filter}
          placeholder="Filter"
          aria-label="Filter folders"
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
        <label class="check">
          <input type="checkbox" checked={hidden} onChange={(e) => setHidden((e.target as HTMLInputElement).checked)} /> hidden
        </label>
      </div>
      <ul class="dir-list" aria-busy={loading} aria-label="Folders">
        {loading && !listing && <li class="muted">Loading…</li>}
        {listing && entries.length === 0 && <li class="muted dir-none">No folders here.</li>}
        {entries.map((e) => (
          <li key={e.path}>
            <button type="button" class="dir-entry" onClick={() => load(e.path)} data-testid="dir-entry" data-path={e.path}>
              <Icon name="folder" />
              <span>{e.name}</span>
            </button>
          </li>
        ))}
      </ul>
      <div class="modal-actions">
        <span class="muted small dir-current" title={listing?.path}>
          {listing ? shortDir(listing.path) : ''}
        </span>
        <button
          type="button"
          class="btn btn-primary"
          disabled={!listing || loading}
          onClick={() => listing && props.onUse(listing.path)}
          data-testid="use-folder"
        >
          Use this folder
        </button>
      </div>
    </div>
  );
}

type Choice = { kind: 'claude' } | { kind: 'shell' } | { kind: 'resume'; id: string };

function StartForm(props: { device: string; dir: string; back: () => void; done: () => void }) {
  const [name, setName] = useState(baseName(props.dir));
  const [choice, setChoice] = useState<Choice>({ kind: 'claude' });
  const [resumable, setResumable] = useState<Resumable[] | null>(null);
  const [rerr, setRerr] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  // A new git worktree of the folder's repository, on a new branch (docs/git.md).
  const [inWorktree, setInWorktree] = useState(false);
  const [branch, setBranch] = useState('');

  useEffect(() => {
    api
      .resumable(props.dir, props.device || undefined)
      .then((l) => setResumable((l ?? []).sort((a, b) => Date.parse(b.last_activity) - Date.parse(a.last_activity))))
      .catch((e) => {
        setResumable([]);
        setRerr(errorText(e));
      });
  }, [props.dir, props.device]);

  const create = () => {
    setBusy(true);
    setError('');
    const body: CreateRequest = { dir: props.dir };
    if (name.trim()) body.name = name.trim();
    if (choice.kind === 'shell') body.shell = true;
    if (choice.kind === 'resume') body.resume = choice.id;
    if (inWorktree && choice.kind !== 'resume') {
      body.worktree = { branch: branch.trim() };
      // Named after the branch unless the person named it.
      if (name.trim() === baseName(props.dir)) delete body.name;
    }
    if (props.device) body.device = props.device;
    // A first guess at the size; the terminal fits itself when it attaches.
    const main = document.querySelector('.main');
    const w = main ? main.clientWidth : window.innerWidth;
    const h = main ? main.clientHeight : window.innerHeight;
    body.cols = Math.max(40, Math.min(400, Math.floor((w - 24) / 7.8)));
    body.rows = Math.max(10, Math.min(200, Math.floor((h - 160) / 15.5)));
    api
      .create(body)
      .then((s) => {
        if (s && s.id) {
          upsertSession(s);
          props.done();
          openSession(s.id);
        } else {
          props.done();
        }
      })
      .catch((e) => {
        setError(errorText(e));
        setBusy(false);
      });
  };

  const radio = (c: Choice, label: string, desc: string, testid: string, r?: Resumable) => {
    const on = choice.kind === c.kind && (c.kind !== 'resume' || (choice.kind === 'resume' && choice.id === c.id));
    const running = !!r && (r.running || !!r.running_in);
    const where = r?.running_in ? r.running_name || r.running_in : '';
    return (
      <div class={`choice-row${running ? ' running' : ''}`} key={r?.id ?? testid}>
        <label class={`choice${on ? ' on' : ''}`} data-testid={testid} data-id={r?.id} data-running={running ? 'true' : undefined}>
          <input type="radio" name="start" checked={on} onChange={() => setChoice(c)} />
          <span class="choice-main">
            <span class="choice-label">{label}</span>
            {desc && <span class="choice-desc">{desc}</span>}
            {running && (
              <span class="choice-running" data-testid="resumable-running">
                {where ? `Running now in ${where}` : 'Running now in a Claude outside corral'}
              </span>
            )}
          </span>
        </label>
        {r?.running_in && (
          <button
            type="button"
            class="btn btn-small switch-to"
            data-testid="switch-to"
            aria-label={`Switch to ${where}, which runs this conversation`}
            onClick={() => {
              props.done();
              openSession(r.running_in!);
            }}
          >
            Switch to it
          </button>
        )}
      </div>
    );
  };

  return (
    <form
      class="start-form"
      onSubmit={(e) => {
        e.preventDefault();
        create();
      }}
    >
      <div class="start-dir">
        <button type="button" class="icon-btn" aria-label="Back to folders" onClick={props.back}>
          <Icon name="back" />
        </button>
        <span title={props.dir}>
          {props.device ? `${props.device}: ` : ''}
          {shortDir(props.dir)}
        </span>
      </div>
      <label class="field">
        <span>Name</span>
        <input
          class="input"
          value={name}
          maxLength={200}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
          data-testid="new-session-name"
        />
      </label>
      <fieldset class="choices">
        <legend>Start</legend>
        {radio({ kind: 'claude' }, 'New Claude session', 'A fresh conversation', 'choice-new')}
        {radio({ kind: 'shell' }, 'Plain shell', 'No Claude, just a terminal', 'choice-shell')}
        <div class="resume-head">Resume an earlier Claude session</div>
        {resumable === null && <div class="muted small">Looking for earlier sessions…</div>}
        {resumable !== null && resumable.length === 0 && (
          <div class="muted small">{rerr ? `Could not list them: ${rerr}` : 'None in this folder.'}</div>
        )}
        <div class="resume-list">
          {resumable?.map((r) =>
            radio(
              { kind: 'resume', id: r.id },
              oneLine(r.first_prompt || '(no prompt)', 120),
              [ago(r.last_activity), bytes(r.size), r.last_prompt ? `last: ${oneLine(r.last_prompt, 60)}` : ''].filter(Boolean).join(' · '),
              'resumable',
              r,
            ),
          )}
        </div>
      </fieldset>
      {choice.kind !== 'resume' && (
        <fieldset class="choices worktree-choice">
          <label class="check">
            <input
              type="checkbox"
              checked={inWorktree}
              onChange={(e) => setInWorktree((e.target as HTMLInputElement).checked)}
              data-testid="new-worktree"
            />
            <span>In a new git worktree of this repository</span>
          </label>
          {inWorktree && (
            <label class="field">
              <span>New branch</span>
              <input
                class="input input-mono"
                value={branch}
                maxLength={200}
                placeholder="feature/my-change"
                autoCapitalize="none"
                spellcheck={false}
                onInput={(e) => setBranch((e.target as HTMLInputElement).value)}
                data-testid="worktree-branch"
              />
              <span class="muted small">
                corral runs git worktree add in .claude/worktrees/ and starts there; the branch starts at HEAD.
              </span>
            </label>
          )}
        </fieldset>
      )}
      {error && (
        <div class="form-error" role="alert" data-testid="create-error">
          {error}
        </div>
      )}
      <div class="modal-actions">
        <button
          type="submit"
          class="btn btn-primary"
          disabled={busy || (inWorktree && choice.kind !== 'resume' && !branch.trim())}
          data-testid="create-session"
        >
          {busy ? 'Starting…' : choice.kind === 'resume' ? 'Resume' : 'Start'}
        </button>
      </div>
    </form>
  );
}

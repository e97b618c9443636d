import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api';
import type { DownloadResult, Session } from '../types';
import { bytes, shortDir } from '../util';
import { Icon } from './Icon';
import { Modal } from './Modal';

type Outcome =
  | { kind: 'ok'; res: DownloadResult; replaced: boolean }
  | { kind: 'conflict'; message: string }
  | { kind: 'error'; status: number; code: string; title: string; message: string };

/** What went wrong, in words (docs/web-protocol.md: downloads). */
function describe(e: unknown): Outcome {
  if (!(e instanceof ApiError)) return { kind: 'error', status: 0, code: 'error', title: 'The download failed', message: errorText(e) };
  const m = e.message;
  switch (e.status) {
    case 409:
      return { kind: 'conflict', message: m };
    case 413:
      return { kind: 'error', status: 413, code: e.code, title: 'The file is too large', message: m };
    case 403:
      return {
        kind: 'error',
        status: 403,
        code: e.code,
        title: /leaves the directory|escape/i.test(m) ? "That file name points outside the session's folder" : 'Access was refused',
        message: m,
      };
    case 400:
      return { kind: 'error', status: 400, code: e.code, title: 'That URL (or file name) does not work', message: m };
    case 404:
      return { kind: 'error', status: 404, code: e.code, title: 'Nothing found at that URL', message: m };
    case 503:
      return { kind: 'error', status: 503, code: e.code, title: 'Not reachable now', message: m };
    case 0:
      return { kind: 'error', status: 0, code: e.code, title: 'No connection to corral', message: m };
  }
  return { kind: 'error', status: e.status, code: e.code, title: 'The download failed', message: m };
}

/** "Fetch a file into the folder" (of the session): a URL (http(s) or s3://) and an optional name. */
export function DownloadDialog(props: { s: Session; close: () => void }) {
  const s = props.s;
  const [url, setUrl] = useState('');
  const [path, setPath] = useState('');
  const [busy, setBusy] = useState(false);
  const [out, setOut] = useState<Outcome | null>(null);
  const urlRef = useRef<HTMLInputElement>(null);
  useEffect(() => urlRef.current?.focus(), []);

  const run = (overwrite: boolean) => {
    const u = url.trim();
    if (!u || busy) return;
    setBusy(true);
    setOut(null);
    const p = path.trim();
    api
      .download(s.id, { url: u, ...(p ? { path: p } : {}), ...(overwrite ? { overwrite: true } : {}) })
      .then((res) => setOut({ kind: 'ok', res, replaced: overwrite }))
      .catch((e) => setOut(describe(e)))
      .finally(() => setBusy(false));
  };

  const edited = () => {
    if (out && out.kind !== 'ok') setOut(null);
  };

  return (
    <Modal title="Fetch a file into the folder" onClose={props.close} testid="download-dialog" class="download">
      <form
        class="download-form"
        onSubmit={(e) => {
          e.preventDefault();
          run(false);
        }}
      >
        <p class="muted small">
          Into <code title={s.dir}>{shortDir(s.dir)}</code>
          {s.device ? ` on ${s.device}` : ''}: the machine fetches it (a presigned http(s) URL, or s3://bucket/key with its own
          credentials).
        </p>
        <label class="field">
          <span>URL</span>
          <input
            ref={urlRef}
            class="input"
            type="text"
            inputMode="url"
            autoComplete="off"
            spellcheck={false}
            placeholder="https://… or s3://bucket/key"
            value={url}
            required
            data-testid="download-url"
            onInput={(e) => {
              setUrl((e.target as HTMLInputElement).value);
              edited();
            }}
          />
        </label>
        <label class="field">
          <span>
            File name <span class="muted">(optional; relative to the folder, default: the URL's name)</span>
          </span>
          <input
            class="input"
            type="text"
            autoComplete="off"
            spellcheck={false}
            placeholder="data/input.csv"
            value={path}
            data-testid="download-path"
            onInput={(e) => {
              setPath((e.target as HTMLInputElement).value);
              edited();
            }}
          />
        </label>
        {out && <OutcomeView out={out} busy={busy} replace={() => run(true)} />}
        <div class="modal-actions">
          <button type="button" class="btn btn-cancel" onClick={props.close}>
            {out?.kind === 'ok' ? 'Close' : 'Cancel'}
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy || !url.trim() || !!s.offline} data-testid="download-submit">
            {busy ? 'Fetching…' : out?.kind === 'ok' ? 'Fetch another' : 'Fetch'}
          </button>
        </div>
      </form>
    </Modal>
  );
}

function OutcomeView(props: { out: Outcome; busy: boolean; replace: () => void }) {
  const o = props.out;
  if (o.kind === 'ok') {
    return (
      <div class="dl-result dl-ok" role="status" data-testid="download-result" data-state="ok" data-path={o.res.path}>
        <Icon name="check" size={16} />
        <div class="dl-result-main">
          <div>
            {o.replaced ? 'Replaced ' : 'Saved '}
            <code class="dl-path">{o.res.path}</code> ({bytes(o.res.size)})
          </div>
          <div class="muted small dl-sha" title="SHA-256 of the file">
            sha256 <code>{o.res.sha256}</code>
          </div>
        </div>
      </div>
    );
  }
  if (o.kind === 'conflict') {
    return (
      <div class="dl-result dl-conflict" role="alert" data-testid="download-result" data-state="conflict" data-status="409">
        <div class="dl-result-main">
          <strong>A file with that name is already there.</strong>
          <div class="muted small">{o.message}</div>
        </div>
        <button type="button" class="btn btn-danger" disabled={props.busy} onClick={props.replace} data-testid="download-replace">
          {props.busy ? 'Replacing…' : 'Replace'}
        </button>
      </div>
    );
  }
  return (
    <div
      class="dl-result dl-error"
      role="alert"
      data-testid="download-result"
      data-state="error"
      data-status={String(o.status)}
      data-code={o.code}
    >
      <div class="dl-result-main">
        <strong>{o.title}</strong>
        <div class="muted small">{o.message}</div>
      </div>
    </div>
  );
}

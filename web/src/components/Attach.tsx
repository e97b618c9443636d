import { useRef, useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api';
import { Icon } from './Icon';
import type { Session } from '../types';

/**
 * The largest file the dashboard sends: it goes as a data: URL in one request, which the server
 * (1 MiB bodies) and the hub's link (1 MiB frames) bound; base64 takes 4/3 of it.
 */
export const MAX_ATTACH = 700 * 1024;

function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[^\w.-]+/g, '_')
    .replace(/^[.-]+/, '')
    .slice(0, 100);
  return clean || 'file';
}

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

function dataURL(f: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error ?? new Error('the file could not be read'));
    r.readAsDataURL(f);
  });
}

/**
 * Save a file into the session's folder (the download op with a data: URL, no overwrite: a name
 * taken gets -1, -2, …) and return its path there.
 */
export async function attachFile(s: Session, f: File, pasted: boolean): Promise<string> {
  if (f.size > MAX_ATTACH)
    throw new Error(`${f.name || 'the file'} is ${Math.ceil(f.size / 1024)} KiB; at most ${MAX_ATTACH / 1024} KiB can be sent from here`);
  const url = await dataURL(f);
  const ext = (/\/(png|jpe?g|gif|webp)$/.exec(f.type)?.[1] ?? 'png').replace('jpeg', 'jpg');
  const name = pasted ? `screenshot-${stamp(new Date())}.${ext}` : safeName(f.name);
  const dot = name.lastIndexOf('.');
  const [stem, suffix] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let i = 0; i < 20; i++) {
    const path = i === 0 ? name : `${stem}-${i}${suffix}`;
    try {
      const res = await api.download(s.id, { url, path });
      return res.path || path;
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) continue;
      throw e;
    }
  }
  throw new Error(`${name} and its numbered names are taken`);
}

/** The prompt box's "Attach a file" button; the box also takes a pasted image (onPaste below). */
export function AttachButton(props: { s: Session; disabled: boolean; onAttached: (path: string) => void; onError: (msg: string) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const pick = async (files: FileList | null) => {
    const f = files?.[0];
    if (!f) return;
    setBusy(true);
    try {
      props.onAttached(await attachFile(props.s, f, false));
    } catch (e) {
      props.onError(errorText(e));
    } finally {
      setBusy(false);
      if (input.current) input.current.value = '';
    }
  };
  return (
    <>
      <input ref={input} type="file" hidden data-testid="attach-input" onChange={(e) => void pick((e.target as HTMLInputElement).files)} />
      <button
        type="button"
        class="btn btn-ghost attach-btn"
        disabled={props.disabled || busy}
        aria-label="Attach a file: save it in the session's folder and name it in the prompt"
        title="Attach a file (or paste a screenshot into the box): saved in the session's folder"
        data-testid="attach"
        onClick={() => input.current?.click()}
      >
        {/* An SVG, not the emoji: the bundled fonts have no paperclip glyph (a tofu box). */}
        {busy ? '…' : <Icon name="paperclip" size={16} />}
      </button>
    </>
  );
}

/** The image in a paste, if any. */
export function pastedImage(e: ClipboardEvent): File | null {
  for (const it of e.clipboardData?.items ?? []) {
    if (it.kind === 'file' && it.type.startsWith('image/')) return it.getAsFile();
  }
  return null;
}

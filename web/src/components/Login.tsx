// The login screen: a password (and a user name on a hub) or an API token.

import { useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api';
import { loggedIn } from '../auth';
import { multiUser, passwordSet } from '../store';

type LoginMode = 'password' | 'token';

export function Login() {
  const multi = multiUser.value;
  // A password login is possible on a hub (its users have passwords) or once `corral passwd` set one.
  const pwPossible = multi || passwordSet.value !== false;
  const [mode, setMode] = useState<LoginMode>(pwPossible ? 'password' : 'token');
  const [user, setUser] = useState('');
  const [pw, setPw] = useState('');
  const [token, setToken] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const m: LoginMode = pwPossible ? mode : 'token';
  const ready = m === 'token' ? !!token.trim() : !!pw && (!multi || !!user.trim());
  const submit = (e: Event) => {
    e.preventDefault();
    if (!ready || busy) return;
    setBusy(true);
    setErr('');
    const body = m === 'token' ? { token: token.trim() } : multi ? { user: user.trim(), password: pw } : { password: pw };
    api
      .login(body)
      .then(() => {
        setPw('');
        setToken('');
        return loggedIn();
      })
      .catch((x) => {
        setErr(m === 'token' && x instanceof ApiError && x.status === 401 ? 'That token is not valid.' : errorText(x));
        setBusy(false);
      });
  };
  const switchTo = (next: LoginMode) => {
    setMode(next);
    setErr('');
  };
  return (
    <main class="login" data-testid="login" data-multi-user={multi ? 'true' : 'false'}>
      <div class="login-box">
        <div class="brand brand-big">
          <img src="/icon.svg" alt="" width={40} height={40} />
          <span>corral</span>
        </div>
        <form onSubmit={submit} class="login-form" data-mode={m}>
          {m === 'password' ? (
            <>
              {multi && (
                <label class="field">
                  <span>User name</span>
                  <input
                    class="input"
                    type="text"
                    name="username"
                    autoComplete="username"
                    autoCapitalize="none"
                    autoCorrect="off"
                    spellcheck={false}
                    value={user}
                    autoFocus
                    data-testid="login-user"
                    onInput={(e) => setUser((e.target as HTMLInputElement).value)}
                  />
                </label>
              )}
              <label class="field">
                <span>Password</span>
                <input
                  class="input"
                  type="password"
                  name="password"
                  autoComplete="current-password"
                  value={pw}
                  autoFocus={!multi}
                  data-testid="password"
                  onInput={(e) => setPw((e.target as HTMLInputElement).value)}
                />
              </label>
            </>
          ) : (
            <label class="field">
              <span>API token</span>
              <input
                class="input input-mono"
                type="password"
                name="token"
                autoComplete="off"
                spellcheck={false}
                value={token}
                autoFocus
                data-testid="login-token"
                onInput={(e) => setToken((e.target as HTMLInputElement).value)}
              />
            </label>
          )}
          {err && (
            <p class="form-error" role="alert" data-testid="login-error">
              {err}
            </p>
          )}
          <button type="submit" class="btn btn-primary" disabled={busy || !ready} data-testid="login-submit">
            {busy ? 'Logging in…' : 'Log in'}
          </button>
        </form>
        {pwPossible && (
          <button
            type="button"
            class="link-btn login-switch"
            data-testid={m === 'password' ? 'login-with-token' : 'login-with-password'}
            onClick={() => switchTo(m === 'password' ? 'token' : 'password')}
          >
            {m === 'password' ? 'Log in with a token' : multi ? 'Log in with a user name and password' : 'Log in with the password'}
          </button>
        )}
        <p class="muted small login-hint">
          {multi ? (
            <>
              An API token comes from <code>corral hub user add</code> or <code>corral hub user token NAME</code> on the hub.
            </>
          ) : (
            <>
              {m === 'token' ? 'Paste an API token (' : 'Or open a login link: '}
              {m === 'token' ? (
                <>
                  <code>corral token rotate</code>) or the token of a login link, or open the link: it logs this browser in.
                </>
              ) : (
                <>
                  <code>corral serve</code> prints one at start, <code>corral login-link</code> makes another. A link works once, for 10
                  minutes.
                </>
              )}
            </>
          )}
        </p>
      </div>
    </main>
  );
}

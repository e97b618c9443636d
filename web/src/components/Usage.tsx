import type { Session } from '../types';
import { cost, isObject, modelName, pct, tokens } from '../util';

export function ContextBar(props: { percent: number | undefined; label?: boolean }) {
  const p = props.percent;
  if (p === undefined || p === null || !Number.isFinite(p)) return null;
  const v = Math.max(0, Math.min(100, p));
  const lvl = v >= 90 ? 'crit' : v >= 75 ? 'warn' : 'ok';
  return (
    <span class="ctx-bar-wrap" title={`Context window: ${pct(p)} used`}>
      <span
        class={`ctx-bar ctx-${lvl}`}
        role="meter"
        aria-label="Context window used"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(v)}
      >
        <span class="ctx-fill" style={{ width: `${v}%` }} />
      </span>
      {props.label !== false && <span class="ctx-num">{pct(p)}</span>}
    </span>
  );
}

const humanKey = (k: string) => k.replace(/_/g, ' ').replace(/\b(\w)/, (c) => c.toUpperCase());

function timeValue(v: unknown): string {
  let ms = 0;
  if (typeof v === 'number') ms = v > 1e12 ? v : v * 1000;
  else if (typeof v === 'string') ms = Date.parse(v);
  if (!ms || !Number.isFinite(ms)) return String(v);
  return new Date(ms).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });
}

function percentOf(o: Record<string, unknown>): number | undefined {
  for (const k of ['used_percentage', 'utilization', 'percent_used', 'used_percent', 'percentage']) {
    const v = o[k];
    if (typeof v === 'number') return k === 'utilization' && v <= 1 ? v * 100 : v;
  }
  return undefined;
}

/** Claude's rate_limits object, rendered as it comes (bars where a percentage shows). */
export function RateLimits(props: { value: unknown }) {
  const v = props.value;
  if (v === undefined || v === null) return null;
  if (!isObject(v)) return <code class="small">{JSON.stringify(v)}</code>;
  return (
    <dl class="rate-limits">
      {Object.entries(v).map(([k, x]) => {
        if (isObject(x)) {
          const p = percentOf(x);
          const rest = Object.entries(x).filter(
            ([kk]) => !['used_percentage', 'utilization', 'percent_used', 'used_percent', 'percentage'].includes(kk),
          );
          return (
            <div class="rl-row" key={k}>
              <dt>{humanKey(k)}</dt>
              <dd>
                {p !== undefined && <ContextBar percent={p} />}
                {rest.map(([kk, vv]) => (
                  <span class="rl-kv" key={kk}>
                    {humanKey(kk)}:{' '}
                    {/reset/i.test(kk) ? timeValue(vv) : isObject(vv) || Array.isArray(vv) ? JSON.stringify(vv) : String(vv)}
                  </span>
                ))}
              </dd>
            </div>
          );
        }
        return (
          <div class="rl-row" key={k}>
            <dt>{humanKey(k)}</dt>
            <dd>{/reset/i.test(k) ? timeValue(x) : Array.isArray(x) ? JSON.stringify(x) : String(x)}</dd>
          </div>
        );
      })}
    </dl>
  );
}

/** Model, context window, cost, tokens and rate limits. */
export function UsagePanel(props: { s: Session }) {
  const u = props.s.usage ?? {};
  const model = modelName(props.s);
  return (
    <section class="usage-panel" aria-label="Usage" data-testid="usage-panel">
      <dl class="usage-grid">
        <div>
          <dt>Model</dt>
          <dd title={u.model}>{model || '—'}</dd>
        </div>
        <div>
          <dt>Context</dt>
          <dd>
            {u.context_percent !== undefined ? <ContextBar percent={u.context_percent} /> : '—'}
            {u.context_size ? <span class="muted small"> of {tokens(u.context_size)}</span> : null}
          </dd>
        </div>
        <div>
          <dt title="Claude's own count for the whole session (its status line)">Cost</dt>
          <dd>{u.cost_usd !== undefined ? cost(u.cost_usd) : '—'}</dd>
        </div>
        {u.cost_day && (
          <div>
            <dt>Today</dt>
            <dd
              data-testid="usage-today"
              title={`The API responses of ${u.cost_day} (the machine's local day) in the transcript, at Anthropic's list prices${u.today_unpriced ? `; ${u.today_unpriced} of a model without a known price left out` : ''}`}
            >
              {cost(u.cost_today_usd ?? 0)}
            </dd>
          </div>
        )}
        <div>
          <dt>Tokens</dt>
          <dd class="tok">
            <span title="input">in {tokens(u.input_tokens)}</span>
            <span title="output">out {tokens(u.output_tokens)}</span>
            <span title="cache read">cache r {tokens(u.cache_read_tokens)}</span>
            <span title="cache creation">cache w {tokens(u.cache_creation_tokens)}</span>
          </dd>
        </div>
      </dl>
      {u.rate_limits !== undefined && u.rate_limits !== null && (
        <div class="usage-rl">
          <h3>Rate limits</h3>
          <RateLimits value={u.rate_limits} />
        </div>
      )}
    </section>
  );
}

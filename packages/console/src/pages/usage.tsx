// Usage over time (docs/usage.md): the flag page's chart of evaluations per variant, with a range picker,
// and the flag list's sparklines. Drawn as SVG in the theme's colours (light and dark), each described in
// words (the chart's totals as its label, every bucket in a table under it) for screen readers.
import type { Flag, StaleReason, UsageSeries, UsageStep } from "@flagstaff/sdk";
import { useId } from "react";
import { ErrorText, useApp, useData } from "../ui.js";
import { oneOf, useUrlQuery } from "../url-state.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The ranges offered: how far back, by which step. */
const RANGES = {
  "1h": { label: "Last hour, by minute", step: "minute", span: HOUR },
  "24h": { label: "Last 24 hours, by hour", step: "hour", span: DAY },
  "7d": { label: "Last 7 days, by hour", step: "hour", span: 7 * DAY },
  "30d": { label: "Last 30 days, by day", step: "day", span: 30 * DAY },
  "90d": { label: "Last 90 days, by day", step: "day", span: 90 * DAY },
} as const satisfies Record<string, { label: string; step: UsageStep; span: number }>;
type RangeId = keyof typeof RANGES;
const RANGE_IDS = Object.keys(RANGES) as RangeId[];
const STEP_MS: Record<UsageStep, number> = { minute: MINUTE, hour: HOUR, day: DAY };

/** The colour of a variant: the flag's variants in their order, `(error)` muted. */
function colourOf(variant: string, order: readonly string[]): string {
  if (variant === "(error)") return "var(--muted)";
  const at = order.indexOf(variant);
  return `var(--series-${((at === -1 ? order.length : at) % 6) + 1})`;
}

const count = (n: number) => n.toLocaleString("en");

/** A bucket's start as the chart's labels show it: the time for minutes and hours, the date for days. */
function bucketLabel(at: string, step: UsageStep): string {
  const date = new Date(at);
  return step === "day"
    ? date.toLocaleDateString(undefined, { month: "short", day: "numeric" })
    : date.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** A flag's usage: evaluations per variant over time in the environment shown, with a range picker. */
export function UsagePanel(props: { flag: Flag }) {
  const { conn, project, environment } = useApp();
  const [query, setQuery] = useUrlQuery();
  const rangeId = oneOf(query.get("range"), RANGE_IDS, "24h");
  const range = RANGES[rangeId];
  const usage = useData(
    () => {
      // Up to the end of the bucket under way, so that the last bar is now's.
      const stepMs = STEP_MS[range.step];
      const to = Math.floor(Date.now() / stepMs) * stepMs + stepMs;
      return conn.client.flags.usage(project, props.flag.name, {
        step: range.step,
        from: new Date(to - range.span).toISOString(),
        to: new Date(to).toISOString(),
      });
    },
    [project, props.flag.name, rangeId, environment?.id],
    30_000,
  );
  const pickerId = useId();
  return (
    <section className="card" aria-labelledby="flag-usage-title">
      <div className="title-row">
        <h2 id="flag-usage-title">Usage in {environment?.name}</h2>
        <label htmlFor={pickerId} className="visually-hidden">
          Range
        </label>
        <select
          id={pickerId}
          value={rangeId}
          onChange={(e) => setQuery({ range: e.target.value === "24h" ? undefined : e.target.value }, true)}
        >
          {RANGE_IDS.map((id) => (
            <option key={id} value={id}>
              {RANGES[id].label}
            </option>
          ))}
        </select>
      </div>
      <p className="help">
        Evaluations answered with each variant: checks, OpenFeature evaluations, and what SDKs evaluating locally
        reported (every minute).
      </p>
      <ErrorText error={usage.error} />
      {usage.data && <UsageChart series={usage.data} variants={props.flag.variants.map((v) => v.key)} />}
    </section>
  );
}

/** The chart: a stacked bar per bucket, a legend with totals, and the buckets as a table. */
export function UsageChart(props: { series: UsageSeries; variants: readonly string[] }) {
  const { series } = props;
  const titleId = useId();
  const present = Object.keys(series.totals);
  const order = [
    ...props.variants.filter((v) => present.includes(v)),
    ...present.filter((v) => !props.variants.includes(v)),
  ];
  const stacks = series.points.map((p) => Object.values(p.evaluations).reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...stacks);
  const all = stacks.reduce((a, b) => a + b, 0);
  // The bars only: the scale and the times are text beside it, readable at any width.
  const width = 720;
  const height = 160;
  const top = 4;
  const left = 0;
  const plot = height - top - 1;
  const band = (width - left) / Math.max(1, series.points.length);
  const bar = Math.max(1, band * 0.8);
  const words =
    all === 0
      ? "No evaluations in this range."
      : `${count(all)} evaluations: ${order.map((v) => `${v} ${count(series.totals[v] ?? 0)}`).join(", ")}.`;
  const ticks = [0, Math.floor(series.points.length / 2), series.points.length - 1].filter(
    (i, at, list) => i >= 0 && list.indexOf(i) === at,
  );
  const first = series.points[0];
  const middle = series.points[Math.floor(series.points.length / 2)];
  const last = series.points.at(-1);
  return (
    <figure className="usage-chart" aria-labelledby={titleId}>
      {all > 0 && (
        <p className="usage-scale small muted" aria-hidden="true">
          {count(max)} per {series.step} at the top
        </p>
      )}
      <svg
        viewBox={`0 0 ${width} ${height}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={words}
        data-testid="usage-chart"
      >
        <line className="axis" x1={left} x2={width} y1={top + plot} y2={top + plot} />
        {series.points.map((point, i) => {
          let y = top + plot;
          return (
            <g key={point.at}>
              <title>
                {bucketLabel(point.at, series.step)}:{" "}
                {stacks[i] === 0
                  ? "none"
                  : order
                      .filter((v) => point.evaluations[v])
                      .map((v) => `${v} ${count(point.evaluations[v] ?? 0)}`)
                      .join(", ")}
              </title>
              {order.map((variant) => {
                const n = point.evaluations[variant] ?? 0;
                if (n === 0) return null;
                const h = (n / max) * plot;
                y -= h;
                return (
                  <rect
                    key={variant}
                    x={left + i * band + (band - bar) / 2}
                    y={y}
                    width={bar}
                    height={Math.max(h, 0.5)}
                    fill={colourOf(variant, order)}
                  />
                );
              })}
            </g>
          );
        })}
      </svg>
      <div className="usage-times small muted" aria-hidden="true">
        {[first, middle, last].map((point, i) =>
          point === undefined || (i === 1 && ticks.length < 3) ? (
            <span key={i} />
          ) : (
            <span key={i}>{bucketLabel(point.at, series.step)}</span>
          ),
        )}
      </div>
      <figcaption id={titleId}>
        <ul className="usage-legend" aria-label="Variants">
          {order.map((variant) => (
            <li key={variant}>
              <span className="swatch" style={{ background: colourOf(variant, order) }} aria-hidden="true" />
              {variant}: {count(series.totals[variant] ?? 0)}
            </li>
          ))}
          {order.length === 0 && <li className="muted">No evaluations in this range.</li>}
        </ul>
      </figcaption>
      {all > 0 && (
        <details>
          <summary>Show as a table</summary>
          <table>
            <caption className="visually-hidden">Evaluations per {series.step}</caption>
            <thead>
              <tr>
                <th scope="col">{series.step === "day" ? "Day" : "From"}</th>
                {order.map((v) => (
                  <th key={v} scope="col">
                    {v}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {series.points
                .filter((_, i) => (stacks[i] ?? 0) > 0)
                .map((point) => (
                  <tr key={point.at}>
                    <th scope="row">
                      <time dateTime={point.at}>{bucketLabel(point.at, series.step)}</time>
                    </th>
                    {order.map((v) => (
                      <td key={v}>{count(point.evaluations[v] ?? 0)}</td>
                    ))}
                  </tr>
                ))}
            </tbody>
          </table>
        </details>
      )}
    </figure>
  );
}

/** A flag's evaluations per bucket as a small line, labelled with their sum. */
export function Sparkline(props: { values: readonly number[] | undefined; label: string }) {
  const values = props.values;
  if (values === undefined) return <span className="muted">—</span>;
  const sum = values.reduce((a, b) => a + b, 0);
  const max = Math.max(1, ...values);
  const width = 80;
  const height = 20;
  const step = width / Math.max(1, values.length - 1);
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 1 - (v / max) * (height - 2)).toFixed(1)}`);
  return (
    <span className="sparkline-cell">
      <svg
        className="sparkline"
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`${count(sum)} evaluations ${props.label}`}
      >
        <polyline points={points.join(" ")} />
      </svg>{" "}
      <span className="small">{count(sum)}</span>
    </span>
  );
}

/** Why a flag is stale, in words. */
export const STALE_WORDS: Record<StaleReason, string> = {
  unused: "not evaluated any more",
  "one-variant": "answers one variant to everyone",
  lifetime: "outlived its kind's expected lifetime",
};

/** A flag's stale badge with the reason, or nothing. */
export function StaleBadge(props: { flag: Flag }) {
  const { flag } = props;
  if (!flag.stale || flag.staleReason === null) return null;
  const words = STALE_WORDS[flag.staleReason];
  const since = flag.staleSince ? ` since ${new Date(flag.staleSince).toLocaleDateString()}` : "";
  return (
    <span className="badge stale" title={`${words}${since}`} data-testid="stale-badge">
      stale: {words}
    </span>
  );
}

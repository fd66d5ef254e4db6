/** A value as prom-client's registry reads it from a metric's `get()`. */
interface ExportedValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName: string;
}

/** One (method, route, status) series: counts per bucket (not cumulative), sum and count. */
export class DurationSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: { readonly method: string; readonly route: string; readonly status: string },
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(seconds: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= (bounds[i] as number)) {
        (this.counts[i] as number)++;
        break;
      }
    }
    this.sum += seconds;
    this.count++;
  }
}

/**
 * The request-duration histogram, kept by hand rather than with prom-client's Histogram: recording a
 * request must cost the check's fast path a few additions, where prom-client's `observe` builds and
 * hashes a label object every time. Registered in the prom-client registry like any metric, and
 * exported in exactly the format prom-client gives its own histograms (cumulative buckets, `le` first
 * among the labels, up to `+Inf`, then `_sum` and `_count`, per series).
 */
export class RequestDurations {
  readonly type = "histogram" as const;
  readonly aggregator = "sum" as const;
  private readonly series = new Map<string, DurationSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /** The series of one method, route and status; hold on to it to record without a lookup. */
  seriesOf(method: string, route: string, status: number): DurationSeries {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = new DurationSeries(this.bounds, { method, route, status: String(status) });
      this.series.set(key, series);
    }
    return series;
  }

  async get(): Promise<{ name: string; help: string; type: "histogram"; values: ExportedValue[]; aggregator: "sum" }> {
    const values: ExportedValue[] = [];
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        values.push({ labels: { le: bound, ...series.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: "+Inf", ...series.labels }, value: series.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}

// A small Prometheus registry: counters, gauges and histograms with labels, plus metrics read from
// elsewhere at scrape time, rendered in the text exposition format (version 0.0.4).

export type Labels = Record<string, string>;

export interface Sample {
  labels: Labels;
  value: number;
}

type MetricType = "counter" | "gauge" | "histogram";

interface Metric {
  name: string;
  help: string;
  type: MetricType;
  samples(): Promise<{ suffix: string; labels: Labels; value: number }[]>;
}

const namePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

class LabelledValues {
  private readonly values = new Map<string, Sample>();

  add(labels: Labels, amount: number): void {
    const key = keyOf(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += amount;
    else this.values.set(key, { labels: { ...labels }, value: amount });
  }

  set(labels: Labels, value: number): void {
    this.values.set(keyOf(labels), { labels: { ...labels }, value });
  }

  get(labels: Labels): number {
    return this.values.get(keyOf(labels))?.value ?? 0;
  }

  all(): Sample[] {
    return [...this.values.values()];
  }
}

export class Counter {
  private readonly values = new LabelledValues();

  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new Error("a counter only goes up");
    this.values.add(labels, by);
  }

  get(labels: Labels = {}): number {
    return this.values.get(labels);
  }

  /** @internal */
  samples(): Sample[] {
    return this.values.all();
  }
}

export class Gauge {
  private readonly values = new LabelledValues();

  set(labels: Labels, value: number): void {
    this.values.set(labels, value);
  }

  inc(labels: Labels = {}, by = 1): void {
    this.values.add(labels, by);
  }

  dec(labels: Labels = {}, by = 1): void {
    this.values.add(labels, -by);
  }

  get(labels: Labels = {}): number {
    return this.values.get(labels);
  }

  /** @internal */
  samples(): Sample[] {
    return this.values.all();
  }
}

export class Histogram {
  private readonly series = new Map<
    string,
    { labels: Labels; buckets: number[]; sum: number; count: number }
  >();

  constructor(readonly upperBounds: readonly number[]) {}

  observe(labels: Labels, value: number): void {
    const key = keyOf(labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: { ...labels }, buckets: this.upperBounds.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    this.upperBounds.forEach((bound, index) => {
      if (value <= bound) entry.buckets[index] = (entry.buckets[index] ?? 0) + 1;
    });
    entry.sum += value;
    entry.count += 1;
  }

  /** How many observations carried these labels. */
  count(labels: Labels): number {
    return this.series.get(keyOf(labels))?.count ?? 0;
  }

  /** @internal */
  samples(): { suffix: string; labels: Labels; value: number }[] {
    return [...this.series.values()].flatMap(({ labels, buckets, sum, count }) => [
      ...this.upperBounds.map((bound, index) => ({
        suffix: "_bucket",
        labels: { ...labels, le: formatNumber(bound) },
        value: buckets[index] ?? 0,
      })),
      { suffix: "_bucket", labels: { ...labels, le: "+Inf" }, value: count },
      { suffix: "_sum", labels, value: sum },
      { suffix: "_count", labels, value: count },
    ]);
  }
}

export class MetricsRegistry {
  private readonly metrics: Metric[] = [];

  counter(name: string, help: string): Counter {
    const counter = new Counter();
    this.add({ name, help, type: "counter", samples: async () => withSuffix(counter.samples()) });
    return counter;
  }

  gauge(name: string, help: string): Gauge {
    const gauge = new Gauge();
    this.add({ name, help, type: "gauge", samples: async () => withSuffix(gauge.samples()) });
    return gauge;
  }

  histogram(name: string, help: string, upperBounds: readonly number[]): Histogram {
    const histogram = new Histogram([...upperBounds].sort((a, b) => a - b));
    this.add({ name, help, type: "histogram", samples: async () => histogram.samples() });
    return histogram;
  }

  /** A counter or gauge whose values live elsewhere and are read at every scrape. */
  collected(
    name: string,
    help: string,
    type: "counter" | "gauge",
    read: () => Sample[] | Promise<Sample[]>,
  ): void {
    this.add({ name, help, type, samples: async () => withSuffix(await read()) });
  }

  /** The text exposition format; a metric whose reading fails is left out, the others still show. */
  async render(): Promise<string> {
    const blocks = await Promise.all(
      this.metrics.map(async (metric) => {
        let samples: { suffix: string; labels: Labels; value: number }[];
        try {
          samples = await metric.samples();
        } catch {
          return "";
        }
        const lines = [
          `# HELP ${metric.name} ${escapeHelp(metric.help)}`,
          `# TYPE ${metric.name} ${metric.type}`,
        ];
        for (const sample of samples) {
          lines.push(
            `${metric.name}${sample.suffix}${formatLabels(sample.labels)} ${formatNumber(sample.value)}`,
          );
        }
        return lines.join("\n") + "\n";
      }),
    );
    return blocks.join("");
  }

  private add(metric: Metric): void {
    if (!namePattern.test(metric.name)) throw new Error(`not a metric name: ${metric.name}`);
    if (this.metrics.some((existing) => existing.name === metric.name)) {
      throw new Error(`metric ${metric.name} is registered twice`);
    }
    this.metrics.push(metric);
  }
}

function withSuffix(samples: Sample[]) {
  return samples.map((sample) => ({ suffix: "", ...sample }));
}

function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return "";
  return `{${entries.map(([key, value]) => `${key}="${escapeLabelValue(value)}"`).join(",")}}`;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

// The benchmark's outputs: a Markdown table with the ratios ours/each, and an SVG chart. The chart is written by hand
// (a few rectangles and labels): a charting library would bring a browser or a canvas for six bar panels.
export interface Measurement {
  scenario: string;
  scenarioName: string;
  gateway: string;
  rps: number;
  p50: number;
  p99: number;
  gatewayCpuMs: number;
  /** req/s and gateway CPU ms per request of each round, in the order of the rounds. */
  rounds: { rps: number; gatewayCpuMs: number }[];
  subgraphCpuMs: number;
  peakRssMb: number;
  storeCalls: number;
  /** Ours only: the share of its entity cache's and its response cache's lookups that hit, over the rounds. */
  cacheHits?: { entity: number; response: number } | undefined;
  errors: number;
  mismatches: number;
  responseKb: number;
}

export interface RunInfo {
  date: string;
  machine: string;
  rounds: number;
  duration: number;
  connections: number;
  /** How a gateway ran, where the reader must know it to read its row (one line each, below the run's line). */
  notes?: string[];
}

const OURS = 'ours';
const fixed = (value: number, digits: number) => value.toFixed(digits);

/**
 * Ours against another gateway over the whole run, and the range of that ratio round by round (each round runs both
 * back to back, so a round's ratio is the steadiest comparison): how far one run can be trusted.
 */
function ratio(ours: Measurement, other: Measurement, of: (m: Measurement | Measurement['rounds'][number]) => number): string {
  const whole = `${fixed(of(ours) / of(other), 2)}x`;
  const byRound = ours.rounds.flatMap((round, index) => (other.rounds[index] ? [of(round) / of(other.rounds[index])] : []));
  if (byRound.length < 2) return whole;
  return `${whole} (${fixed(Math.min(...byRound), 2)}-${fixed(Math.max(...byRound), 2)})`;
}

const percent = (share: number) => (Number.isNaN(share) ? '-' : `${fixed(share * 100, 0)} %`);
const hits = (shares: Measurement['cacheHits']) => (shares ? `${percent(shares.entity)} / ${percent(shares.response)}` : '');

export function renderTable(measurements: Measurement[], run: RunInfo): string {
  const lines = [
    `${run.date}, ${run.machine}; ${run.rounds} alternating rounds x ${run.duration} s per gateway, ${run.connections} connections. ` +
      'A ratio is over the whole run, with its range round by round in brackets.',
    ...(run.notes ?? []).map((note) => `- ${note}.`),
    '',
    '| scenario | gateway | req/s | p50 ms | p99 ms | gateway CPU ms/req | subgraph CPU ms/req | peak RSS MB | store calls/req | cache hits: entity / response | errors | differing bodies | ours/this req/s | ours/this CPU |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of [...new Set(measurements.map((m) => m.scenario))]) {
    const rows = measurements.filter((m) => m.scenario === scenario);
    const ours = rows.find((m) => m.gateway === OURS);
    rows.forEach((m, index) => {
      const label = index === 0 ? `(${m.scenario}) ${m.scenarioName}, ${fixed(m.responseKb, 1)} KB` : '';
      const ratios = ours && m.gateway !== OURS ? [ratio(ours, m, (x) => x.rps), ratio(ours, m, (x) => x.gatewayCpuMs)] : ['', ''];
      lines.push(
        `| ${label} | ${m.gateway} | ${fixed(m.rps, 0)} | ${m.p50} | ${m.p99} | ${fixed(m.gatewayCpuMs, 2)} | ${fixed(m.subgraphCpuMs, 2)} | ${fixed(m.peakRssMb, 0)} | ${fixed(m.storeCalls, 1)} | ${hits(m.cacheHits)} | ${m.errors} | ${m.mismatches} | ${ratios.join(' | ')} |`,
      );
    });
  }
  return [...lines, ...sizeChanges(measurements)].join('\n');
}

/**
 * Ours' CPU per request against each other gateway in a scenario run at --scale (`h@1000`) beside the same ratio at
 * scale 1 (`h`), and how far it moved: what issue 48 holds within 1.2x. Nothing when no scenario ran at both sizes.
 */
function sizeChanges(measurements: Measurement[]): string[] {
  const rows: string[] = [];
  for (const large of measurements) {
    const [scenario, scale] = large.scenario.split('@');
    if (scale === undefined || large.gateway === OURS) continue;
    const find = (id: string, gateway: string) => measurements.find((m) => m.scenario === id && m.gateway === gateway);
    const [oursLarge, oursSmall, small] = [find(large.scenario, OURS), find(scenario!, OURS), find(scenario!, large.gateway)];
    if (!oursLarge || !oursSmall || !small) continue;
    const [atSize, atOne] = [oursLarge.gatewayCpuMs / large.gatewayCpuMs, oursSmall.gatewayCpuMs / small.gatewayCpuMs];
    rows.push(`| (${scenario}) | ${large.gateway} | ${fixed(atOne, 2)}x | ${fixed(atSize, 2)}x | ${fixed(atSize / atOne, 2)}x |`);
  }
  if (rows.length === 0) return [];
  return [
    '',
    'Ours/this CPU per request at scale 1 and at SEED_SCALE=' + measurements.find((m) => m.scenario.includes('@'))!.scenario.split('@')[1] + ', and its change (at size / at scale 1):',
    '',
    '| scenario | gateway | at scale 1 | at size | change |',
    '|---|---|---:|---:|---:|',
    ...rows,
  ];
}

const COLORS: Record<string, string> = {
  ours: '#1f77b4',
  'hive runtime': '#aec7e8',
  'hive runtime + rust planner': '#ff7f0e',
  '@apollo/gateway': '#7f7f7f',
  grafbase: '#2ca02c',
};
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Two rows of panels, one panel per scenario: requests per second (higher is better), gateway CPU ms per request. */
export function renderChart(measurements: Measurement[], caption: string): string {
  const scenarios = [...new Set(measurements.map((m) => m.scenario))];
  const gateways = [...new Set(measurements.map((m) => m.gateway))];
  const metrics: { title: string; value(m: Measurement): number; digits: number }[] = [
    { title: 'req/s (higher is better)', value: (m) => m.rps, digits: 0 },
    { title: 'gateway CPU ms per request (lower is better)', value: (m) => m.gatewayCpuMs, digits: 2 },
  ];
  const panelWidth = 300;
  const barHeight = 18;
  const panelHeight = 40 + gateways.length * (barHeight + 6);
  const labelWidth = 0;
  const width = scenarios.length * panelWidth + 20;
  const legendHeight = 30 + gateways.length * 0;
  const height = 40 + metrics.length * panelHeight + legendHeight + 20;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="13" font-weight="bold">Gateways side by side: ${escape(caption)}</text>`,
  ];
  metrics.forEach((metric, row) => {
    scenarios.forEach((scenario, column) => {
      const x0 = 10 + column * panelWidth + labelWidth;
      const y0 = 40 + row * panelHeight;
      const rows = gateways.map((gateway) => measurements.find((m) => m.scenario === scenario && m.gateway === gateway)!);
      const max = Math.max(...rows.map(metric.value));
      parts.push(`<text x="${x0}" y="${y0 + 12}" font-weight="bold">(${scenario}) ${escape(metric.title)}</text>`);
      rows.forEach((m, index) => {
        const y = y0 + 22 + index * (barHeight + 6);
        const barWidth = ((panelWidth - 70) * metric.value(m)) / max;
        parts.push(`<rect x="${x0}" y="${y}" width="${barWidth.toFixed(1)}" height="${barHeight}" fill="${COLORS[m.gateway] ?? '#999'}"/>`);
        parts.push(`<text x="${(x0 + barWidth + 4).toFixed(1)}" y="${y + 13}">${metric.value(m).toFixed(metric.digits)}</text>`);
      });
    });
  });
  const legendY = 40 + metrics.length * panelHeight + 10;
  gateways.forEach((gateway, index) => {
    const x = 10 + index * 200;
    parts.push(`<rect x="${x}" y="${legendY}" width="12" height="12" fill="${COLORS[gateway] ?? '#999'}"/>`);
    parts.push(`<text x="${x + 16}" y="${legendY + 10}">${escape(gateway)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

// The gateways benchmark's table (bench/report.ts): ratios ours/each over the whole run, with their range by round.
import { describe, expect, it } from 'vitest';
import { renderTable, type Measurement } from '../bench/report.js';

const RUN = { date: '2026-11-25T00:00:00.000Z', machine: 'test machine', rounds: 2, duration: 5, connections: 32 };

function measured(gateway: string, rounds: Measurement['rounds']): Measurement {
  const mean = (of: (round: Measurement['rounds'][number]) => number) => rounds.reduce((sum, round) => sum + of(round), 0) / rounds.length;
  return {
    scenario: 'a',
    scenarioName: 'product(id)',
    gateway,
    rps: mean((round) => round.rps),
    p50: 1,
    p99: 2,
    gatewayCpuMs: mean((round) => round.gatewayCpuMs),
    rounds,
    subgraphCpuMs: 0.1,
    peakRssMb: 100,
    storeCalls: 0,
    errors: 0,
    mismatches: 0,
    responseKb: 0.1,
  };
}

const rowOf = (table: string, gateway: string) => table.split('\n').find((line) => line.includes(`| ${gateway} |`))!.split('|').map((cell) => cell.trim());

describe('the gateways table', () => {
  it("gives each ratio over the whole run and its range round by round, each round's ours against that round's other", () => {
    const ours = measured('ours', [{ rps: 300, gatewayCpuMs: 1.0 }, { rps: 200, gatewayCpuMs: 1.5 }]);
    const other = measured('other', [{ rps: 100, gatewayCpuMs: 2.0 }, { rps: 100, gatewayCpuMs: 2.0 }]);
    const row = rowOf(renderTable([ours, other], RUN), 'other');
    // req/s: 250 / 100 over the run; rounds 3.00x and 2.00x. CPU: 1.25 / 2 over the run; rounds 0.50x and 0.75x.
    expect(row.slice(-3, -1)).toEqual(['2.50x (2.00-3.00)', '0.63x (0.50-0.75)']);
    expect(rowOf(renderTable([ours, other], RUN), 'ours').slice(-3, -1)).toEqual(['', '']);
  });

  it("says how a gateway ran, a line each, between the run's line and the table", () => {
    const table = renderTable([measured('ours', [{ rps: 1, gatewayCpuMs: 1 }])], { ...RUN, notes: ['grafbase calls subgraphs that serve unsigned calls'] });
    expect(table.split('\n').slice(1, 4)).toEqual(['- grafbase calls subgraphs that serve unsigned calls.', '', expect.stringMatching(/^\| scenario \|/)]);
  });

  it('gives the ratio alone from a single round: a range of one is none', () => {
    const row = rowOf(renderTable([measured('ours', [{ rps: 300, gatewayCpuMs: 1 }]), measured('other', [{ rps: 100, gatewayCpuMs: 2 }])], { ...RUN, rounds: 1 }), 'other');
    expect(row.slice(-3, -1)).toEqual(['3.00x', '0.50x']);
  });

  it('sets ours/this CPU at size beside the same at scale 1, and how far it moved', () => {
    const at = (scenario: string, gateway: string, gatewayCpuMs: number) => ({ ...measured(gateway, [{ rps: 1, gatewayCpuMs }]), scenario });
    const table = renderTable([at('h', 'ours', 1), at('h', 'other', 1), at('h@1000', 'ours', 3), at('h@1000', 'other', 2), at('i', 'ours', 1)], RUN);
    expect(table.split('\n').filter((line) => line.startsWith('| (h) |'))).toEqual(['| (h) | other | 1.00x | 1.50x | 1.50x |']);
    expect(table).toContain('at SEED_SCALE=1000');
    expect(renderTable([at('h', 'ours', 1), at('h', 'other', 1)], RUN)).not.toContain('SEED_SCALE');
  });
});

// The runtime's logger: its log lines reach the process's pino logger as JSON, and the children it asks for on every
// subgraph call are made once, yet each still logs with its own attributes and prefix at the level of its parent.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@ordergraph/core';
import { hiveLogger } from '../../src/observability/logging.js';

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>));
      done();
    },
  });
  const log = hiveLogger(createLogger('gateway-test', 'debug', destination), 'info');
  if (!log) throw new Error('the runtime logger is off');
  return { log, lines };
}

describe("the runtime's logger", () => {
  it('makes the child of a prefix or of plain attributes once, and each logs with its own', () => {
    const { log, lines } = capturedLogger();
    const users = log.child({ subgraph: 'users' });
    expect(log.child({ subgraph: 'users' })).toBe(users);
    expect(log.child({ subgraph: 'catalog' })).not.toBe(users);
    expect(log.child('[plugin] ')).toBe(log.child('[plugin] '));
    users.info('called');
    log.child({ subgraph: 'catalog' }).warn('slow');
    log.child('[plugin] ').info({ answered: true }, 'done');
    expect(lines).toMatchObject([
      { component: 'hive', subgraph: 'users', msg: 'called', level: 30 },
      { component: 'hive', subgraph: 'catalog', msg: 'slow', level: 40 },
      { component: 'hive', answered: true, msg: '[plugin] done' },
    ]);
  });

  it('makes a child of anything else anew, and its children follow the level of their parent', () => {
    const { log, lines } = capturedLogger();
    const detail = { subgraph: 'users', request: { id: 1 } };
    expect(log.child(detail)).not.toBe(log.child(detail));
    const child = log.child({ subgraph: 'orders' });
    child.debug('not at info');
    log.setLevel('debug');
    child.debug('at debug');
    expect(lines.map((line) => line['msg'])).toEqual(['at debug']);
  });
});

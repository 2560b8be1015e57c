import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import * as workflows from '../../workflows';
import { CONTROLLERS, controllerFlags } from '../../workers/registry';
import { addRunOptions } from '../../starter/run-options';
import { ALIASES, canonicalControllerName } from '../../starter/controller-names';
import { informerSetKey, taskQueueToMoveTo, controllerTaskQueue } from '../../workflows/runtime/task-queues';

describe('controller registry', () => {
  test('every registered workflow is exported from workflows/index.ts under its own name', () => {
    // the index's exports load their module on the first call, so they are not the same objects
    const exported = new Map<string, unknown>(Object.entries(workflows));
    for (const d of CONTROLLERS) {
      for (const w of d.workflows) {
        const e = exported.get(w.name);
        expect(typeof e).toBe('function');
        expect((e as () => unknown).name).toBe(w.name);
      }
    }
  });

  test('names are upstream canonical names; short names are unique and are the upstream aliases where one exists', () => {
    const shorts = new Set<string>();
    for (const d of CONTROLLERS) {
      expect(canonicalControllerName(d.name)).toBe(d.name);
      expect(shorts.has(d.short)).toBe(false);
      shorts.add(d.short);
      // a short name that is an alias must name this controller
      if (ALIASES[d.short] !== undefined) expect(ALIASES[d.short]).toBe(d.name);
    }
  });

  test('flag names are unique across controllers, and none collides with a manager flag', () => {
    const names = controllerFlags().map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    const cmd = addRunOptions(new Command('run'));
    const longs = cmd.options.map((o) => o.long);
    expect(new Set(longs).size).toBe(longs.length);
  });
});

/** The README's `run` flag table: each row's flags and the defaults cell. */
function readmeRunFlags(): Map<string, string> {
  const readme = fs.readFileSync(path.join(__dirname, '../../README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('`run` flags'), readme.indexOf('Environment:', readme.indexOf('`run` flags')));
  const out = new Map<string, string>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length < 3 || !cells[0].startsWith('`--')) continue;
    const flags = [...cells[0].matchAll(/`(--[a-z0-9-]+)/g)].map((m) => m[1]);
    const defaults = cells[1].split(', ');
    flags.forEach((f, i) => out.set(f, (flags.length === defaults.length ? defaults[i] : cells[1]).trim()));
  }
  return out;
}

describe('README run flag table', () => {
  const documented = readmeRunFlags();

  test('documents every flag `run` accepts, and no other', () => {
    const longs = addRunOptions(new Command('run')).options.map((o) => o.long!).sort();
    expect([...documented.keys()].sort()).toEqual(longs);
  });

  test("states each controller flag's default as its descriptor declares it", () => {
    for (const f of controllerFlags()) {
      const def = f.kind === 'file' ? '' : String(f.def);
      expect([`--${f.name}`, documented.get(`--${f.name}`)]).toEqual([`--${f.name}`, def]);
    }
  });
});

describe('task queues', () => {
  test('a workflow on the base queue moves to its controller queue; one there stays', () => {
    expect(taskQueueToMoveTo('kcm', 'replicaset')).toBe('kcm/replicaset');
    expect(taskQueueToMoveTo(controllerTaskQueue('kcm', 'replicaset'), 'replicaset')).toBeUndefined();
  });

  test('an informer set key does not depend on order or repetition', () => {
    expect(informerSetKey(['replicaset', 'deployment', 'replicaset'])).toBe(informerSetKey(['deployment', 'replicaset']));
    expect(informerSetKey([])).toBe('none');
  });
});

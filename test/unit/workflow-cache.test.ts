import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONTROLLERS } from '../../workers/registry';
import { EVENT_DRIVEN_CACHED_RUNS, cachedRunsFor } from '../../workers/workflow-cache';

describe('the workflow cache per controller', () => {
  test('--max-cached-workflows, when given, sizes every controller\'s cache, 0 included', () => {
    expect(cachedRunsFor({ periodicRuns: true }, 30)).toBe(30);
    expect(cachedRunsFor({}, 0)).toBe(0);
  });

  test('unset, a controller woken by watch events keeps its hot set, a periodic one the SDK\'s default', () => {
    expect(cachedRunsFor({}, undefined)).toBe(EVENT_DRIVEN_CACHED_RUNS);
    expect(cachedRunsFor({ periodicRuns: false }, undefined)).toBe(EVENT_DRIVEN_CACHED_RUNS);
    expect(cachedRunsFor({ periodicRuns: true }, undefined)).toBeUndefined();
  });

  test('the controllers README names as periodic are the ones that say so', () => {
    const readme = fs.readFileSync(path.join(__dirname, '../../README.md'), 'utf8');
    const row = readme.split('\n').find((l) => l.startsWith('| `--max-cached-workflows N` |'));
    expect(row).toBeDefined();
    const periodic = CONTROLLERS.filter((d) => d.periodicRuns).map((d) => d.name.replace(/-controller$/, ''));
    expect(periodic.sort()).toEqual(['cronjob', 'horizontal-pod-autoscaler', 'persistentvolume-binder', 'resourcequota']);
    for (const name of periodic) expect(row).toContain(`${name} (`);
  });
});

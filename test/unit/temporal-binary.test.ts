import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cachedPath, locateBinary } from '../../starter/local/binaries';

/**
 * jest.unit.config.js decides whether test/workflow/ runs by looking for the temporal binary in
 * plain JavaScript (test/support/temporal-binary.js); it must look where the starter does.
 */
const { temporalBinary, cachedTemporalPath } = require('../support/temporal-binary.js') as {
  temporalBinary: () => string | undefined;
  cachedTemporalPath: () => string;
};

const saved = { TEMPORAL_BIN: process.env.TEMPORAL_BIN, TEMPORAL_KCM_CACHE_DIR: process.env.TEMPORAL_KCM_CACHE_DIR, PATH: process.env.PATH };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

test('the cache path is the one the build writes', () => {
  expect(cachedTemporalPath()).toBe(cachedPath('temporal'));
  process.env.TEMPORAL_KCM_CACHE_DIR = '/somewhere/else';
  expect(cachedTemporalPath()).toBe(cachedPath('temporal'));
});

test('finds the same binary as locateBinary, from the cache, TEMPORAL_BIN or PATH', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-bin-'));
  try {
    process.env.TEMPORAL_KCM_CACHE_DIR = path.join(dir, 'cache');
    process.env.PATH = path.join(dir, 'nothing-here');
    delete process.env.TEMPORAL_BIN;
    expect(temporalBinary()).toBeUndefined();
    expect(locateBinary('temporal')).toBeUndefined();

    const cached = cachedPath('temporal');
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    fs.writeFileSync(cached, '#!/bin/sh\n', { mode: 0o755 });
    expect(temporalBinary()).toBe(cached);
    expect(locateBinary('temporal')?.path).toBe(cached);

    const onPath = path.join(dir, 'bin', 'temporal');
    fs.mkdirSync(path.dirname(onPath));
    fs.writeFileSync(onPath, '#!/bin/sh\n', { mode: 0o755 });
    fs.rmSync(cached);
    process.env.PATH = path.dirname(onPath);
    expect(temporalBinary()).toBe(onPath);
    expect(locateBinary('temporal')?.path).toBe(onPath);

    process.env.TEMPORAL_BIN = onPath;
    expect(temporalBinary()).toBe(onPath);
    expect(locateBinary('temporal')?.path).toBe(onPath);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

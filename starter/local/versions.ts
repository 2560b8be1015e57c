import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from './paths';

/** The pinned versions of every third-party part of the local stack; one file, hack/versions.json. */
export interface PinnedVersions {
  kubernetes: string;
  etcd: string;
  temporalCli: string;
  /**
   * the modernc.org/sqlite the CLI is built with, in place of the one its go.mod names (v1.34.1 for
   * v1.5.1): from v1.29 until a fix in v1.44, a query interrupted by a cancelled context left every
   * later query on that connection failing with SQLITE_INTERRUPT, and the dev server, which keeps
   * one connection, then failed every operation ("interrupted (9)") until restarted
   */
  temporalCliSqlite: string;
  /** the server the `--temporal postgres` topology runs; the one the pinned CLI embeds (its go.mod requires it) */
  temporalServer: string;
  /**
   * the Web UI server the `--temporal postgres` topology runs (github.com/temporalio/ui-server/v2);
   * the one the pinned CLI embeds in its dev server (its go.mod requires it)
   */
  temporalUiServer: string;
  kwok: string;
}

const semverTag = /^v\d+\.\d+\.\d+$/;

export function parseVersions(text: string, source = 'hack/versions.json'): PinnedVersions {
  const raw: unknown = JSON.parse(text);
  if (typeof raw !== 'object' || raw === null) throw new Error(`${source}: expected an object`);
  const obj = raw as Record<string, unknown>;
  const out: Partial<PinnedVersions> = {};
  for (const key of ['kubernetes', 'etcd', 'temporalCli', 'temporalCliSqlite', 'temporalServer', 'temporalUiServer', 'kwok'] as const) {
    const v = obj[key];
    if (typeof v !== 'string' || !semverTag.test(v)) {
      throw new Error(`${source}: "${key}" must be a release tag like v1.2.3, got ${JSON.stringify(v)}`);
    }
    out[key] = v;
  }
  return out as PinnedVersions;
}

/** The temporal CLI's build, as its cache directory is named: the CLI's tag and the sqlite it is built with. */
export function temporalCliBuild(v: Pick<PinnedVersions, 'temporalCli' | 'temporalCliSqlite'>): string {
  return `${v.temporalCli}-sqlite-${v.temporalCliSqlite}`;
}

export function loadVersions(): PinnedVersions {
  const file = path.join(repoRoot, 'hack', 'versions.json');
  return parseVersions(fs.readFileSync(file, 'utf8'), file);
}

/** k8s.io/kubernetes vX.Y.Z publishes its staging modules (k8s.io/api, client-go, ...) as v0.Y.Z. */
export function stagingVersion(kubernetesVersion: string): string {
  const m = /^v1\.(\d+)\.(\d+)$/.exec(kubernetesVersion);
  if (!m) throw new Error(`not a Kubernetes 1.x release tag: ${kubernetesVersion}`);
  return `v0.${m[1]}.${m[2]}`;
}

import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  UI_SERVER_MODULE, renderEtcdWrapperGoMod, renderKubernetesWrapperGoMod, renderTemporalWrapperGoMod, requireLines, requiredVersion, stagingModules,
} from '../../starter/local/gomod';
import { repoRoot } from '../../starter/local/paths';
import { loadVersions, parseVersions, stagingVersion } from '../../starter/local/versions';

const UPSTREAM_EXCERPT = `module k8s.io/kubernetes

go 1.25.0

require (
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
	sigs.k8s.io/yaml v1.6.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/sample-controller => ./staging/src/k8s.io/sample-controller
)

replace k8s.io/kms => ./staging/src/k8s.io/kms
replace github.com/example/x => github.com/example/x v1.2.3
`;

describe('wrapper go.mod generation', () => {
  test('every ./staging replace of upstream becomes a replace to the published v0.Y.Z twin', () => {
    expect(stagingModules(UPSTREAM_EXCERPT)).toEqual(['k8s.io/api', 'k8s.io/client-go', 'k8s.io/kms', 'k8s.io/sample-controller']);
    const out = renderKubernetesWrapperGoMod(UPSTREAM_EXCERPT, 'v1.35.4');
    expect(out).toContain('require k8s.io/kubernetes v1.35.4');
    expect(out).toContain('\tk8s.io/client-go => k8s.io/client-go v0.35.4\n');
    expect(out).toContain('\tk8s.io/kms => k8s.io/kms v0.35.4\n');
    expect(out).toContain('go 1.25.0');
    expect(out).not.toContain('github.com/example/x');
    expect(requiredVersion(out, 'k8s.io/kubernetes')).toBe('v1.35.4');
  });

  test('a go.mod without staging replaces is refused (not k8s.io/kubernetes)', () => {
    expect(() => stagingModules('module x\n\ngo 1.22\n')).toThrow(/no \.\/staging replace/);
  });

  test('etcd wrapper requires the server module at the pinned version', () => {
    const out = renderEtcdWrapperGoMod('module go.etcd.io/etcd/server/v3\n\ngo 1.24\n', 'v3.6.5');
    expect(requiredVersion(out, 'go.etcd.io/etcd/server/v3')).toBe('v3.6.5');
  });

  test('the temporal wrapper requires the pinned server and every module the CLI requires, at the CLI\'s versions', () => {
    const cli = `module github.com/temporalio/cli

go 1.25.0

require (
	github.com/spf13/cobra v1.9.1
	github.com/temporalio/ui-server/v2 v2.42.1
	go.temporal.io/server v1.29.1
)

require (
	cloud.google.com/go v0.120.0 // indirect
	github.com/x/y v0.0.0-20250101000000-abcdef123456 // indirect
)

require golang.org/x/term v0.32.0
`;
    expect(requireLines(cli)).toEqual([
      'github.com/spf13/cobra v1.9.1', 'github.com/temporalio/ui-server/v2 v2.42.1', 'go.temporal.io/server v1.29.1', 'cloud.google.com/go v0.120.0',
      'github.com/x/y v0.0.0-20250101000000-abcdef123456', 'golang.org/x/term v0.32.0',
    ]);
    const out = renderTemporalWrapperGoMod(cli, 'v1.5.1', 'v1.29.1');
    expect(out).toContain('module temporal-kcm/hack/temporal');
    expect(out).toContain('go 1.25.0');
    expect(requiredVersion(out, 'go.temporal.io/server')).toBe('v1.29.1');
    expect(out.match(/go\.temporal\.io\/server/g)).toHaveLength(1);
    // the Web UI server comes with the CLI's requires, at its version
    expect(requiredVersion(out, UI_SERVER_MODULE)).toBe('v2.42.1');
    expect(out).toContain('\tgithub.com/x/y v0.0.0-20250101000000-abcdef123456\n');
    expect(out).toContain('\tgolang.org/x/term v0.32.0\n');
  });

  test('the committed wrapper modules match hack/versions.json', () => {
    const v = loadVersions();
    const k8sMod = fs.readFileSync(path.join(repoRoot, 'hack', 'k8s', 'go.mod'), 'utf8');
    expect(requiredVersion(k8sMod, 'k8s.io/kubernetes')).toBe(v.kubernetes);
    expect(k8sMod).toContain(`k8s.io/client-go => k8s.io/client-go ${stagingVersion(v.kubernetes)}`);
    const etcdMod = fs.readFileSync(path.join(repoRoot, 'hack', 'etcd', 'go.mod'), 'utf8');
    expect(requiredVersion(etcdMod, 'go.etcd.io/etcd/server/v3')).toBe(v.etcd);
    const temporalMod = fs.readFileSync(path.join(repoRoot, 'hack', 'temporal', 'go.mod'), 'utf8');
    expect(requiredVersion(temporalMod, 'go.temporal.io/server')).toBe(v.temporalServer);
    // the Web UI server is built from this module at the version the CLI requires, which is the pin
    expect(requiredVersion(temporalMod, UI_SERVER_MODULE)).toBe(v.temporalUiServer);
    expect(temporalMod).toContain(`from the go.mod of github.com/temporalio/cli ${v.temporalCli}.`);
  });
});

describe('pinned versions', () => {
  test('staging modules are versioned v0.<minor>.<patch>', () => {
    expect(stagingVersion('v1.35.4')).toBe('v0.35.4');
    expect(() => stagingVersion('v2.0.0')).toThrow();
  });

  test('a malformed versions file names the bad key', () => {
    const good = { kubernetes: 'v1.35.4', etcd: 'v3.6.5', temporalCli: 'v1.5.1', temporalCliSqlite: 'v1.44.3', temporalServer: 'v1.29.1', temporalUiServer: 'v2.42.1', kwok: 'v0.7.0' };
    expect(parseVersions(JSON.stringify(good))).toEqual(good);
    const without = (key: keyof typeof good) => JSON.stringify(Object.fromEntries(Object.entries(good).filter(([k]) => k !== key)));
    expect(() => parseVersions(JSON.stringify({ ...good, kubernetes: '1.35' }))).toThrow(/"kubernetes"/);
    expect(() => parseVersions(without('kwok'))).toThrow(/"kwok"/);
    expect(() => parseVersions(without('temporalServer'))).toThrow(/"temporalServer"/);
    expect(() => parseVersions(without('temporalUiServer'))).toThrow(/"temporalUiServer"/);
    expect(() => parseVersions(without('temporalCliSqlite'))).toThrow(/"temporalCliSqlite"/);
  });
});

import { parse } from 'yaml';
import { main } from '../../starter/cli';
import { temporalPkiPaths } from '../../starter/local/pki';
import { postgresArgs, postgresPaths } from '../../starter/local/postgres';
import { envVarFor } from '../../starter/local/binaries';
import { PORT_NAMES, PortName, StackState, describeStack, temporalUiUrl } from '../../starter/local/stack';
import {
  ServerConfig, ServerPorts, UiServerConfig, chooseTopology, isTemporalTopology, renderDynamicConfigYaml, renderServerConfig, renderServerConfigYaml,
  renderUiServerConfig, renderUiServerConfigYaml, serverArgs, serverConfigPaths, stackTemporalTarget, temporalTlsArgs, temporalTlsEnv, uiServerArgs,
  uiServerConfigPaths,
} from '../../starter/local/temporal-topology';

const PORTS: ServerPorts = {
  frontend: 7233, frontendHttp: 7243, frontendMembership: 6933,
  internalFrontend: 7236, internalFrontendHttp: 7246, internalFrontendMembership: 6936,
  history: 7234, historyMembership: 6934, matching: 7235, matchingMembership: 6935, worker: 7239, workerMembership: 6939,
  metrics: 8000,
};

function config(): ServerConfig {
  return renderServerConfig({
    ports: PORTS,
    postgres: { port: 5433, user: 'temporal', password: 's3cret' },
    pki: temporalPkiPaths('/data'),
    dynamicConfigFile: '/data/temporal-server/config/dynamicconfig.yaml',
    numHistoryShards: 4,
    logLevel: 'warn',
  });
}

describe('the --temporal flag', () => {
  test('dev and postgres are the topologies', () => {
    expect(isTemporalTopology('dev')).toBe(true);
    expect(isTemporalTopology('postgres')).toBe(true);
    expect(isTemporalTopology('cassandra')).toBe(false);
    expect(isTemporalTopology('')).toBe(false);
  });

  test('absent, it keeps what the data dir ran last, else dev', () => {
    expect(chooseTopology(undefined, undefined, false)).toEqual({ topology: 'dev' });
    expect(chooseTopology(undefined, 'postgres', true)).toEqual({ topology: 'postgres' });
    expect(chooseTopology('postgres', 'postgres', true)).toEqual({ topology: 'postgres' });
  });

  test('another topology than the running one is refused; a stopped one may be switched', () => {
    const r = chooseTopology('postgres', 'dev', true);
    expect('error' in r && r.error).toMatch(/runs the dev Temporal topology.*local down/);
    expect(chooseTopology('postgres', 'dev', false)).toEqual({ topology: 'postgres' });
  });

  describe.each([
    ['local up', ['local', 'up']],
    ['start', ['start']],
  ])('%s', (_name, cmd) => {
    let exit: jest.SpyInstance;
    let stderr: jest.SpyInstance;
    beforeEach(() => {
      exit = jest.spyOn(process, 'exit').mockImplementation(((code?: number) => { throw new Error(`exit ${code}`); }) as typeof process.exit);
      stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    });
    afterEach(() => { exit.mockRestore(); stderr.mockRestore(); });

    test('any other --temporal value is a usage error: message, usage, exit 2', async () => {
      await expect(main([...cmd, '--temporal', 'cassandra', '--data-dir', '/nonexistent/never-made'])).rejects.toThrow('exit 2');
      const written = stderr.mock.calls.map((c) => String(c[0])).join('');
      expect(written).toContain("option '--temporal <topology>' argument 'cassandra' is invalid. must be one of dev, postgres");
      expect(written).toContain(`Usage: temporal-kcm ${cmd.join(' ')}`);
    });
  });
});

describe('how the stack reaches its Temporal', () => {
  test('dev: plain gRPC, no TLS flags or variables', () => {
    const t = stackTemporalTarget('/data', 'dev', 7233);
    expect(t).toEqual({ address: '127.0.0.1:7233', namespace: 'default' });
    expect(temporalTlsArgs(t.tls)).toEqual([]);
    expect(temporalTlsEnv(t.tls)).toEqual({});
  });

  test('postgres: the stack client cert, its CA and the name on the server cert, as run flags and as variables of both run and the temporal CLI', () => {
    const t = stackTemporalTarget('/data', 'postgres', 7233);
    const pki = temporalPkiPaths('/data');
    expect(t.tls).toEqual({ certPath: pki.clientCert, keyPath: pki.clientKey, caPath: pki.caCert, serverName: 'localhost' });
    expect(temporalTlsArgs(t.tls)).toEqual([
      '--temporal-tls-cert', pki.clientCert, '--temporal-tls-key', pki.clientKey, '--temporal-tls-ca', pki.caCert, '--temporal-tls-server-name', 'localhost',
    ]);
    expect(temporalTlsEnv(t.tls)).toEqual({
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CERT: pki.clientCert, TEMPORAL_TLS_KEY: pki.clientKey, TEMPORAL_TLS_CA: pki.caCert, TEMPORAL_TLS_SERVER_NAME: 'localhost',
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert, TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
    });
  });

  test('TLS without files is still TLS', () => {
    expect(temporalTlsArgs({})).toEqual(['--temporal-tls']);
  });
});

describe('the server config', () => {
  test('default and visibility stores both on postgres12, in their own databases on the stack\'s PostgreSQL', () => {
    const c = config();
    expect(c.persistence.numHistoryShards).toBe(4);
    const def = c.persistence.datastores[c.persistence.defaultStore].sql;
    const vis = c.persistence.datastores[c.persistence.visibilityStore].sql;
    for (const s of [def, vis]) {
      expect(s).toMatchObject({ pluginName: 'postgres12', connectAddr: '127.0.0.1:5433', connectProtocol: 'tcp', user: 'temporal', password: 's3cret' });
    }
    expect([def.databaseName, vis.databaseName]).toEqual(['temporal', 'temporal_visibility']);
  });

  test('the frontend requires client certs of the Temporal CA; internode stays plain (one process, loopback)', () => {
    const c = config();
    const pki = temporalPkiPaths('/data');
    expect(c.global.tls.frontend.server).toEqual({ certFile: pki.serverCert, keyFile: pki.serverKey, requireClientAuth: true, clientCaFiles: [pki.caCert] });
    expect(c.global.tls.internode).toBeUndefined();
  });

  test('every service binds loopback on its own ports; the system worker reaches the internal-frontend', () => {
    const c = config();
    expect(Object.keys(c.services).sort()).toEqual(['frontend', 'history', 'internal-frontend', 'matching', 'worker']);
    expect(c.services.frontend.rpc).toEqual({ grpcPort: 7233, membershipPort: 6933, bindOnIP: '127.0.0.1', httpPort: 7243 });
    expect(c.services.history.rpc).toEqual({ grpcPort: 7234, membershipPort: 6934, bindOnIP: '127.0.0.1' });
    // with an internal-frontend, a publicClient section is an error (common/config validation)
    expect(c.publicClient).toBeUndefined();
    const all = Object.values(c.services).flatMap((s) => [s.rpc.grpcPort, s.rpc.membershipPort, ...(s.rpc.httpPort ? [s.rpc.httpPort] : [])]);
    expect(new Set(all).size).toBe(all.length);
    expect(c.clusterMetadata.clusterInformation.active.rpcAddress).toBe('127.0.0.1:7233');
    expect(c.global.metrics.prometheus.listenAddress).toBe('127.0.0.1:8000');
    expect(c.dynamicConfigClient.filepath).toBe('/data/temporal-server/config/dynamicconfig.yaml');
  });

  test('the YAML the server reads round-trips, and the dynamic config is a map of constrained values', () => {
    const yaml = renderServerConfigYaml({
      ports: PORTS, postgres: { port: 5433, user: 'temporal', password: 'a: b # c' }, pki: temporalPkiPaths('/data'),
      dynamicConfigFile: '/d.yaml', numHistoryShards: 4, logLevel: 'warn',
    });
    expect((parse(yaml) as ServerConfig).persistence.datastores['postgres-default'].sql.password).toBe('a: b # c');
    const dyn = parse(renderDynamicConfigYaml()) as Record<string, { value: unknown }[]>;
    for (const v of Object.values(dyn)) expect(v[0]).toHaveProperty('value');
  });

  test('one process runs every service, from the config the starter wrote', () => {
    const args = serverArgs('/data');
    const p = serverConfigPaths('/data');
    expect(args.slice(0, 6)).toEqual(['--root', p.root, '--config', 'config', '--env', p.env]);
    expect(p.configFile).toBe(`${p.root}/config/${p.env}.yaml`);
    expect(args.slice(args.indexOf('start'))).toEqual([
      'start', '--service', 'frontend', '--service', 'internal-frontend', '--service', 'history', '--service', 'matching', '--service', 'worker',
    ]);
  });

  test('PostgreSQL listens on loopback only, its socket in its own dir', () => {
    const p = postgresPaths('/data');
    const args = postgresArgs(p, 5433);
    expect(args).toEqual(expect.arrayContaining(['-D', p.data, '-p', '5433', 'listen_addresses=127.0.0.1', `unix_socket_directories=${p.socket}`]));
  });
});

describe('the Web UI server config', () => {
  const ui = () => renderUiServerConfig({ frontendPort: 7233, port: 8233, pki: temporalPkiPaths('/data') });

  test('it calls the frontend over mTLS with the stack client cert, verifying the frontend\'s cert by the name on it', () => {
    const c = ui();
    const pki = temporalPkiPaths('/data');
    expect(c.temporalGrpcAddress).toBe('127.0.0.1:7233');
    // the same files every stack client of Temporal presents (stackTemporalTarget)
    const target = stackTemporalTarget('/data', 'postgres', 7233).tls!;
    expect(c.tls).toEqual({ caFile: target.caPath, certFile: target.certPath, keyFile: target.keyPath, serverName: target.serverName, enableHostVerification: true });
    expect(c.tls.caFile).toBe(pki.caCert);
    expect(c.tls.certFile).toBe(pki.clientCert);
  });

  test('it serves the UI and its API on loopback, at the root, opening the stack\'s namespace', () => {
    expect(ui()).toMatchObject({ host: '127.0.0.1', port: 8233, publicPath: '', enableUi: true, defaultNamespace: 'default' });
    // plain HTTP: a Secure CSRF cookie would never be sent back, and the UI's write actions would fail
    expect(ui().cors).toEqual({ cookieInsecure: true });
  });

  test('the YAML it reads round-trips, and it is started with the directory and env it is written to', () => {
    const c = parse(renderUiServerConfigYaml({ frontendPort: 7233, port: 8233, pki: temporalPkiPaths('/data') })) as UiServerConfig;
    expect(c).toEqual(ui());
    const p = uiServerConfigPaths('/data');
    expect(p.configFile).toBe(`${p.root}/config/${p.env}.yaml`);
    expect(p.root).toBe('/data/temporal-ui');
    expect(uiServerArgs('/data')).toEqual(['--root', p.root, '--config', 'config', '--env', p.env, 'start']);
  });

  test('its binary is named by TEMPORAL_UI_SERVER_BIN, as the server\'s by TEMPORAL_SERVER_BIN', () => {
    expect(envVarFor('temporal-ui-server')).toBe('TEMPORAL_UI_SERVER_BIN');
    expect(envVarFor('temporal-server')).toBe('TEMPORAL_SERVER_BIN');
  });
});

describe('where the stack says its Web UI is', () => {
  const state = (temporal: 'dev' | 'postgres'): StackState => ({
    dataDir: '/nonexistent/data', nodes: 1, temporal, binaries: {},
    ports: Object.fromEntries(PORT_NAMES.map((p, i) => [p, p === 'temporalUi' ? 8233 : 20000 + i])) as Record<PortName, number>,
  });

  test.each(['dev', 'postgres'] as const)('%s: the temporalUi port, printed by up as the Web UI', (topology) => {
    const s = state(topology);
    expect(temporalUiUrl(s)).toBe('http://127.0.0.1:8233');
    expect(describeStack(s)).toMatch(/^Temporal Web UI http:\/\/127\.0\.0\.1:8233\b/m);
    expect(describeStack(s)).not.toMatch(/no Web UI/);
  });
});

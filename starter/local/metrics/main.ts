/**
 * Entry point of the local stack's metrics stand-in (a process `local up` starts, `local down`
 * stops). Flags name files the stack's pki.ts made; see server.ts for what it serves.
 *
 *   node dist/starter/local/metrics/main.js --apiserver https://127.0.0.1:PORT --ca-file ca.crt
 *     --client-cert-file admin.crt --client-key-file admin.key --bind-address IP --secure-port N
 *     --tls-cert-file metrics.crt --tls-private-key-file metrics.key
 *     --requestheader-client-ca-file front-proxy-ca.crt --requestheader-allowed-names front-proxy-client
 */
import * as fs from 'node:fs';
import { MetricsStandin } from './server';

function log(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(JSON.stringify({ time: new Date().toISOString(), component: 'metrics-standin', msg: event, ...fields }) + '\n');
}

const FLAGS = ['apiserver', 'ca-file', 'client-cert-file', 'client-key-file', 'bind-address', 'secure-port', 'tls-cert-file',
  'tls-private-key-file', 'requestheader-client-ca-file', 'requestheader-allowed-names'] as const;
type Flag = typeof FLAGS[number];

function usage(msg: string): never {
  process.stderr.write(`metrics stand-in: ${msg}\nflags (all required): ${FLAGS.map((f) => `--${f}`).join(' ')}\n`);
  process.exit(2);
}

export function parseFlags(argv: string[]): Record<Flag, string> {
  const out: Partial<Record<Flag, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const m = argv[i].match(/^--([a-z-]+)(?:=(.*))?$/);
    if (!m || !(FLAGS as readonly string[]).includes(m[1])) usage(`unknown argument ${argv[i]}`);
    const v = m[2] ?? argv[++i];
    if (v === undefined) usage(`--${m[1]} needs a value`);
    out[m[1] as Flag] = v;
  }
  for (const f of FLAGS) if (!out[f]) usage(`--${f} is required`);
  const port = Number(out['secure-port']);
  if (!Number.isInteger(port) || port < 1 || port > 65535) usage(`--secure-port must be 1..65535, got ${out['secure-port']}`);
  return out as Record<Flag, string>;
}

async function main(): Promise<void> {
  const f = parseFlags(process.argv.slice(2));
  const read = (flag: Flag) => {
    try {
      return fs.readFileSync(f[flag]);
    } catch (e) {
      return usage(`--${flag}: ${(e as Error).message}`);
    }
  };
  const standin = new MetricsStandin({
    kube: { server: f.apiserver, ca: read('ca-file'), cert: read('client-cert-file'), key: read('client-key-file') },
    host: f['bind-address'],
    port: Number(f['secure-port']),
    tlsCert: read('tls-cert-file'),
    tlsKey: read('tls-private-key-file'),
    clientCa: read('requestheader-client-ca-file'),
    allowedNames: f['requestheader-allowed-names'].split(',').filter(Boolean),
    log,
  });
  await standin.start();
  // nothing to flush: answers are computed per request, so a stop is immediate
  const stop = (sig: string) => {
    log('stopping', { signal: sig });
    process.exit(0);
  };
  // the APIServices point here for the stack's whole life: a stray error is logged, not fatal
  process.on('uncaughtException', (e) => log('uncaught error', { err: e.message }));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  main().catch((e: Error) => {
    log('fatal', { err: e.message });
    process.exit(1);
  });
}

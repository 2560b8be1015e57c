import { Client, Connection } from '@temporalio/client';
import { Command, InvalidArgumentError } from 'commander';
import { RUN_DEFAULTS, TemporalTlsOptions, loadTemporalTls } from '../run-options';

/** The Temporal flags of the operator commands (why, replay, state, pause, resume): `run`'s names and env variables. */
export interface TemporalClientOptions {
  temporalAddress?: string;
  temporalNamespace?: string;
  temporalTls?: boolean;
  temporalTlsCert?: string;
  temporalTlsKey?: string;
  temporalTlsCa?: string;
  temporalTlsServerName?: string;
}

export function addTemporalClientOptions(cmd: Command): Command {
  return cmd
    .option('--temporal-address <host:port>', `Temporal frontend (env TEMPORAL_ADDRESS, else ${RUN_DEFAULTS.temporalAddress})`)
    .option('--temporal-namespace <ns>', `Temporal namespace (env TEMPORAL_NAMESPACE, else ${RUN_DEFAULTS.temporalNamespace})`)
    .option('--temporal-tls', 'connect over TLS (env TEMPORAL_TLS; implied by the other --temporal-tls-* flags)')
    .option('--temporal-tls-cert <path>', 'PEM client certificate (env TEMPORAL_TLS_CERT)')
    .option('--temporal-tls-key <path>', 'PEM client key (env TEMPORAL_TLS_KEY)')
    .option('--temporal-tls-ca <path>', 'PEM CA bundle of the server (env TEMPORAL_TLS_CA)')
    .option('--temporal-tls-server-name <name>', 'server name to verify (env TEMPORAL_TLS_SERVER_NAME)');
}

export interface TemporalTarget {
  address: string;
  namespace: string;
  tls?: TemporalTlsOptions;
}

/** Flags first, then the environment `run` reads, then run's defaults. */
export function resolveTemporalTarget(o: TemporalClientOptions, env: NodeJS.ProcessEnv = process.env): TemporalTarget {
  const address = o.temporalAddress ?? env.TEMPORAL_ADDRESS ?? RUN_DEFAULTS.temporalAddress;
  if (!/^[^:\s]+:\d{1,5}$/.test(address) && !/^\[[^\]]+\]:\d{1,5}$/.test(address)) {
    throw new InvalidArgumentError(`--temporal-address ${address}: must be host:port`);
  }
  const tls: TemporalTlsOptions = {
    certPath: o.temporalTlsCert ?? env.TEMPORAL_TLS_CERT,
    keyPath: o.temporalTlsKey ?? env.TEMPORAL_TLS_KEY,
    caPath: o.temporalTlsCa ?? env.TEMPORAL_TLS_CA,
    serverName: o.temporalTlsServerName ?? env.TEMPORAL_TLS_SERVER_NAME,
  };
  if (!tls.certPath !== !tls.keyPath) throw new InvalidArgumentError('--temporal-tls-cert and --temporal-tls-key go together');
  for (const k of Object.keys(tls) as (keyof TemporalTlsOptions)[]) if (tls[k] === undefined) delete tls[k];
  const wanted = o.temporalTls === true || /^(1|t|true)$/i.test(env.TEMPORAL_TLS ?? '') || Object.keys(tls).length > 0;
  return {
    address,
    namespace: o.temporalNamespace ?? env.TEMPORAL_NAMESPACE ?? RUN_DEFAULTS.temporalNamespace,
    ...(wanted ? { tls } : {}),
  };
}

/** Runs `fn` with a client of the target, closing the connection afterwards whatever happens. */
export async function withTemporalClient<T>(target: TemporalTarget, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: target.address, tls: target.tls ? loadTemporalTls(target.tls) : undefined });
  try {
    return await fn(new Client({ connection, namespace: target.namespace }));
  } finally {
    await connection.close();
  }
}

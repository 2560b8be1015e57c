import { Client, Connection } from '@temporalio/client';
import { TEMPORAL_CHANNEL_ARGS, type TemporalTarget, loadTemporalTls } from '../run-options';
import { DATA_CONVERTER } from '../../workers/payload-codec';

/*
 * The operator commands (why, replay, state, pause, resume) take `run`'s Temporal flags and
 * variables, defined and read in one place: addTemporalOptions and resolveTemporalTarget.
 */
export { addTemporalOptions, resolveTemporalTarget, type TemporalTarget } from '../run-options';

/** Runs `fn` with a client of the target, closing the connection afterwards whatever happens. */
export async function withTemporalClient<T>(target: TemporalTarget, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: target.address, tls: target.tls ? loadTemporalTls(target.tls) : undefined, channelArgs: TEMPORAL_CHANNEL_ARGS });
  try {
    return await fn(new Client({ connection, namespace: target.namespace, dataConverter: DATA_CONVERTER }));
  } finally {
    await connection.close();
  }
}

import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { ensureSearchAttributes } from '../../workers/search-attributes';
import { type TemporalTarget, loadTemporalTls } from '../run-options';
import { canConnect } from './ports';

/** A connection to the stack's Temporal, plain or mTLS as the target says (the dev server's or the postgres topology's). */
export async function withConnection<T>(target: TemporalTarget | string, fn: (c: Connection) => Promise<T>): Promise<T> {
  const t: TemporalTarget = typeof target === 'string' ? { address: target, namespace: 'default' } : target;
  const conn = await Connection.connect({ address: t.address, connectTimeout: 2000, tls: t.tls ? loadTemporalTls(t.tls) : undefined });
  try {
    return await fn(conn);
  } finally {
    await conn.close();
  }
}

/** Temporal answers gRPC and `namespace` exists (`default` for the dev server; `temporal-system` shows a real server's store works). */
export async function temporalHealthy(target: TemporalTarget | string, namespace = 'default'): Promise<boolean> {
  const address = typeof target === 'string' ? target : target.address;
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  if (!(await canConnect(port, host))) return false;
  try {
    return await withConnection(target, async (c) => {
      await c.workflowService.describeNamespace({ namespace });
      return true;
    });
  } catch {
    return false;
  }
}

/** Register this project's custom search attributes (idempotent; a db from an older run may lack some). */
export async function ensureDevSearchAttributes(target: TemporalTarget | string, namespace: string): Promise<void> {
  await withConnection(target, (c) => ensureSearchAttributes(c, namespace));
}

/**
 * How long closed workflows are kept in a namespace `local up` registers: as the dev server keeps
 * them a day, a real server's namespace keeps them three days (`temporal operator namespace
 * create`'s default), long enough to read a reconcile's history the next working day.
 */
export const STACK_NAMESPACE_RETENTION_SECONDS = 3 * 24 * 3600;

/**
 * A real Temporal server starts with only its `temporal-system` namespace: register the stack's
 * (the dev server does it itself from its --namespace flag). Idempotent. DescribeNamespace reads
 * the store, but most calls (search attributes, starting workflows) look namespaces up in each
 * service's namespace cache, refreshed every few seconds: so it waits until such a call finds it.
 */
export async function ensureNamespace(target: TemporalTarget, timeoutMs = 30_000): Promise<void> {
  await withConnection(target, async (c) => {
    const { namespace } = target;
    const stored = () => c.workflowService.describeNamespace({ namespace }).then(() => true, () => false);
    const served = () => c.operatorService.listSearchAttributes({ namespace }).then(() => true, () => false);
    if (!(await stored())) {
      try {
        await c.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs(STACK_NAMESPACE_RETENTION_SECONDS * 1000),
          description: 'registered by temporal-kcm local up',
        });
      } catch (e) {
        // two `up`s racing: the loser finds it there
        if (!(await stored())) throw e;
      }
    }
    const deadline = Date.now() + timeoutMs;
    while (!(await served())) {
      if (Date.now() > deadline) throw new Error(`namespace ${namespace} registered but not served within ${timeoutMs / 1000}s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  });
}

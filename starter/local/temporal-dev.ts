import { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from '../../workers/search-attributes';
import { canConnect } from './ports';

async function withConnection<T>(address: string, fn: (c: Connection) => Promise<T>): Promise<T> {
  const conn = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    return await fn(conn);
  } finally {
    await conn.close();
  }
}

/** The dev server answers gRPC and its `default` namespace exists. */
export async function temporalHealthy(address: string, namespace = 'default'): Promise<boolean> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  if (!(await canConnect(port, host))) return false;
  try {
    return await withConnection(address, async (c) => {
      await c.workflowService.describeNamespace({ namespace });
      return true;
    });
  } catch {
    return false;
  }
}

/** Register this project's custom search attributes (idempotent; a db from an older run may lack some). */
export async function ensureDevSearchAttributes(address: string, namespace: string): Promise<void> {
  await withConnection(address, (c) => ensureSearchAttributes(c, namespace));
}

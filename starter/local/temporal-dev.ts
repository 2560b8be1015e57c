import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SearchAttributeType } from '@temporalio/common';
import { KCM_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { canConnect } from './ports';

const INDEXED: Partial<Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType>> = {
  [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.TEXT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  [SearchAttributeType.INT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
};

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
export async function ensureSearchAttributes(address: string, namespace: string): Promise<void> {
  await withConnection(address, async (c) => {
    const have = await c.operatorService.listSearchAttributes({ namespace });
    const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
    for (const key of KCM_SEARCH_ATTRIBUTES) {
      if (!have.customAttributes?.[key.name]) missing[key.name] = INDEXED[key.type]!;
    }
    if (Object.keys(missing).length) await c.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  });
}

import type { Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { KCM_SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

const INDEXED: Partial<Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType>> = {
  [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.TEXT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  [SearchAttributeType.INT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
};

/**
 * Register this project's custom search attributes where the namespace lacks them (idempotent).
 * A workflow that sets an unregistered one fails its workflow task over and over, so the manager
 * makes sure of them before any workflow starts; a namespace whose attributes cannot be added
 * with these credentials is an error that names them.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const missingNow = async () => {
    const have = await connection.operatorService.listSearchAttributes({ namespace });
    const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
    for (const key of KCM_SEARCH_ATTRIBUTES) {
      if (!have.customAttributes?.[key.name]) missing[key.name] = INDEXED[key.type]!;
    }
    return missing;
  };
  const missing = await missingNow();
  if (!Object.keys(missing).length) return;
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  } catch (e) {
    // replicas starting together race to add them; the loser finds them there
    if (Object.keys(await missingNow()).length) {
      const list = KCM_SEARCH_ATTRIBUTES.filter((k) => k.name in missing).map((k) => `${k.name} (${k.type})`).join(', ');
      throw new Error(`Temporal namespace ${namespace} lacks the search attributes ${list}, and adding them failed (${String(e)}); register them with \`temporal operator search-attribute create\``);
    }
  }
  await untilServed(connection, namespace, Object.keys(missing));
}

/**
 * A server with SQL visibility stores new attributes at once but validates a workflow's start
 * against each service's namespace cache, refreshed every few seconds: until then a start that
 * sets them is refused as invalid. A visibility query naming them is validated the same way, so
 * this asks one until it is accepted (the dev server accepts it at once).
 */
async function untilServed(connection: Connection, namespace: string, names: string[], timeoutMs = 60_000): Promise<void> {
  const query = names.map((n) => `${n} = 'temporal-kcm-probe'`).join(' AND ');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await connection.workflowService.countWorkflowExecutions({ namespace, query });
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`Temporal namespace ${namespace} has the search attributes ${names.join(', ')} but did not accept them in a query within ${timeoutMs / 1000}s (${String(e)})`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

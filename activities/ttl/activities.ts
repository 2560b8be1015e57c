import type { Logger } from 'pino';
import { pool } from '../../workflows/runtime/pool';
import { heartbeat } from '../kube/heartbeat';
import type { FieldMask } from '../informers/fields';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { TTL_ANNOTATION } from '../../workflows/ttl/logic';

/** What the route reads of a node: its name and annotations. */
export const TTL_NODE_FIELDS: FieldMask = { metadata: true };

export const ttlAnnotationOf = (o: KubeObject): string | null => o.metadata?.annotations?.[TTL_ANNOTATION] ?? null;

export interface SetNodeTtlRequest {
  nodes: string[];
  ttlSeconds: number;
  /** why, in words, for the history */
  reason: string;
}

export interface SetNodeTtlResult {
  patched: string[];
  gone: string[];
}

export interface TtlDeps {
  rest: KubeRest;
  logger: Logger;
  /** upstream's TTL controller records no events; accepted so the manager's deps fit */
  recordEvent?: RecordEvent;
}

/** upstream's TTL controller runs 5 workers */
const CONCURRENCY = 5;

/** The TTL controller's one write: the annotation, by a strategic merge patch as upstream's. */
export function createTtlActivities(deps: TtlDeps) {
  const log = deps.logger.child({ controller: 'ttl' });
  return {
    async setNodeTtl(req: SetNodeTtlRequest): Promise<SetNodeTtlResult> {
      return apiCall(async () => {
        const out: SetNodeTtlResult = { patched: [], gone: [] };
        await pool(req.nodes, CONCURRENCY, async (node) => {
          try {
            await deps.rest.request('PATCH', resourcePath(RESOURCES.nodes, undefined, node), {
              contentType: 'application/strategic-merge-patch+json',
              body: { metadata: { annotations: { [TTL_ANNOTATION]: String(req.ttlSeconds) } } },
            });
            out.patched.push(node);
            log.info({ node, ttlSeconds: req.ttlSeconds }, 'changed ttl annotation');
          } catch (e) {
            if (!isStatus(e, 404)) throw e;
            out.gone.push(node);
          }
          heartbeat(out.patched.length);
        });
        return out;
      });
    },
  };
}

export type TtlActivities = ReturnType<typeof createTtlActivities>;

import { CONTROLLER, EXPIRATION_KEY, isCleanerSecret } from '../../workflows/tokencleaner/logic';
import {
  mergeTokenCleanerEvents,
  tokenCleanerWorkflow,
  tokenCleanerWorkflowId,
  type TokenCleanerEvent,
  type TokenCleanerWorkflowInput,
} from '../../workflows/tokencleaner/workflow';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';

type CachedSecret = KubeObject & { type?: string; data?: Record<string, string> };

/** What the cleaner reads of a cached Secret: its type and the digest of its `expiration`. */
export const TOKEN_CLEANER_FIELDS: FieldMask = { metadata: true, type: true, data: { [EXPIRATION_KEY]: true } };

/** The watch's view: whether the Secret is the cleaner's, and the digest of its expiration ('' when none). */
export function cachedToken(o: KubeObject): { namespace: string; name: string; uid: string; mine: boolean; expirationDigest: string } {
  const s = o as CachedSecret;
  const m = s.metadata ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    mine: isCleanerSecret(m.namespace ?? '', s.type),
    // the cache keeps the SHA-256 of each value ('' when empty), never the value
    expirationDigest: s.data?.[EXPIRATION_KEY] ?? '',
  };
}

/**
 * Routes of the token cleaner, as upstream's filtered add and update handlers enqueue: a bootstrap
 * token Secret in kube-system that has an expiration starts (or re-times) its workflow. One without
 * an expiration never expires, so no workflow is started for it; a later expiration starts one.
 */
export function tokenCleanerRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  cache.watch(RESOURCES.secrets, TOKEN_CLEANER_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') return;
      const t = cachedToken(ev.obj);
      if (!t.mine || !t.expirationDigest) return;
      if (ev.source === 'watch' && ev.type === 'updated') {
        const before = cachedToken(ev.old);
        if (before.mine && before.uid === t.uid && before.expirationDigest === t.expirationDigest) return;
      }
      const args: TokenCleanerWorkflowInput = { namespace: t.namespace, name: t.name, uid: t.uid, tuning: input.tuning };
      const event: TokenCleanerEvent = { uid: t.uid };
      signaller.queue({
        controller: CONTROLLER, workflow: tokenCleanerWorkflow, kind: 'Secret', namespace: t.namespace, name: t.name,
        uid: t.uid, args, workflowId: tokenCleanerWorkflowId(t.namespace, t.name),
      }, event, mergeTokenCleanerEvents);
    },
  });

  return {};
}

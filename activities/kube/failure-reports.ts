import type { ForbiddenReport, RunObject, ThrowStage, ThrownReport } from '../../workflows/runtime/api-rejections';
import type { ControllerDeps } from '../../workers/descriptor';
import { RESOURCES, apiVersionOf } from './resources';

const API_VERSION_OF_KIND = new Map(Object.values(RESOURCES).map((r) => [r.kind, apiVersionOf(r)]));

/** The Event's reason when a controller's own code threw on an object (ours only: see COMPATIBILITY.md). */
export const RECONCILE_ERROR_REASON = 'ReconcileError';

const involved = (o: RunObject) => ({ apiVersion: API_VERSION_OF_KIND.get(o.kind) ?? '', kind: o.kind, namespace: o.namespace, name: o.name, uid: o.uid });
const keyOf = (o: RunObject) => (o.namespace ? `${o.namespace}/${o.name}` : o.name);
const WHERE: Record<ThrowStage, string> = { route: 'routing a change of it', event: 'folding an event of it in', reconcile: 'reconciling it', activity: 'in an activity for it' };

/**
 * The Warning Event of a throw on an object. reportThrown writes it for a workflow's throw; the
 * informer writes it for a route's throw, which its cache has already logged.
 */
export function recordThrown(component: string, deps: Pick<ControllerDeps, 'recordEvent'>, req: Pick<ThrownReport, 'controller' | 'object' | 'stage' | 'message'>): void {
  deps.recordEvent(component, involved(req.object), 'Warning', RECONCILE_ERROR_REASON, `the ${req.controller} controller threw ${WHERE[req.stage]} and retries with backoff: ${req.message}`);
}

/**
 * What every object loop calls when a reconcile fails in a way the object's owner should see on
 * the object: a Warning Event, written with the controller's own rights, and a log line. The
 * LastError memo and KcmLastError carry the same text (the object loop sets them).
 */
export function createFailureReporter(component: string, deps: ControllerDeps) {
  return {
    /**
     * The authorizer refused a call (403: a right is missing). Upstream's controllers log such an
     * error and record an Event for a refused write; a refused read they never meet (they read
     * through informers), so ours reports that as well, rather than back off in silence.
     */
    async reportForbidden(req: ForbiddenReport): Promise<void> {
      deps.logger.warn({ controller: req.controller, key: keyOf(req.object), kind: req.object.kind, error: req.message }, 'the authorizer refused the controller a call (403): a right is missing; the reconcile backs off');
      deps.recordEvent(component, involved(req.object), 'Warning', 'Forbidden', req.message);
    },
    /**
     * The controller's own code threw on this object: a bug, or an object it cannot handle. Upstream
     * would panic (and the whole manager restart, over and over, if the object stays); here only
     * this object backs off, and the Event says so where `kubectl describe` shows it.
     */
    async reportThrown(req: ThrownReport): Promise<void> {
      deps.logger.error({ controller: req.controller, key: keyOf(req.object), kind: req.object.kind, stage: req.stage, error: req.message }, 'the controller threw on this object; it is retried with backoff');
      recordThrown(component, deps, req);
    },
  };
}

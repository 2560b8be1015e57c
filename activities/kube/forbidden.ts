import type { ForbiddenReport } from '../../workflows/runtime/api-rejections';
import type { ControllerDeps } from '../../workers/descriptor';
import { RESOURCES, apiVersionOf } from './resources';

const API_VERSION_OF_KIND = new Map(Object.values(RESOURCES).map((r) => [r.kind, apiVersionOf(r)]));

/**
 * A controller's reconcile was refused by the authorizer (403: a right is missing): the Warning
 * Event `Forbidden` on the object the run is about, written with the controller's own rights, and a
 * log line. Upstream's controllers log such an error and record an Event for a refused write; a
 * refused read they never meet (they read through informers), so ours reports that as well, rather
 * than back off in silence. KcmLastError carries the same text (the object loop sets it).
 */
export function createForbiddenReporter(component: string, deps: ControllerDeps) {
  return {
    async reportForbidden(req: ForbiddenReport): Promise<void> {
      const o = req.object;
      const key = o.namespace ? `${o.namespace}/${o.name}` : o.name;
      deps.logger.warn({ controller: req.controller, key, kind: o.kind, error: req.message }, 'the authorizer refused the controller a call (403): a right is missing; the reconcile backs off');
      deps.recordEvent(component, { apiVersion: API_VERSION_OF_KIND.get(o.kind) ?? '', kind: o.kind, namespace: o.namespace, name: o.name, uid: o.uid }, 'Warning', 'Forbidden', req.message);
    },
  };
}

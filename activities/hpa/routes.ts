import { hpaWorkflow, hpaWorkflowId, mergeHpaNudges, CONTROLLER, type HpaWorkflowInput } from '../../workflows/hpa/workflow';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { syncPeriodMs } from './settings';

const HPA_FIELDS = { metadata: { name: true, namespace: true, uid: true } } as const;

/**
 * Routes of the horizontal-pod-autoscaler: an HPA seen for the first time (a watch add, or any
 * list, so a run lost meanwhile comes back) starts its workflow, which then syncs on its own
 * clock. Updates send nothing: upstream's queue delays every enqueue by the sync period, so a
 * change never brings a sync forward, and the run ends by itself at the first sync that finds
 * its HPA gone.
 */
export function hpaRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;
  const period = syncPeriodMs(input.flags);

  cache.watch(RESOURCES.horizontalPodAutoscalers, HPA_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') return;
      if (ev.type === 'updated' && ev.source === 'watch') return;
      const namespace = ev.obj.metadata?.namespace ?? '';
      const name = ev.obj.metadata?.name ?? '';
      const args: HpaWorkflowInput = { namespace, name, syncPeriodMs: period, tuning: input.tuning };
      signaller.queue({
        controller: CONTROLLER, workflow: hpaWorkflow, kind: 'HorizontalPodAutoscaler', namespace, name,
        uid: ev.obj.metadata?.uid ?? '', args, workflowId: hpaWorkflowId(namespace, name),
      }, { reason: ev.source === 'watch' ? 'HPA added' : 'HPA listed' }, mergeHpaNudges);
    },
  });

  return {};
}

import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { PODS_BY_NODE } from '../informers/indexes';
import type { Store } from '../informers/store';
import { RESOURCES } from '../kube/resources';
import type { KubeObject } from '../kube/projections';
import { flagValue } from '../../workers/flags';
import {
  CONTROLLER,
  ConditionStatus,
  EXCLUDE_DISRUPTION_LABEL,
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  labelsToReconcile,
  noScheduleDiff,
  zoneKey,
} from '../../workflows/node-lifecycle/logic';
import type { NodeLifecycleEvent, NodeReport } from '../../workflows/node-lifecycle/types';
import {
  NodeLifecycleWorkflowInput,
  mergeNodeLifecycleEvents,
  nodeLifecycleWorkflow,
  nodeLifecycleWorkflowId,
} from '../../workflows/node-lifecycle/workflow';
import { LIFECYCLE_LEASE_FIELDS, LIFECYCLE_NODE_FIELDS, LIFECYCLE_POD_FIELDS, type NodeObject } from './activities';
import { NodeHealthTracker } from './health';
import { NODE_MONITOR_PERIOD, nodeLifecycleSettings } from './settings';

const NODE_LEASE_NAMESPACE = 'kube-node-lease';

type PodObject = KubeObject & { spec?: { nodeName?: string }; status?: { conditions?: Array<{ type?: string; status?: string }> | null } };

const readyOf = (n: NodeObject) => n.status?.conditions?.find((c) => c.type === 'Ready');
const hasTaint = (n: NodeObject, key: string) => (n.spec?.taints ?? []).some((t) => t.key === key && t.effect === 'NoExecute');
const nodeNameOf = (p: KubeObject) => (p as PodObject).spec?.nodeName ?? '';

/**
 * Routes of the node lifecycle controller. The informer is where kubelets are heard (node
 * heartbeats and Lease renewals arrive here), so it keeps the time each was last heard and, every
 * --node-monitor-period, reports to the controller's one workflow each node whose report changed:
 * its Ready status, whether it has gone silent, its managed taints, and whether its NoSchedule
 * taints or beta labels are out of line. An idle healthy cluster sends nothing.
 */
export function nodeLifecycleRoutes({ input, signaller, cache, baseTaskQueue }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;
  const settings = nodeLifecycleSettings(input.flags);
  const grace = { monitorMs: settings.monitorGraceMs, startupMs: settings.startupGraceMs };
  const tracker = new NodeHealthTracker();
  /** each node's last report as sent, without its probe time */
  const sent = new Map<string, string>();
  // Each store's listeners can be called while it is registered (a store another controller listed
  // already replays its objects), before the other store exists: hence the two are read as optional.
  let nodes: Store | undefined;
  let pods: Store | undefined;

  const queue = (event: NodeLifecycleEvent) => {
    const args: NodeLifecycleWorkflowInput = { settings, tuning: input.tuning };
    signaller.queue({ controller: CONTROLLER, workflow: nodeLifecycleWorkflow, kind: 'Node', namespace: '', name: '', uid: '', args,
      workflowId: nodeLifecycleWorkflowId(baseTaskQueue) }, event, mergeNodeLifecycleEvents, true);
  };

  const report = (n: NodeObject, nowMs: number): NodeReport => {
    const name = n.metadata?.name ?? '';
    const ready = readyOf(n);
    const diff = noScheduleDiff(n.status?.conditions ?? [], n.spec?.unschedulable === true, n.spec?.taints ?? []);
    return {
      uid: n.metadata?.uid ?? '',
      zone: zoneKey(n.metadata?.labels),
      excluded: EXCLUDE_DISRUPTION_LABEL in (n.metadata?.labels ?? {}),
      ...(ready ? { ready: ready.status as ConditionStatus } : {}),
      ...(ready?.lastHeartbeatTime ? { heartbeat: ready.lastHeartbeatTime } : {}),
      stale: tracker.stale(name, nowMs, grace),
      probeAtMs: tracker.probeAt(name) ?? nowMs,
      unreachableTaint: hasTaint(n, TAINT_UNREACHABLE),
      notReadyTaint: hasTaint(n, TAINT_NOT_READY),
      noScheduleOutOfSync: diff.add.length + diff.remove.length > 0,
      labelsOutOfSync: Object.keys(labelsToReconcile(n.metadata?.labels)).length > 0,
      // unknown until the pods are listed; then the report goes again (a pass skips a bare node's pod list)
      ...(pods?.synced ? { hasPods: pods.countByIndex(PODS_BY_NODE, name) > 0 } : {}),
    };
  };

  /** Sends the node's report if anything but its probe time changed since the last one sent. */
  const send = (n: NodeObject, nowMs: number) => {
    const name = n.metadata?.name ?? '';
    const r = report(n, nowMs);
    const key = JSON.stringify({ ...r, probeAtMs: 0, heartbeat: r.stale ? r.heartbeat : undefined });
    if (sent.get(name) === key) return;
    sent.set(name, key);
    queue({ nodes: { [name]: r } });
  };

  nodes = cache.watch(RESOURCES.nodes, LIFECYCLE_NODE_FIELDS, {
    onEvent(ev) {
      const now = Date.now();
      if (ev.type === 'deleted') {
        const name = ev.old.metadata?.name ?? '';
        tracker.forget(name);
        sent.delete(name);
        queue({ nodesGone: { [name]: ev.old.metadata?.uid ?? '' } });
        return;
      }
      const n = ev.obj as NodeObject;
      // a list (the first, or after a gap) sends every node again: a workflow that lost track is set right
      if (ev.source !== 'watch') sent.delete(n.metadata?.name ?? '');
      const ready = readyOf(n);
      tracker.observeNode({
        name: n.metadata?.name ?? '',
        creationMs: Date.parse(n.metadata?.creationTimestamp ?? '') || now,
        ...(ready ? { ready: { heartbeat: ready.lastHeartbeatTime, transition: ready.lastTransitionTime } } : {}),
      }, now);
      send(n, now);
    },
  });
  // each node on its own: one the route throws on leaves the others their report
  const resendAll = nodes.eachObject((n) => resend(n.metadata?.name ?? ''));

  cache.watch(RESOURCES.leases, LIFECYCLE_LEASE_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted' || ev.obj.metadata?.namespace !== NODE_LEASE_NAMESPACE) return;
      const renew = (ev.obj as KubeObject & { spec?: { renewTime?: string } }).spec?.renewTime;
      tracker.observeLease(ev.obj.metadata?.name ?? '', renew ? Date.parse(renew) : undefined, Date.now());
    },
  });

  /** Sends the named node's report again if it changed (whether it has pods). */
  const resend = (name: string) => {
    const n = name ? nodes?.getByName('', name) : undefined;
    if (n) send(n as NodeObject, Date.now());
  };
  pods = cache.watch(RESOURCES.pods, LIFECYCLE_POD_FIELDS, {
    onListed: () => resendAll(),
    onEvent(ev) {
      // a pod bound, moved or gone: its node may have gained its first pod or lost its last (lists end in onListed)
      const was = ev.type === 'added' ? '' : nodeNameOf(ev.old);
      const is = ev.type === 'deleted' ? '' : nodeNameOf(ev.obj);
      if (ev.source === 'watch' && was !== is) {
        resend(was);
        resend(is);
      }
      // upstream's pod handler: a pod newly bound (or seen for the first time since start-up) on a node that is not Ready
      if (ev.type === 'deleted' || ev.source !== 'watch') return;
      const node = nodeNameOf(ev.obj);
      if (!node || (ev.type === 'updated' && nodeNameOf(ev.old) === node)) return;
      const ready = (ev.obj as PodObject).status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status === 'False') return;
      const n = nodes?.getByName('', node) as NodeObject | undefined;
      const nodeReady = n ? readyOf(n)?.status : undefined;
      if (!n || nodeReady === undefined || nodeReady === 'True') return;
      queue({ pods: [{ namespace: ev.obj.metadata?.namespace ?? '', name: ev.obj.metadata?.name ?? '', node }] });
    },
  });
  pods.addIndex(PODS_BY_NODE);
  // a store already listed by another controller replayed its pods before it was indexed here
  if (pods.synced) for (const n of nodes.list()) resend(n.metadata?.name ?? '');

  return {
    sizes: () => ({ nodeHealth: tracker.size }),
    periodic: {
      everyMs: flagValue(input.flags, NODE_MONITOR_PERIOD),
      run(nowMs) {
        for (const n of nodes?.list() ?? []) send(n as NodeObject, nowMs);
      },
    },
  };
}

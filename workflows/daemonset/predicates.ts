/*
 * Which nodes a DaemonSet's pod belongs on, and what its pods look like (upstream
 * pkg/controller/daemon: NodeShouldRunDaemonPod, predicates, and util/daemonset_util.go).
 */
import { requiredNodeAffinityMatches, type AffinityView } from '../common/node-affinity';
import { scaledValue, type IntOrPercent } from '../common/int-or-percent';
import { untoleratedTaint, type TaintView, type TolerationView } from '../common/tolerations';
import { REVISION_HASH_LABEL } from '../common/controller-history';

/** the label of the deprecated templateGeneration, still honoured when a DaemonSet carries the annotation */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** What the predicates read of a DaemonSet's pod spec. */
export interface DaemonPodSpecView {
  nodeName?: string;
  nodeSelector?: Record<string, string> | null;
  affinity?: AffinityView | null;
  tolerations?: TolerationView[] | null;
  hostNetwork?: boolean;
}

/** What the predicates read of a node. */
export interface DaemonNodeView {
  name: string;
  labels?: Record<string, string>;
  taints?: TaintView[];
}

/** The tolerations every daemon pod gets, so node problems never evict or keep it away (AddOrUpdateDaemonPodTolerations). */
function defaultTolerations(hostNetwork: boolean): TolerationView[] {
  const t = (key: string, effect: string): TolerationView => ({ key, operator: 'Exists', effect });
  return [
    t('node.kubernetes.io/not-ready', 'NoExecute'),
    t('node.kubernetes.io/unreachable', 'NoExecute'),
    t('node.kubernetes.io/disk-pressure', 'NoSchedule'),
    t('node.kubernetes.io/memory-pressure', 'NoSchedule'),
    t('node.kubernetes.io/pid-pressure', 'NoSchedule'),
    t('node.kubernetes.io/unschedulable', 'NoSchedule'),
    ...(hostNetwork ? [t('node.kubernetes.io/network-unavailable', 'NoSchedule')] : []),
  ];
}

/** Toleration.MatchToleration: the same key, operator, value and effect (its seconds aside). */
const sameToleration = (a: TolerationView, b: TolerationView) =>
  (a.key ?? '') === (b.key ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '') && (a.effect ?? '') === (b.effect ?? '');

/**
 * The pod's tolerations with the daemon defaults added, as v1helper.AddOrUpdateTolerationInPodSpec
 * adds each: one that matches a user's toleration replaces it in place (so a user's 300 s
 * toleration of not-ready becomes forever), a new one goes at the end.
 */
export function daemonPodTolerations(tolerations: readonly TolerationView[] | null | undefined, hostNetwork: boolean): TolerationView[] {
  let out = [...(tolerations ?? [])];
  for (const d of defaultTolerations(hostNetwork)) {
    const exact = out.some((t) => sameToleration(t, d) && t.tolerationSeconds === undefined);
    if (exact) continue;
    if (out.some((t) => sameToleration(t, d))) out = out.map((t) => (sameToleration(t, d) ? { ...d } : t));
    else out.push({ ...d });
  }
  return out;
}

/**
 * NodeShouldRunDaemonPod: `shouldRun` when a new daemon pod belongs on the node; `shouldContinueRunning`
 * when an existing one may stay (only NoExecute taints it does not tolerate send it away).
 */
export function nodeShouldRunDaemonPod(node: DaemonNodeView, spec: DaemonPodSpecView): { shouldRun: boolean; shouldContinueRunning: boolean } {
  if (spec.nodeName && spec.nodeName !== node.name) return { shouldRun: false, shouldContinueRunning: false };
  if (!requiredNodeAffinityMatches(spec.nodeSelector, spec.affinity, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = daemonPodTolerations(spec.tolerations, !!spec.hostNetwork);
  if (untoleratedTaint(node.taints, tolerations, (t) => t.effect === 'NoExecute' || t.effect === 'NoSchedule')) {
    return { shouldRun: false, shouldContinueRunning: !untoleratedTaint(node.taints, tolerations, (t) => t.effect === 'NoExecute') };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

/**
 * ReplaceDaemonSetPodNodeNameNodeAffinity: the pod's required node affinity becomes the one term
 * `metadata.name In [node]`, which pins the pod to its node through the scheduler; the rest of the
 * affinity stays.
 */
export function pinnedAffinity(affinity: AffinityView | null | undefined, nodeName: string): AffinityView {
  const required = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }] };
  const a = affinity ?? {};
  const na = a.nodeAffinity ?? {};
  return { ...a, nodeAffinity: { ...na, requiredDuringSchedulingIgnoredDuringExecution: required } };
}

/** The node a daemon pod is for: its nodeName, else its pinning term (GetTargetNodeName). */
export function targetNodeName(pod: { nodeName?: string; affinity?: AffinityView | null }): string | undefined {
  if (pod.nodeName) return pod.nodeName;
  for (const term of pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of term.matchFields ?? []) {
      if (f.key === 'metadata.name' && f.operator === 'In') return (f.values ?? []).length === 1 ? f.values![0] : undefined;
    }
  }
  return undefined;
}

/** IsPodUpdated: the pod carries the current revision's hash (or the deprecated template generation). */
export function isPodUpdated(labels: Record<string, string> | undefined, hash: string, templateGeneration?: string): boolean {
  const l = labels ?? {};
  return (hash !== '' && l[REVISION_HASH_LABEL] === hash) || (templateGeneration !== undefined && l[TEMPLATE_GENERATION_LABEL] === templateGeneration);
}

/** What the rolling update reads of a DaemonSet's strategy. */
export interface DaemonUpdateStrategy {
  type: 'RollingUpdate' | 'OnDelete';
  maxUnavailable?: IntOrPercent;
  maxSurge?: IntOrPercent;
}

/** SurgeCount: how many nodes may run an old and a new pod at once (0 unless RollingUpdate sets maxSurge). */
export function surgeCount(s: DaemonUpdateStrategy, numberToSchedule: number): { value: number; error?: string } {
  if (s.type !== 'RollingUpdate' || s.maxSurge === undefined) return { value: 0 };
  return scaledValue(s.maxSurge, numberToSchedule, true);
}

/** UnavailableCount: how many nodes may be without an available pod during the update. */
export function unavailableCount(s: DaemonUpdateStrategy, numberToSchedule: number): { value: number; error?: string } {
  if (s.type !== 'RollingUpdate') return { value: 0 };
  return scaledValue(s.maxUnavailable ?? null, numberToSchedule, true);
}

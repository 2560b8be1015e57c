import { log, proxyActivities } from '@temporalio/workflow';
import type { ServiceCidrActivities } from '../../activities/servicecidr/activities';
import { newerVersion } from '../common/resource-version';
import { apiBatches } from '../runtime/activity-options';
import { objectIdentity } from '../runtime/identity';
import { DEFAULT_TUNING, type LoopTuning, type ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  CONTROLLER, READY_CONDITION, TERMINATING_CONDITION, finalizeStep, sameCondition, serviceCidrNeed,
  type DeletionCheck, type FinalizeStep, type ServiceCidrView,
} from './logic';

/** What the watch sends: the ServiceCIDR as it stands, whenever it, an overlapping ServiceCIDR or an IPAddress inside it changed. */
export interface ServiceCidrEvent {
  cidr: ServiceCidrView;
}

export interface ServiceCidrWorkflowInput {
  name: string;
  /** the ServiceCIDR this run decides for; one recreated under the name gets a run of its own */
  uid: string;
  /** the ServiceCIDR as last seen, carried over a continue-as-new */
  cidr?: ServiceCidrView;
  tuning?: Partial<LoopTuning>;
}

export function serviceCidrWorkflowId(name: string): string {
  return `${CONTROLLER}/${name}`;
}

/** The latest view wins: each is the whole ServiceCIDR as the controller reads it. */
export function mergeServiceCidrEvents(_earlier: ServiceCidrEvent, later: ServiceCidrEvent): ServiceCidrEvent {
  return later;
}

const ECHO_WAIT_MS = 5000;

// the deletion check may list every IPAddress (heartbeating per page); the writes are single calls
const io = proxyActivities<ServiceCidrActivities>(apiBatches('5 seconds'));

/**
 * One episode of "this ServiceCIDR needs a write": the watch starts it for a ServiceCIDR without
 * the finalizer or upstream's Ready condition, and for one being deleted that still holds the
 * finalizer (on its own change, an IPAddress inside it coming or going, or a new overlapping
 * ServiceCIDR). A live ServiceCIDR gets the finalizer, then Ready=True. One being deleted is
 * checked against every ServiceCIDR and allocated IPAddress: while an address would be orphaned
 * it gets Ready=False/Terminating and the run ends (the event that may free it starts the next);
 * otherwise the run waits out the grace period after its deletionTimestamp, checks again, and
 * removes the finalizer.
 */
export async function serviceCidrWorkflow(input: ServiceCidrWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const id = objectIdentity<typeof serviceCidrWorkflow>(input.uid, (uid) => [{ ...input, uid, cidr: undefined }]);
  let cidr: ServiceCidrView | undefined = input.cidr;
  let check: DeletionCheck | undefined;
  let step: FinalizeStep | undefined;
  let last = '';
  /** the version this run's last write made: a view the watch sends from before it is stale */
  let wroteAt: string | undefined;
  const wrote = (rv: string) => {
    wroteAt = rv;
    echoed = false;
    if (cidr) cidr = { ...cidr, resourceVersion: rv };
  };
  /**
   * After writing the finalizer and Ready, the run waits (up to ECHO_WAIT_MS) for the watch to
   * show its own write before it ends: the versions in between would otherwise start a run that
   * writes Ready again.
   */
  let echoed = true;
  /** the last reconcile ended in that wait (a failed one did not: its retry writes what is missing) */
  let awaitingEcho = false;
  let signalled = false;

  const ref = (v: ServiceCidrView, reason: string) => ({ reason, name: v.name, uid: v.uid });

  async function reconcile(): Promise<ReconcileResult> {
    const bySignal = signalled;
    signalled = false;
    // every run starts from a signal, which carries the ServiceCIDR; there is nothing to decide without it
    if (!cidr) return { finished: true };
    if (awaitingEcho && !echoed) {
      // the timer ran out before the watch caught up: end all the same; only older versions came: keep waiting
      if (!bySignal) return { finished: true };
      return { requeueAfterMs: ECHO_WAIT_MS };
    }
    awaitingEcho = false;
    await id.handOverIfNew(cidr.uid);
    id.learn(cidr.uid);
    const need = serviceCidrNeed(cidr);
    if (need === 'none') {
      last = 'nothing to write';
      return { finished: true };
    }

    if (need === 'ready') {
      const v = cidr;
      if (!v.finalized) {
        const r = await io.addServiceCidrFinalizer(ref(v, 'a ServiceCIDR that is not being deleted carries networking.k8s.io/service-cidr-finalizer'));
        last = `add finalizer: ${r.outcome}`;
        if (r.outcome !== 'written') return { finished: true };
        cidr = { ...v, finalized: true };
        wrote(r.resourceVersion);
      }
      if (!sameCondition(v.ready, READY_CONDITION)) {
        const r = await io.applyServiceCidrCondition({
          ...ref(v, `Ready is ${v.ready ? `${v.ready.status}/${v.ready.reason || '-'}` : 'missing'}; a live ServiceCIDR is Ready=True`), condition: READY_CONDITION,
        });
        last = `Ready=True: ${r.outcome}`;
        if (r.outcome === 'written') {
          cidr = { ...cidr, ready: READY_CONDITION };
          wrote(r.resourceVersion);
        }
      }
      if (echoed) return { finished: true };
      awaitingEcho = true;
      return { requeueAfterMs: ECHO_WAIT_MS };
    }

    // being deleted, still held: what would its deletion orphan?
    const r = await io.checkServiceCidrDeletion(ref(cidr, 'the ServiceCIDR is being deleted: may its finalizer go, or would an allocated IPAddress be left in no ServiceCIDR?'));
    if (r.gone) {
      last = 'gone';
      return { finished: true };
    }
    await id.handOverIfNew(r.view.uid);
    cidr = r.view;
    check = r.check;
    if (serviceCidrNeed(cidr) !== 'finalize') return { requeueAfterMs: 0 };
    step = finalizeStep(cidr, check, Date.now());
    switch (step.kind) {
      case 'blocked':
        last = `blocked by ${check.canDelete ? '' : check.blockingIp}`;
        return { finished: true };
      case 'mark-terminating': {
        const w = await io.applyServiceCidrCondition({
          ...ref(cidr, `IPAddress ${check.canDelete ? '' : check.blockingIp} was allocated from this ServiceCIDR alone: it stays, Ready=False/Terminating`),
          condition: TERMINATING_CONDITION,
        });
        last = `Ready=False/Terminating: ${w.outcome}`;
        log.info('deleting ServiceCIDR blocked by IP address', { ipAddress: check.canDelete ? undefined : check.blockingIp });
        return { finished: true };
      }
      case 'wait':
        last = 'deletable; waiting out the grace period';
        return { requeueAfterMs: step.ms };
      case 'remove-finalizer': {
        const why = check.canDelete && check.why === 'covered'
          ? `its prefixes lie in ${check.coveredBy.join(', ')} as well`
          : 'no allocated IPAddress lies in it alone';
        const w = await io.removeServiceCidrFinalizer(ref(cidr, `the ServiceCIDR is being deleted and ${why}: the finalizer goes`));
        last = `remove finalizer: ${w.outcome}`;
        return { finished: true };
      }
    }
  }

  await runObjectLoop<ServiceCidrEvent>({
    controller: CONTROLLER,
    tuning,
    drainBeforeFinish: true,
    apply(e) {
      signalled = true;
      // the watch may still be delivering the versions from before this run's own write
      if (wroteAt && cidr && e.cidr.uid === cidr.uid && newerVersion(wroteAt, e.cidr.resourceVersion)) return;
      echoed = true;
      cidr = e.cidr;
    },
    reconcile,
    describe: () => ({
      serviceCIDR: cidr?.name ?? input.name,
      cidrs: cidr?.cidrs,
      deleting: !!cidr?.deletionTimestamp,
      finalizer: cidr?.finalized,
      ready: cidr?.ready ? `${cidr.ready.status}${cidr.ready.reason ? `/${cidr.ready.reason}` : ''}` : undefined,
      need: cidr ? serviceCidrNeed(cidr) : undefined,
      blockedBy: check && !check.canDelete ? check.blockingIp : undefined,
      step: step?.kind,
      last,
    }),
    continueAsNewArgs: () => [{ ...input, uid: cidr?.uid ?? input.uid, cidr }],
  });
}

import { continueAsNew, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Workflow } from '@temporalio/common';
import { SA_UID } from '../search-attributes';
import { isPatched } from './patches';

/**
 * Which object a per-object workflow belongs to. The workflow ID is the object's name, but a name
 * can be deleted and taken by a new object with a new UID; that object must get a run of its own
 * (same workflow ID, continued as new) and never inherit this run's state. A run started by a
 * signal does not know the UID yet and learns it on its first observation.
 *
 * Every method issues exactly the commands the workflows spelled out by hand before (an upsert of
 * KcmUid, a continue-as-new), in the same places, so recorded histories replay unchanged.
 */
export class ObjectIdentity<F extends Workflow = Workflow> {
  private current: string | undefined;
  private next: string | undefined;

  constructor(
    uid: string | undefined,
    /** the arguments of the run that takes over when a new object holds the name */
    private readonly successorArgs?: (uid: string) => Parameters<F>,
  ) {
    this.current = uid;
  }

  /** the UID this run belongs to, once known */
  get uid(): string | undefined {
    return this.current;
  }

  /** The name now holds another object than this run's (only once the run knows its own). */
  isNew(uid: string): boolean {
    return !!this.current && uid !== this.current;
  }

  /** The first time the UID is learned, keeps it and sets the KcmUid search attribute; later calls do nothing. */
  learn(uid: string): void {
    if (this.current) return;
    this.current = uid;
    upsertSearchAttributes([{ key: SA_UID, value: uid }]);
  }

  /**
   * For a workflow that serves whichever object holds the name (a Service's Endpoints): takes this
   * UID as its own whenever it differs, and sets KcmUid to it.
   */
  follow(uid: string): void {
    if (uid === this.current) return;
    this.current = uid;
    upsertSearchAttributes([{ key: SA_UID, value: uid }]);
  }

  /**
   * Sets KcmUid to the UID the run was started with when the search attributes say otherwise: a
   * run continued as new for a new object inherits its predecessor's attributes.
   */
  publish(): void {
    if (this.current && workflowInfo().typedSearchAttributes.get(SA_UID) !== this.current) {
      upsertSearchAttributes([{ key: SA_UID, value: this.current }]);
    }
  }

  /** Ends this run now, continued as new for the object with this UID. */
  handOver(uid: string): Promise<never> {
    if (!this.successorArgs) throw new TypeError('objectIdentity: no successor arguments were given, so there is no run to hand over to');
    return continueAsNew<F>(...this.successorArgs(uid));
  }

  /**
   * When the name holds a new object, ends this run (continue-as-new for it). Inside a reconcile
   * the ContinueAsNew it throws passes through the object loop (patch continue-as-new-escapes-loop).
   */
  async handOverIfNew(uid: string): Promise<void> {
    if (this.isNew(uid)) await this.handOver(uid);
  }

  /**
   * For a workflow that lets its loop end before handing over: remembers the object that took the
   * name; handOverToSuccessor, after the loop, continues as new for it.
   */
  replacedBy(uid: string | undefined): void {
    this.next = uid;
  }

  /** the object that took the name, as given to replacedBy */
  get successor(): string | undefined {
    return this.next;
  }

  /** After the loop: continue as new for the object given to replacedBy, if any. */
  async handOverToSuccessor(): Promise<void> {
    if (this.next) await this.handOver(this.next);
  }
}

/**
 * The identity of a per-object workflow run:
 *
 *   const id = objectIdentity<typeof myWorkflow>(input.uid, (uid) => [{ ...input, uid }]);
 *   ...in reconcile, after observing the object:
 *   await id.handOverIfNew(obj.uid);   // a new object under the name: continue as new for it
 *   id.learn(obj.uid);                 // first time known: KcmUid search attribute
 */
export function objectIdentity<F extends Workflow = Workflow>(
  uid: string | undefined,
  successorArgs?: (uid: string) => Parameters<F>,
): ObjectIdentity<F> {
  const id = new ObjectIdentity<F>(uid, successorArgs);
  // A run handed over to a new object inherits its predecessor's KcmUid; every run now points it
  // at its own object from the start. Runs recorded before this did so only where the workflow
  // called publish() itself, hence the patch.
  if (isPatched('publish-uid')) id.publish();
  return id;
}

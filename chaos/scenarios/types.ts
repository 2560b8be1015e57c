import type { KubeRest } from '../../activities/kube/rest';
import type { AuditEvent } from '../../bench/lib/audit';

export type ChaosMode = 'full' | 'quick';

/** What a scenario runs in: its own namespace on the chaos stack, an unthrottled admin client. */
export interface ChaosContext {
  rest: KubeRest;
  ns: string;
  mode: ChaosMode;
  log: (line: string) => void;
}

/**
 * One workload the faults hit. The same steps run under upstream kube-controller-manager without
 * faults (the reference end state) and under replicas of ours with faults.
 */
export interface ChaosScenario {
  slug: string;
  /** e.g. "a 1000-pod rollout", for the report */
  title(mode: ChaosMode): string;
  /** short names both managers accept */
  controllers: string[];
  /** the starting state, made before any fault (e.g. the Deployment rolled out at image 1) */
  prepare(ctx: ChaosContext): Promise<void>;
  /** the change the faults hit */
  act(ctx: ChaosContext): Promise<void>;
  /** has the cluster reached the end state the change asks for? */
  converged(ctx: ChaosContext): Promise<boolean>;
  /** what a user sees at the end, without names that hold random parts, to set beside upstream's */
  outcome(ctx: ChaosContext): Promise<unknown>;
  /** what must never happen, read from the end state and the audit log since `act` */
  violations(ctx: ChaosContext, audit: AuditEvent[]): Promise<string[]>;
  /** what must never happen at any moment: read every second from `act` until the end state first holds */
  during?(ctx: ChaosContext): Promise<string[]>;
  /** removes what the scenario made, whatever state it was left in */
  cleanup(ctx: ChaosContext): Promise<void>;
}

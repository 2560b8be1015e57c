import { Context } from '@temporalio/activity';
import { noteBeat } from './fence';
import type { KubeRest } from './rest';

/** Heartbeats the running activity; a no-op outside one (unit tests call activities directly) and in a local one. */
export function heartbeat(details?: unknown): void {
  try {
    const ctx = Context.current();
    // a local activity cannot heartbeat: its workflow task's timeout covers a dead worker
    if (ctx.info.isLocal) return;
    ctx.heartbeat(details);
    noteBeat();
  } catch {
    /* not inside an activity */
  }
}

/**
 * The client with a heartbeat after every request it answers: an activity of a few calls, run
 * with a heartbeat timeout, is then retried elsewhere seconds after its replica dies instead of
 * after its whole start-to-close limit.
 */
export function heartbeating(rest: KubeRest): KubeRest {
  const beating = Object.create(rest) as KubeRest;
  beating.request = async (method, path, ro) => {
    try {
      return await rest.request(method, path, ro);
    } finally {
      heartbeat();
    }
  };
  return beating;
}

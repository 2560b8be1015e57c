import { CONTROLLER, needsApproval } from '../../workflows/csrapproving/logic';
import { csrApprovingWorkflow, csrApprovingWorkflowId } from '../../workflows/csrapproving/workflow';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { registerCsrRoutes } from '../certificates/routes';

/**
 * Routes of the CSR approver. Upstream's handler sees every CSR and acts on pending kubelet
 * client requests only; here only those (pending, recognized by a recognizer) start a workflow,
 * so approved, denied, issued and foreign CSRs start nothing, at a relist either.
 */
export function csrApprovingRoutes(ctx: RouteContext): RouteFamily | undefined {
  if (!ctx.input.controllers.includes(CONTROLLER)) return undefined;
  return registerCsrRoutes(ctx, { controller: CONTROLLER, workflow: csrApprovingWorkflow, workflowId: csrApprovingWorkflowId, wanted: needsApproval });
}

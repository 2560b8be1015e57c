import { CONTROLLER, needsSigning, signerPlan, startedSigners } from '../../workflows/csrsigning/logic';
import { csrSigningWorkflow, csrSigningWorkflowId } from '../../workflows/csrsigning/workflow';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import { registerCsrRoutes } from '../certificates/routes';
import { signingFilesOf } from './settings';

/**
 * Routes of the CSR signer: an approved CSR, neither denied nor failed nor issued, for one of the
 * signers this deployment's flags start, gets a workflow; every other CSR starts nothing.
 */
export function csrSigningRoutes(ctx: RouteContext): RouteFamily | undefined {
  if (!ctx.input.controllers.includes(CONTROLLER)) return undefined;
  const signers = startedSigners(signerPlan(signingFilesOf(ctx.input.flags)));
  if (signers.length === 0) return undefined;
  return registerCsrRoutes(ctx, { controller: CONTROLLER, workflow: csrSigningWorkflow, workflowId: csrSigningWorkflowId, wanted: (csr) => needsSigning(csr, signers) });
}

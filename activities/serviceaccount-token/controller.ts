import type { ControllerDescriptor } from '../../workers/descriptor';
import { fileFlag, flagValue, intFlag, type FlagValues } from '../../workers/flags';
import { tokenSecretWorkflow } from '../../workflows/serviceaccount-token/workflow';
import { TokenControllerOptions, createTokenActivities, tokenControllerConfigError } from './activities';
import { tokenRoutes } from './routes';

export const SERVICE_ACCOUNT_PRIVATE_KEY_FILE = fileFlag(
  'service-account-private-key-file',
  'PEM private key that signs service account tokens; the serviceaccount-token controller needs it',
);

/** The key and the CA the tokens carry: --root-ca-file, else the kubeconfig's CA, as upstream falls back. */
function tokenOptions(ctx: { flags: FlagValues; rootCa?: string; rootCaFile?: string }): TokenControllerOptions {
  return {
    privateKeyFile: flagValue(ctx.flags, SERVICE_ACCOUNT_PRIVATE_KEY_FILE),
    ...(ctx.rootCaFile ? { rootCaFile: ctx.rootCaFile } : { kubeconfigCa: ctx.rootCa }),
  };
}

export const serviceAccountTokenController: ControllerDescriptor = {
  name: 'serviceaccount-token-controller',
  short: 'serviceaccount-token',
  // it always runs with the manager's own credentials, as upstream's token controller does
  clientName: 'tokens-controller',
  concurrency: intFlag('concurrent-serviceaccount-token-syncs', 5, 'how many service account token secrets may be filled at the same time'),
  flags: [SERVICE_ACCOUNT_PRIVATE_KEY_FILE],
  workflows: [tokenSecretWorkflow],
  activities: (ctx) => createTokenActivities({ ...ctx, ...tokenOptions(ctx) }),
  routes: tokenRoutes,
  // an unusable key or CA file stops the manager, as it stops upstream; no key just leaves the controller out
  precondition: (ctx) => tokenControllerConfigError(tokenOptions(ctx)),
};

import type { ControllerDescriptor } from '../../workers/descriptor';
import { bootstrapSignerWorkflow } from '../../workflows/bootstrapsigner/workflow';
import { createBootstrapSignerActivities } from './activities';
import { bootstrapSignerRoutes } from './routes';

export const bootstrapSignerController: ControllerDescriptor = {
  name: 'bootstrap-signer-controller',
  short: 'bootstrapsigner',
  // upstream's client name; its Roles are system:controller:bootstrap-signer in kube-system
  // (secrets get, list, watch) and in kube-public (configmaps get, list, watch; update cluster-info)
  serviceAccount: 'bootstrap-signer',
  // upstream runs one worker on its one work item
  concurrency: 1,
  workflows: [bootstrapSignerWorkflow],
  activities: (ctx) => createBootstrapSignerActivities(ctx),
  routes: bootstrapSignerRoutes,
};

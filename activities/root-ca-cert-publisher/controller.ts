import type { ControllerDescriptor } from '../../workers/descriptor';
import { rootCaWorkflow } from '../../workflows/root-ca-cert-publisher/workflow';
import { createRootCaActivities } from './activities';
import { rootCaRoutes } from './routes';

export const rootCaCertPublisherController: ControllerDescriptor = {
  name: 'root-ca-certificate-publisher-controller',
  short: 'root-ca-cert-publisher',
  serviceAccount: 'root-ca-cert-publisher',
  concurrency: 1,
  workflows: [rootCaWorkflow],
  activities: (ctx) => createRootCaActivities({ ...ctx, reader: ctx.reader, rootCa: ctx.rootCa ?? '' }),
  routes: rootCaRoutes,
  precondition: ({ rootCa }) => (rootCa ? undefined : { fatal: false, message: 'no --root-ca-file given and the kubeconfig names no CA' }),
};

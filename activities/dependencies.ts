import type { Services } from '../src/app/services.ts';

/** What the activity factories use of the application services (built by src/app's createServices). */
export type ActivityDependencies = Pick<
  Services,
  | 'pool'
  | 'config'
  | 'tenantConfig'
  | 'logger'
  | 'skills'
  | 'skillManage'
  | 'rollout'
  | 'embedder'
  | 'recall'
  | 'recallSpaces'
  | 'distiller'
  | 'reviewer'
>;

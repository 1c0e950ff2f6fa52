import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { StackCheckResult } from '../activities/stack-check.ts';

const { checkDatabase } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

/** A round trip through the whole stack: client → Temporal → worker → Postgres. */
export async function stackCheck(): Promise<StackCheckResult> {
  return await checkDatabase();
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimReviewRecords, failReviewRecord, findReview, finishReviewRecords } from '../../src/review/review-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

/** A batch review claims its runs: each run is reviewed by one execution, at most once, and a retried claim is stable. */
describe('review claims', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase();
  });

  afterAll(async () => {
    await database?.close();
  });

  it('gives each run to the first execution that claims it; a retried claim returns the same runs', async () => {
    const { pool } = database;
    expect(await claimReviewRecords(pool, 'claims', ['a', 'b'], 'review/claims/a..b+2-1')).toEqual(['a', 'b']);
    expect(await claimReviewRecords(pool, 'claims', ['b', 'c'], 'review/claims/b..c+2-2')).toEqual(['c']);
    expect(await claimReviewRecords(pool, 'claims', ['a', 'b'], 'review/claims/a..b+2-1')).toEqual(['a', 'b']);
    // Another tenant's run of the same id is its own.
    expect(await claimReviewRecords(pool, 'claims-other', ['a'], 'review/claims-other/a')).toEqual(['a']);
  });

  it('a finished or failed run is claimed by nobody again, and finishing twice changes nothing', async () => {
    const { pool } = database;
    const reviewId = 'review/finish/x..y+2-3';
    expect(await claimReviewRecords(pool, 'finish', ['x', 'y'], reviewId)).toEqual(['x', 'y']);
    await finishReviewRecords(pool, 'finish', [{ runId: 'x', decision: 'track_record_only', detail: { observed: [] } }]);
    expect(await failReviewRecord(pool, 'finish', 'y', 'ReviewDeadlineExceeded: not finished within 2000 ms')).toBe(true);
    expect(await claimReviewRecords(pool, 'finish', ['x', 'y'], reviewId)).toEqual([]);
    await finishReviewRecords(pool, 'finish', [{ runId: 'y', decision: 'none', detail: {} }]);
    expect(await findReview(pool, 'finish', 'x')).toMatchObject({
      status: 'completed',
      decision: 'track_record_only',
      detail: { reviewId, observed: [] },
    });
    expect(await findReview(pool, 'finish', 'y')).toMatchObject({ status: 'failed', decision: null });
  });
});

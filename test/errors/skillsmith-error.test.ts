import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { NON_RETRYABLE_ERROR_CODES } from '../../src/contracts/non-retryable-error-codes.ts';
import { SkillNotFound } from '../../src/skills/skill-errors.ts';
import { SkillValidationError } from '../../src/skills/validation-errors.ts';
import { SkillsmithError } from '../../src/errors/skillsmith-error.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(directory: string): string[] {
  return readdirSync(join(root, directory), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(root, directory, file))
    .sort();
}

type AnyErrorClass = abstract new (...args: never[]) => Error;
type ErrorClass = typeof SkillsmithError;

/** Every Error subclass any module under src/ or activities/ exports, by class name. */
async function exportedErrorClasses(): Promise<Map<string, { errorClass: AnyErrorClass; module: string }>> {
  const found = new Map<string, { errorClass: AnyErrorClass; module: string }>();
  for (const file of [...sourceFiles('src'), ...sourceFiles('activities')]) {
    const exports: Record<string, unknown> = await import(pathToFileURL(file).href);
    for (const value of Object.values(exports)) {
      if (typeof value !== 'function' || !(value.prototype instanceof Error || value === SkillsmithError)) continue;
      if (!found.has(value.name)) found.set(value.name, { errorClass: value as AnyErrorClass, module: relative(root, file) });
    }
  }
  return found;
}

const isValidationError = (errorClass: AnyErrorClass) =>
  errorClass.prototype === SkillValidationError.prototype || errorClass.prototype instanceof SkillValidationError;

const isSkillsmithError = (errorClass: AnyErrorClass): errorClass is ErrorClass =>
  errorClass.prototype === SkillsmithError.prototype || errorClass.prototype instanceof SkillsmithError;

/** The API's statuses before they moved onto the classes: a contract, pinned here. */
const CONTRACT_STATUSES: Record<string, number> = {
  Unauthorized: 401,
  ScopeMissing: 403,
  SessionNotFound: 404,
  AgentSpecNotFound: 404,
  SkillNotFound: 404,
  SkillMemberNotFound: 404,
  SkillPackagePathEscape: 400,
  SkillRefInvalid: 400,
  SkillNotInCatalog: 404,
  SkillRefsUnresolved: 422,
  DuplicateSkillName: 422,
  SkillMemberNotText: 422,
  McpSkillHasNoPackage: 422,
  SkillBodyCapReached: 409,
  SkillBodyBudgetExceeded: 409,
  SkillPinMismatch: 409,
  McpPromptChanged: 409,
  CatalogDrift: 409,
  SkillPackageMissing: 409,
  EmbeddingModelUnavailable: 503,
  EmbeddingRuntimeUnavailable: 503,
  EmbeddingDimensionMismatch: 503,
  TenantEmbeddingModelMismatch: 503,
  TenantMismatch: 403,
  TraceNotConvertible: 422,
  InputFileUnreadable: 400,
  RunReportInvalid: 400,
  RunReportTooLarge: 413,
  TemporalUnavailable: 503,
  DatabaseUnavailable: 503,
  StorageFull: 503,
  InvalidUtf8: 400,
  RunConflict: 409,
  RunNotStorable: 400,
  SkillAuthoringDenied: 403,
  SkillAuthoringDisabled: 403,
  SkillRevisionConflict: 409,
  SkillManageInvocationReused: 409,
  SkillManageRequestInvalid: 400,
  OriginTrustNotAllowed: 403,
  SkillAuthoringNotActivated: 403,
  SkillNameNotUnique: 409,
  SkillSourceImmutable: 409,
  SkillSourceRefused: 409,
  ApprovalNotFound: 404,
  ApprovalNotPending: 409,
  ApprovalExpired: 409,
};

describe('SkillsmithError: one base for every error', () => {
  let classes: Map<string, { errorClass: AnyErrorClass; module: string }>;
  beforeAll(async () => {
    classes = await exportedErrorClasses();
  });

  it('finds the error classes of every area (the scan is not empty)', () => {
    for (const name of [
      'SkillNotFound',
      'SkillNameInvalid',
      'SessionNotFound',
      'TemporalUnavailable',
      'ReviewedRunMissing',
      'ConfigError',
    ]) {
      expect(classes.has(name), name).toBe(true);
    }
    expect(classes.size).toBeGreaterThanOrEqual(60);
  });

  it('every exported error class is a SkillsmithError with its own code equal to its name and a status in 400-599', () => {
    const problems: string[] = [];
    for (const [name, { errorClass, module }] of classes) {
      if (!isSkillsmithError(errorClass)) {
        problems.push(`${module}: ${name} does not extend SkillsmithError`);
        continue;
      }
      if (!Object.hasOwn(errorClass, 'code') || errorClass.code !== name) {
        problems.push(`${module}: ${name} has code ${errorClass.code}; declare static code = '${name}'`);
      }
      if (!Number.isInteger(errorClass.httpStatus) || errorClass.httpStatus < 400 || errorClass.httpStatus > 599) {
        problems.push(`${module}: ${name} has httpStatus ${errorClass.httpStatus}`);
      }
      if (typeof errorClass.retryable !== 'boolean') problems.push(`${module}: ${name} has no boolean retryable`);
    }
    expect(problems).toEqual([]);
  });

  it('no class anywhere extends Error directly except SkillsmithError (exported or not)', () => {
    const direct = ['src', 'activities', 'workflows', 'workers']
      .flatMap(sourceFiles)
      .filter((file) => /\bextends Error\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(direct).toEqual(['src/errors/skillsmith-error.ts']);
  });

  it('keeps every HTTP status of the API contract, and every other error is 500 or an unprocessable package (422)', () => {
    const statuses = new Map([...classes].map(([name, { errorClass }]) => [name, (errorClass as ErrorClass).httpStatus]));
    for (const [code, status] of Object.entries(CONTRACT_STATUSES)) expect(statuses.get(code), code).toBe(status);
    const others = [...classes]
      .filter(([name]) => !(name in CONTRACT_STATUSES))
      .map(([name, { errorClass }]) => ({ name, errorClass: errorClass as ErrorClass }))
      .filter(({ errorClass }) => errorClass.httpStatus !== 500)
      .filter(({ errorClass }) => !(isValidationError(errorClass) && errorClass.httpStatus === 422))
      .map(({ name, errorClass }) => `${name}: ${errorClass.httpStatus}`);
    expect(others).toEqual([]);
  });

  it('NON_RETRYABLE_ERROR_CODES, which the workflows use, is exactly the codes of the classes with retryable false', () => {
    const nonRetryable = [...classes.values()]
      .map(({ errorClass }) => errorClass as ErrorClass)
      .filter((errorClass) => errorClass.retryable === false)
      .map((errorClass) => errorClass.code);
    expect([...NON_RETRYABLE_ERROR_CODES].sort()).toEqual([...new Set(nonRetryable)].sort());
  });

  it('NON_RETRYABLE_ERROR_CODES imports nothing, so the workflow bundle can load it deterministically', () => {
    expect(readFileSync(join(root, 'src/contracts/non-retryable-error-codes.ts'), 'utf8')).not.toMatch(/^\s*import\b/m);
  });

  it('an instance is named by its code and carries its class definition, outside its own (detail) fields', () => {
    const error = new SkillNotFound('deploy@3');
    expect(error).toBeInstanceOf(SkillsmithError);
    expect(error).toMatchObject({ name: 'SkillNotFound', code: 'SkillNotFound', httpStatus: 404, retryable: true, ref: 'deploy@3' });
    expect(Object.keys(error).sort()).toEqual(['name', 'ref']);
  });
});

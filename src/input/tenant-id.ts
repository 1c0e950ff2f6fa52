import { z } from 'zod';

/** A tenant id: every table's tenant_id, every CLI's --tenant, every token's tenant. */
const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const tenantIdSchema = z
  .string()
  .regex(TENANT_ID_PATTERN, 'a tenant id is 1-63 characters of a-z, 0-9, _ and -, the first a letter or digit');

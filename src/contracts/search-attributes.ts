import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes that let engineers filter passes in the Temporal UI
 * (`SkillsmithTenant = "acme" AND SkillsmithPassStatus = "failed"`). The embedded dev server
 * registers them at start; an external cluster needs them registered once:
 *
 *   temporal operator search-attribute create --namespace default \
 *     --name SkillsmithTenant --type Keyword --name SkillsmithPassStatus --type Keyword
 *
 * Where they are not registered, passes run without them (a workflow that upserts an unknown
 * attribute fails its task, so the client checks first).
 */
export const PASS_TENANT_ATTRIBUTE = defineSearchAttributeKey('SkillsmithTenant', SearchAttributeType.KEYWORD);
export const PASS_STATUS_ATTRIBUTE = defineSearchAttributeKey('SkillsmithPassStatus', SearchAttributeType.KEYWORD);

/** What the dev server is started with (`temporal server start-dev --search-attribute NAME=Keyword`). */
export const PASS_SEARCH_ATTRIBUTE_TYPES = {
  [PASS_TENANT_ATTRIBUTE.name]: 'Keyword',
  [PASS_STATUS_ATTRIBUTE.name]: 'Keyword',
} as const;

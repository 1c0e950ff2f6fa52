import type { SkillRevision } from './skill-revision.ts';

/** A revision's metadata as the CLI prints it and the API returns it (never the body). */
export interface SkillSummary {
  tenantId: string;
  name: string;
  revision: number;
  version: string;
  description: string;
  requiredTools: string[];
  license: string;
  source: string;
  trust: string;
  status: string;
  contentSha256: string;
  packageKey: string;
  packageBytes: number;
  fileCount: number;
  bodyTokens: number;
  createdAt: string;
  authoredBy: SkillRevision['authoredBy'];
}

export function summarizeRevision(revision: SkillRevision): SkillSummary {
  return {
    tenantId: revision.tenantId,
    name: revision.name,
    revision: revision.revision,
    version: revision.manifest.version,
    description: revision.manifest.description,
    requiredTools: revision.manifest.requiredTools,
    license: revision.manifest.license,
    source: revision.source,
    trust: revision.trust,
    status: revision.status,
    contentSha256: revision.contentSha256,
    packageKey: revision.packageKey,
    packageBytes: revision.packageBytes,
    fileCount: revision.fileCount,
    bodyTokens: revision.bodyTokens,
    createdAt: revision.createdAt.toISOString(),
    authoredBy: revision.authoredBy,
  };
}

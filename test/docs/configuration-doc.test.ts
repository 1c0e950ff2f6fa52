import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConfigurationDoc } from '../../src/app/configuration-doc.ts';
import { settingNames } from '../../src/app/config.ts';

const committed = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

describe('docs/configuration.md', () => {
  it('is what the environment schema renders (run `npm run docs:configuration` after changing the schema)', () => {
    const rendered = renderConfigurationDoc();
    if (rendered !== committed) {
      expect.fail('docs/configuration.md is out of date with src/app/config.ts: run `npm run docs:configuration` and commit the result');
    }
  });

  it('describes every variable the schema reads', () => {
    for (const name of settingNames) {
      const row = committed.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row, name).toBeDefined();
      expect(row!.split(' | ').at(-1)!.replace(/ \|$/, '').trim(), `${name} has a description`).not.toBe('');
    }
  });
});

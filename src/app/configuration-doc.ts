import { z } from 'zod';
import { environmentSchema } from './config.ts';
import { modelProfiles } from '../embedding/model-profiles.ts';

/**
 * docs/configuration.md, rendered from the environment schema so the reference cannot drift from
 * what start-up validates. `npm run docs:configuration` writes it; test/docs/configuration-doc.test.ts
 * fails when the committed file differs.
 */

interface JsonSchemaProperty {
  type?: string;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

const header = `# Configuration

<!-- Generated from the environment schema in src/app/config.ts by \`npm run docs:configuration\`; do not edit by hand. -->

Every setting is an environment variable, validated once at start-up by one zod schema
(\`src/app/config.ts\`); a bad value stops start-up with a message naming the variable and the
expected form. An empty value counts as unset. \`SKILLSMITH_REVIEW_ENABLED=true\` also needs
\`SKILLSMITH_AUTHORING_ENABLED=true\`.

The embedding model's measured profile (\`src/embedding/model-profiles.ts\`, below) supplies the
defaults marked "unset" for the pooling, prefixes, dimension, clustering and recall settings; a
variable set explicitly wins over the profile. A model without a profile needs them set.
`;

/** Markdown table cells: a pipe would end the cell, a line break the row. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

function code(value: unknown): string {
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

function range(property: JsonSchemaProperty): string {
  // zod's int() carries the safe-integer bounds and positive() an exclusive 0: say them plainly.
  const maximum = property.maximum === Number.MAX_SAFE_INTEGER ? undefined : property.maximum;
  const minimum = property.exclusiveMinimum === 0 && property.type === 'integer' ? 1 : property.minimum;
  if (minimum !== undefined && maximum !== undefined) return ` ${minimum} to ${maximum}`;
  if (minimum !== undefined) return ` ≥ ${minimum}`;
  if (maximum !== undefined) return ` ≤ ${maximum}`;
  return '';
}

function typeOf(property: JsonSchemaProperty): string {
  if (property.enum) return property.enum.map(code).join(' | ');
  if (property.type === 'integer' || property.type === 'number') return `${property.type}${range(property)}`;
  if (property.format === 'uri') return 'URL';
  const length = property.maxLength === undefined ? '' : `, at most ${property.maxLength} characters`;
  if (property.pattern) return `string matching ${code(property.pattern)}${length}`;
  return `${property.type ?? 'string'}${length}`;
}

/**
 * The default as the schema declares it, read from zod itself: JSON Schema's input view leaves out
 * the defaults of transformed values (the boolean flags).
 */
function defaultOf(variable: string): string {
  const schema = environmentSchema.shape[variable as keyof typeof environmentSchema.shape];
  return schema instanceof z.ZodDefault ? code(schema.def.defaultValue) : 'unset';
}

/** The settings each known embedding model brings when they are unset. */
function profileTable(): string[] {
  const rows = [...modelProfiles.values()].map((profile) =>
    [
      `\`${profile.modelId}\``,
      profile.pooling,
      profile.prefixes,
      profile.dimension,
      profile.similarityTau,
      profile.clustering.similarity,
      profile.clustering.clusterTau,
      profile.clustering.goalWeight,
      profile.clustering.toolTau,
      profile.recallThreshold,
    ].join(' | '),
  );
  return [
    '## Per-model defaults',
    '',
    'What each known model brings for the variables below (each without its `SKILLSMITH_` prefix) when they are unset.',
    '',
    '| model | `EMBEDDING_POOLING` | `EMBEDDING_PREFIXES` | `EMBEDDING_DIMENSION` | `SIMILARITY_TAU` | `CLUSTER_SIMILARITY` | `CLUSTER_TAU` | `CLUSTER_GOAL_WEIGHT` | `CLUSTER_TOOL_TAU` | `RECALL_THRESHOLD` |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
    '',
  ];
}

/** The whole of docs/configuration.md. */
export function renderConfigurationDoc(): string {
  const jsonSchema = z.toJSONSchema(environmentSchema, { io: 'input', unrepresentable: 'any' }) as {
    properties: Record<string, JsonSchemaProperty>;
  };
  const rows = Object.entries(jsonSchema.properties).map(([variable, property]) => {
    const defaultValue = defaultOf(variable);
    return `| \`${variable}\` | ${cell(typeOf(property))} | ${cell(defaultValue)} | ${cell(property.description ?? '')} |`;
  });
  return [
    header,
    '## Variables',
    '',
    '| variable | type / allowed values | default | description |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
    ...profileTable(),
  ].join('\n');
}

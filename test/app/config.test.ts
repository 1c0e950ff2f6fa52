import { describe, expect, it } from 'vitest';
import { ConfigError, configForModel, loadConfig } from '../../src/app/config.ts';
import { DEFAULT_EMBEDDING_MODEL_ID, modelProfile } from '../../src/embedding/model-profiles.ts';

/** The default model's profile: a registry-shipped model, measured (bench/results/2026-12-04-default-model.md). */
const defaults = modelProfile(DEFAULT_EMBEDDING_MODEL_ID)!;

describe('configuration', () => {
  it('has working defaults with no settings at all', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBeUndefined();
    expect(config.temporal.address).toBeUndefined();
    expect(config.embedding.model).toBe('Xenova/bge-small-en-v1.5');
    expect(config.embedding.modelDir).toBe('.skillsmith/models');
    expect(config.synthesis).toEqual({
      similarityTau: defaults.similarityTau,
      linkage: 'average',
      clusterSimilarity: defaults.clustering.similarity,
      clusterTau: defaults.clustering.clusterTau,
      clusterGoalWeight: defaults.clustering.goalWeight,
      clusterToolTau: defaults.clustering.toolTau,
      clusterDenseComponentLimit: 4_000,
      minOccurrences: 3,
      minSuccessRate: 0.8,
      minSteps: 3,
      maxClustersPerPass: 10,
      continuationDelaySeconds: 300,
      heartbeatTimeoutSeconds: 30,
      enabled: true,
      distiller: 'extractive',
    });
    expect(config.embedding).toMatchObject({ pooling: 'cls', prefixes: 'bge', dimension: 384 });
    expect(config.recall.threshold).toBe(defaults.recallThreshold);
    expect(config.modelChoice?.explicit).toBe(false);
  });

  it('distils with the LLM by default only when one is configured, and SKILLSMITH_DISTILLER wins', () => {
    expect(loadConfig({ SKILLSMITH_LLM_BASE_URL: 'http://127.0.0.1:11434/v1' }).synthesis.distiller).toBe('llm');
    expect(loadConfig({ SKILLSMITH_DISTILLER: 'llm' }).synthesis.distiller).toBe('llm');
    expect(
      loadConfig({ SKILLSMITH_LLM_BASE_URL: 'http://127.0.0.1:11434/v1', SKILLSMITH_DISTILLER: 'extractive' }).synthesis.distiller,
    ).toBe('extractive');
  });

  it.each([
    ['SKILLSMITH_SIMILARITY_TAU', '1.5', /SKILLSMITH_SIMILARITY_TAU="1.5".*<=1/],
    ['SKILLSMITH_MIN_OCCURRENCES', 'three', /SKILLSMITH_MIN_OCCURRENCES="three".*number/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL="mysql:\/\/x".*postgres:\/\//],
    ['TEMPORAL_ADDRESS', 'localhost', /TEMPORAL_ADDRESS="localhost".*host:port/],
    ['SKILLSMITH_ALLOW_REMOTE_MODELS', 'maybe', /SKILLSMITH_ALLOW_REMOTE_MODELS="maybe"/],
    ['SKILLSMITH_CLUSTER_LINKAGE', 'ward', /SKILLSMITH_CLUSTER_LINKAGE="ward".*average/],
  ])('refuses %s=%s with a message naming the variable and the expected form', (variable, value, message) => {
    const attempt = () => loadConfig({ [variable]: value });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (error) {
      expect((error as ConfigError).variable).toBe(variable);
    }
  });

  it('reads booleans, numbers and URLs from their string forms', () => {
    const config = loadConfig({
      SKILLSMITH_ALLOW_REMOTE_MODELS: 'true',
      SKILLSMITH_SIMILARITY_TAU: '0.9',
      DATABASE_URL: 'postgresql://u@h:5432/db',
      TEMPORAL_ADDRESS: 'temporal:7233',
    });
    expect(config.embedding.allowRemoteModels).toBe(true);
    expect(config.synthesis.similarityTau).toBe(0.9);
    expect(config.databaseUrl).toBe('postgresql://u@h:5432/db');
    expect(config.temporal.address).toBe('temporal:7233');
  });

  it('takes the clustering defaults of the configured embedding model, and any variable set over them', () => {
    const minilm = loadConfig({ SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2' });
    expect(minilm.synthesis).toMatchObject({ clusterSimilarity: 'evidence', clusterTau: 0.75, clusterGoalWeight: 0.5 });
    const chosen = loadConfig({
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      SKILLSMITH_CLUSTER_SIMILARITY: 'gate',
      SKILLSMITH_CLUSTER_TOOL_TAU: '0.6',
    });
    expect(chosen.synthesis).toMatchObject({ clusterSimilarity: 'gate', clusterToolTau: 0.6, clusterTau: 0.75 });
    expect(() => loadConfig({ SKILLSMITH_CLUSTER_SIMILARITY: 'cosine' })).toThrow(/SKILLSMITH_CLUSTER_SIMILARITY="cosine"/);
  });

  it('SKILLSMITH_EMBEDDING_MODEL alone selects the pooling, prefixes, dimension, τ, cut and recall threshold of a known model', () => {
    const minilm = loadConfig({ SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2' });
    expect(minilm.embedding).toMatchObject({
      model: 'sentence-transformers/all-MiniLM-L6-v2',
      pooling: 'mean',
      prefixes: 'none',
      dimension: 384,
    });
    expect(minilm.synthesis).toMatchObject({ similarityTau: 0.82, clusterSimilarity: 'evidence', clusterTau: 0.75 });
    expect(minilm.recall.threshold).toBe(0.415);
    expect(minilm.modelChoice?.explicit).toBe(true);
    const nomic = loadConfig({ SKILLSMITH_EMBEDDING_MODEL: 'nomic-ai/nomic-embed-text-v1.5' });
    expect(nomic.embedding).toMatchObject({ pooling: 'mean', prefixes: 'nomic', dimension: 768 });
    expect(nomic.synthesis).toMatchObject({ similarityTau: 0.82, clusterTau: 0.86 });
    expect(nomic.recall.threshold).toBe(0.7);
    // A variable set explicitly wins over the profile.
    const tuned = loadConfig({
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
      SKILLSMITH_SIMILARITY_TAU: '0.6',
      SKILLSMITH_RECALL_THRESHOLD: '0.5',
      SKILLSMITH_EMBEDDING_PREFIXES: 'nomic',
    });
    expect(tuned.synthesis.similarityTau).toBe(0.6);
    expect(tuned.recall.threshold).toBe(0.5);
    expect(tuned.embedding.prefixes).toBe('nomic');
  });

  it('refuses a model without a profile until its variables are set, naming every one missing', () => {
    const attempt = () => loadConfig({ SKILLSMITH_EMBEDDING_MODEL: 'acme/embed-small', SKILLSMITH_EMBEDDING_PREFIXES: 'none' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      /acme\/embed-small is not a model skillsmith knows \(known: .*all-MiniLM-L6-v2.*nomic-embed-text-v1\.5\): set SKILLSMITH_EMBEDDING_POOLING, SKILLSMITH_SIMILARITY_TAU, SKILLSMITH_CLUSTER_TAU, SKILLSMITH_RECALL_THRESHOLD for it/,
    );
    const custom = loadConfig({
      SKILLSMITH_EMBEDDING_MODEL: 'acme/embed-small',
      SKILLSMITH_EMBEDDING_POOLING: 'cls',
      SKILLSMITH_EMBEDDING_PREFIXES: 'none',
      SKILLSMITH_SIMILARITY_TAU: '0.6',
      SKILLSMITH_CLUSTER_TAU: '0.75',
      SKILLSMITH_RECALL_THRESHOLD: '0.5',
    });
    expect(custom.embedding).toMatchObject({ model: 'acme/embed-small', pooling: 'cls', prefixes: 'none', dimension: undefined });
    expect(custom.synthesis).toMatchObject({ similarityTau: 0.6, clusterTau: 0.75 });
    // The goal design does not cut on SKILLSMITH_CLUSTER_TAU, so it is not asked for.
    expect(() =>
      loadConfig({
        SKILLSMITH_EMBEDDING_MODEL: 'acme/embed-small',
        SKILLSMITH_EMBEDDING_POOLING: 'mean',
        SKILLSMITH_EMBEDDING_PREFIXES: 'none',
        SKILLSMITH_SIMILARITY_TAU: '0.6',
        SKILLSMITH_CLUSTER_SIMILARITY: 'goal',
        SKILLSMITH_RECALL_THRESHOLD: '0.5',
      }),
    ).not.toThrow();
  });

  it("configForModel: another model's profile under what was set explicitly", () => {
    const config = loadConfig({ SKILLSMITH_RECALL_THRESHOLD: '0.3' });
    const minilm = configForModel(config, 'sentence-transformers/all-MiniLM-L6-v2');
    expect(minilm.embedding).toMatchObject({ model: 'sentence-transformers/all-MiniLM-L6-v2', prefixes: 'none', dimension: 384 });
    expect(minilm.synthesis).toMatchObject({ similarityTau: 0.82, clusterTau: 0.75 });
    expect(minilm.recall.threshold).toBe(0.3);
    expect(minilm.embedding.modelDir).toBe(config.embedding.modelDir);
  });

  it('SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS: 30 by default, whole seconds from 5 to 3600, anything else refused naming it', () => {
    expect(loadConfig({}).synthesis.heartbeatTimeoutSeconds).toBe(30);
    expect(loadConfig({ SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS: '10' }).synthesis.heartbeatTimeoutSeconds).toBe(10);
    for (const value of ['4', '3601', '7.5', 'soon']) {
      expect(() => loadConfig({ SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS: value })).toThrow(/SKILLSMITH_HEARTBEAT_TIMEOUT_SECONDS/);
    }
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ DATABASE_URL: '' }).databaseUrl).toBeUndefined();
  });
});

describe('configuration: authoring rollout controls', () => {
  it('keeps foreground authoring and background review off by default, with no approval profile', () => {
    expect(loadConfig({}).authoring).toEqual({
      enabled: false,
      reviewEnabled: false,
      approvalProfile: 'none',
      approvalTtlHours: 72,
    });
  });

  it('refuses background review with foreground authoring off, naming both variables', () => {
    const attempt = () => loadConfig({ SKILLSMITH_REVIEW_ENABLED: 'true' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/SKILLSMITH_REVIEW_ENABLED.*SKILLSMITH_AUTHORING_ENABLED/);
    try {
      attempt();
    } catch (error) {
      expect((error as ConfigError).variable).toBe('SKILLSMITH_REVIEW_ENABLED');
    }
    expect(loadConfig({ SKILLSMITH_REVIEW_ENABLED: 'true', SKILLSMITH_AUTHORING_ENABLED: 'true' }).authoring).toMatchObject({
      enabled: true,
      reviewEnabled: true,
    });
  });
});

-- 012: what the tracked metrics read on every scrape (src/metrics/tenant-metrics.ts), indexed so
-- their cost follows the rows they count. Additive only: no data changes.

-- Load-to-completion links a skill.load to the runs reported under the loading session's id.
CREATE INDEX IF NOT EXISTS runs_tenant_session ON runs (tenant_id, session_id);

-- Skill selection asks, per session, whether skill.load was called in it at all.
CREATE INDEX IF NOT EXISTS skill_events_tenant_session_kind ON skill_events (tenant_id, session_id, kind) WHERE session_id IS NOT NULL;

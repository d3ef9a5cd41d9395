-- API semantic indexes in a team server's database (devlens-openapi's PostgresIndexStore).

-- One row per index name, replaced whole by one statement: readers see the old index or the
-- new one. Like a docs version it is searched in memory (p95 < 15 ms needs no round trip).
CREATE TABLE api_indexes (
    name TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    meta TEXT NOT NULL, -- JSON
    items TEXT NOT NULL, -- JSON, one per vector
    dims INTEGER NOT NULL,
    vectors BYTEA NOT NULL,
    saved_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

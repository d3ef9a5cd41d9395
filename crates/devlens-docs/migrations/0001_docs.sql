-- Library docs in a team server's database (devlens-docs's PostgresDocsStore). Needs devlens-search's
-- shared schema (pgvector, devlens_generations) first.

INSERT INTO devlens_generations (corpus, value) VALUES ('docs', 0) ON CONFLICT (corpus) DO NOTHING;

CREATE TABLE docs_libraries (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE SEQUENCE docs_version_generation;
CREATE TABLE docs_versions (
    library_id TEXT NOT NULL REFERENCES docs_libraries (id) ON DELETE CASCADE,
    version TEXT NOT NULL,
    source TEXT NOT NULL,
    pages INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    model TEXT,
    dims INTEGER NOT NULL DEFAULT 0,
    generation BIGINT NOT NULL,
    ingested_at TEXT NOT NULL,
    fingerprint TEXT,
    PRIMARY KEY (library_id, version)
);
-- A version is searched whole in the server's memory (its BM25 index needs every text), so its
-- vectors are read back in order, not searched here: no vector index to pay for on ingest.
CREATE TABLE docs_chunks (
    library_id TEXT NOT NULL,
    version TEXT NOT NULL,
    position INTEGER NOT NULL,
    section TEXT NOT NULL,
    anchor TEXT NOT NULL,
    kind TEXT NOT NULL,
    language TEXT,
    source TEXT NOT NULL,
    url TEXT NOT NULL,
    content TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    hash TEXT NOT NULL,
    embedding vector,
    PRIMARY KEY (library_id, version, position),
    FOREIGN KEY (library_id, version) REFERENCES docs_versions (library_id, version) ON DELETE CASCADE
);

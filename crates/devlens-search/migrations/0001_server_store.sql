-- The server store: every corpus of a devlens team server in one PostgreSQL database with the
-- pgvector extension. Applied by devlens on connect (sqlx's migrator; `sqlx migrate run
-- --source crates/devlens-search/migrations` applies the same files).

CREATE EXTENSION IF NOT EXISTS vector;

-- What changes with every write to a corpus, by any server: loaded indexes compare it to know
-- when to reload. Bumped inside the writing transaction, so a reader that sees a new value
-- also sees the data written with it.
CREATE TABLE devlens_generations (
    corpus TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO devlens_generations (corpus, value) VALUES ('kb', 0), ('docs', 0);

-- Knowledge base ------------------------------------------------------------------------------
CREATE TABLE kb_solutions (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    url TEXT,
    text TEXT NOT NULL,
    summary TEXT,
    tags TEXT NOT NULL, -- a JSON array, as devlens writes it
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    embedded_hash TEXT,
    embedded_model TEXT,
    embedded_dims INTEGER,
    -- Title (A), tags (B), summary and text with code names split into words (C).
    keywords TSVECTOR NOT NULL
);
CREATE INDEX kb_solutions_keywords ON kb_solutions USING gin (keywords);
CREATE INDEX kb_solutions_created ON kb_solutions (created_at, seq);

-- One row per chunk vector. `embedding` has no fixed dimension (the model is a setting); the
-- nearest-neighbour search goes through an HNSW index per dimension count, created when vectors
-- of that size are first stored (kb_chunks_hnsw_<dims>).
CREATE TABLE kb_chunks (
    solution_seq BIGINT NOT NULL REFERENCES kb_solutions (seq) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    dims INTEGER NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (solution_seq, position)
);

-- Library docs --------------------------------------------------------------------------------
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

-- API semantic indexes ------------------------------------------------------------------------
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

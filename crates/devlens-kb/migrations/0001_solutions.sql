-- The knowledge base in a team server's database (devlens-kb's PostgresStore). Needs devlens-search's
-- shared schema (pgvector, devlens_generations) first.

INSERT INTO devlens_generations (corpus, value) VALUES ('kb', 0) ON CONFLICT (corpus) DO NOTHING;

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

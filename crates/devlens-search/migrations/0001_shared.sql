-- What every corpus of a devlens team server shares in its one PostgreSQL database: the pgvector
-- extension, and the generation counters. Applied by devlens-search's runner before any corpus's
-- own migrations (each crate keeps its schema beside its SQL: devlens-kb/migrations,
-- devlens-docs/migrations, devlens-openapi/migrations); `psql -f` applies these files too, in
-- that order.

CREATE EXTENSION IF NOT EXISTS vector;

-- What changes with every write to a corpus, by any server: loaded indexes compare it to know
-- when to reload. Bumped inside the writing transaction, so a reader that sees a new value
-- also sees the data written with it. Each corpus adds its own row in its first migration.
CREATE TABLE devlens_generations (
    corpus TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

-- A docs version is searchable once its section vectors are stored; its chunks' own vectors are
-- added afterwards in batches. How many chunks get one (planned) and have one (stored), and a
-- revision counted up by each batch (the generation, which orders versions, stays). Versions
-- stored before are whole: nothing planned beyond what they hold.
ALTER TABLE docs_versions
    ADD COLUMN passages_planned INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN passages_stored INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;

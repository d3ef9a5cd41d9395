-- What each solution's current vectors were computed from (its content hash, the model, the
-- dimension count), in a narrow table of its own. In kb_solutions, recording it rewrote the
-- whole row (text, keyword entry) and added an entry to each of the table's six indexes for
-- every solution a re-embed stored: about a third of a large re-embed's time in the database.
-- A solution's vectors are current while `hash` equals its content_hash.
CREATE TABLE kb_embedded (
    solution_seq BIGINT PRIMARY KEY REFERENCES kb_solutions (seq) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL
);
INSERT INTO kb_embedded (solution_seq, hash, model, dims)
    SELECT seq, embedded_hash, embedded_model, embedded_dims FROM kb_solutions
    WHERE embedded_hash IS NOT NULL AND embedded_model IS NOT NULL AND embedded_dims IS NOT NULL;
ALTER TABLE kb_solutions DROP COLUMN embedded_hash, DROP COLUMN embedded_model,
    DROP COLUMN embedded_dims;

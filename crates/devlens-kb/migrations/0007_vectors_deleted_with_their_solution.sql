-- Chunk vectors and marks are deleted by the statement that deletes their solution (delete_in
-- locks the solution's row first, then deletes its vectors), not by foreign keys. Checking the
-- key of every inserted row cost a re-embed of 100,000 solutions about 2.3 s of its 8.7 s of
-- writes (1.0 s for kb_chunks, 1.3 s for kb_embedded, measured in psql); a solution's seq is
-- never reused, so a vector left behind could never attach to another solution.
DO $$
DECLARE
    fk record;
BEGIN
    FOR fk IN SELECT conrelid::regclass AS tab, conname FROM pg_constraint
        WHERE contype = 'f' AND confrelid = 'kb_solutions'::regclass
        AND conrelid IN ('kb_chunks'::regclass, 'kb_embedded'::regclass)
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.tab, fk.conname);
    END LOOP;
END
$$;

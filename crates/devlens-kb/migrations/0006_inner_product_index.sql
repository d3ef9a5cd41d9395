-- The vector index by inner product (kb_chunks_ip_<dims>) instead of cosine distance
-- (kb_chunks_hnsw_<dims>): devlens stores unit vectors, whose inner product is their cosine
-- similarity, and pgvector computes it with one sum where cosine takes three. The cosine
-- indexes go; an index for each dimension count already stored is built here once (with room
-- for its graph in memory), so searches never fall back to scanning every vector.
DO $$
DECLARE
    old record;
    d integer;
    sizes integer[];
    megabytes bigint;
BEGIN
    FOR old IN SELECT indexname FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = 'kb_chunks'
        AND indexname LIKE 'kb\_chunks\_hnsw\_%'
    LOOP
        EXECUTE format('DROP INDEX %I', old.indexname);
    END LOOP;
    -- Read first: an index cannot be built while a loop's query still reads the table.
    sizes := ARRAY(SELECT DISTINCT dims FROM kb_chunks ORDER BY dims);
    FOREACH d IN ARRAY sizes LOOP
        SELECT greatest(64, least(2048, count(*) * (d * 4 + 600) * 3 / 2 / 1048576))
            INTO megabytes FROM kb_chunks WHERE dims = d;
        PERFORM set_config('maintenance_work_mem', megabytes || 'MB', true);
        EXECUTE format(
            'CREATE INDEX IF NOT EXISTS kb_chunks_ip_%s ON kb_chunks USING hnsw '
            '((embedding::vector(%s)) vector_ip_ops) WHERE dims = %s', d, d, d);
    END LOOP;
END
$$;

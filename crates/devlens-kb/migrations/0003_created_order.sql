-- The order re-embedding walks solutions in (needing_vectors, from a cursor; byte order, as the
-- embedded store's): each batch reads where the last one ended instead of scanning every
-- solution again.
CREATE INDEX kb_solutions_created_id ON kb_solutions ((created_at COLLATE "C"), (id COLLATE "C"));

-- A docs chunk's own vector (prose chunks), beside its section's: an answer in a later paragraph
-- of a long section is found by it. Versions stored before have none and are searched as before.
ALTER TABLE docs_chunks ADD COLUMN passage_embedding vector;

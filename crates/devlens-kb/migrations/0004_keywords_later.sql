-- A solution's keyword entry may be missing. An import leaves it out (computing every text's
-- tsvector was most of a large import's time), and the first keyword query that needs the
-- database's own full text (a word outside ASCII; other keyword queries rank in memory) fills
-- every missing one first, a batch at a time; rows already stored keep theirs. The partial index
-- finds the missing ones without a scan.
ALTER TABLE kb_solutions ALTER COLUMN keywords DROP NOT NULL;
CREATE INDEX kb_solutions_keywordless ON kb_solutions (seq) WHERE keywords IS NULL;

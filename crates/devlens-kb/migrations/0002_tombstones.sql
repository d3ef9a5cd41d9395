-- When a solution was deleted (RFC 3339, UTC), until one with its id is saved again: what a copy
-- of the knowledge base elsewhere (the Chrome extension's) learns of a deletion from when it
-- syncs (devlens-kb's sync.rs).
CREATE TABLE kb_tombstones (
    id TEXT PRIMARY KEY,
    deleted_at TEXT NOT NULL
);

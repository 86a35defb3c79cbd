-- A study as the first schema (version 1) wrote it: no rounds.n_replaced, no assignments.stratum.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rounds (
    round INTEGER PRIMARY KEY, kind TEXT NOT NULL, created TEXT NOT NULL, source TEXT,
    file_hash TEXT UNIQUE, n_rows INTEGER NOT NULL DEFAULT 0, n_imported INTEGER NOT NULL DEFAULT 0,
    n_duplicate INTEGER NOT NULL DEFAULT 0, n_rejected INTEGER NOT NULL DEFAULT 0,
    n_flagged INTEGER NOT NULL DEFAULT 0, design TEXT, seed INTEGER, note TEXT);
CREATE TABLE raters (rater TEXT PRIMARY KEY, role TEXT NOT NULL CHECK (role IN ('human', 'judge')));
CREATE TABLE items (item TEXT PRIMARY KEY, cluster TEXT);
CREATE TABLE labels (
    item TEXT NOT NULL REFERENCES items(item), rater TEXT NOT NULL REFERENCES raters(rater),
    label TEXT NOT NULL, round INTEGER NOT NULL REFERENCES rounds(round), flagged INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (item, rater));
CREATE INDEX labels_round ON labels(round);
CREATE TABLE rejections (round INTEGER NOT NULL REFERENCES rounds(round), reason TEXT NOT NULL,
                         n_rows INTEGER NOT NULL);
CREATE TABLE assignments (
    round INTEGER NOT NULL REFERENCES rounds(round), item TEXT NOT NULL, rater TEXT,
    design TEXT NOT NULL, seed INTEGER, inclusion_prob REAL NOT NULL CHECK (inclusion_prob > 0 AND inclusion_prob <= 1),
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'delivered')),
    PRIMARY KEY (round, item, rater));
INSERT INTO meta VALUES ('application', 'voirdire-study'), ('schema_version', '1'), ('created', '2026-11-01T00:00:00+00:00'),
    ('voirdire_version', '0.1.0'), ('note', '');
INSERT INTO rounds (round, kind, created, source, file_hash, n_rows, n_imported) VALUES
    (1, 'labels', '2026-11-01T00:00:00+00:00', 'first.csv', 'abc', 4, 4);
INSERT INTO raters VALUES ('h1', 'human'), ('h2', 'human'), ('j1', 'judge');
INSERT INTO items VALUES ('x1', NULL), ('x2', NULL);
INSERT INTO labels VALUES ('x1', 'h1', '1', 1, 0), ('x1', 'h2', '1', 1, 0), ('x1', 'j1', '0', 1, 0), ('x2', 'h1', '0', 1, 0);

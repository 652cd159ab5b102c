-- Accounts, vehicles and the OAuth 2.0 authorization server's state.
-- Times are Unix milliseconds (INTEGER), so that one set of queries serves every engine.

CREATE TABLE clients (
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL,
    secret_hash   TEXT    NOT NULL,
    redirect_uris TEXT    NOT NULL, -- JSON array of strings
    created_at    INTEGER NOT NULL
);

CREATE TABLE accounts (
    id                INTEGER PRIMARY KEY AUTOINCREMENT, -- ids are never reused
    creator_client_id TEXT    REFERENCES clients (id) ON DELETE SET NULL,
    username          TEXT    NOT NULL,
    username_key      TEXT    NOT NULL UNIQUE, -- lower(username): one spelling per name
    password_hash     TEXT    NOT NULL,
    first_name        TEXT    NOT NULL,
    last_name         TEXT    NOT NULL,
    zipcode           TEXT    NOT NULL,
    email             TEXT,
    phone             TEXT,
    time_zone         TEXT    NOT NULL,
    preferred_contact TEXT    NOT NULL,
    created_at        INTEGER NOT NULL
);
CREATE INDEX accounts_creator ON accounts (creator_client_id, id);

CREATE TABLE vehicles (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id         INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    device_id          TEXT    UNIQUE,
    vin                TEXT,
    label              TEXT,
    auto_assign_device INTEGER NOT NULL,
    mileage            INTEGER,
    name               TEXT    NOT NULL,
    year               TEXT,
    make               TEXT,
    model              TEXT,
    last_latitude      REAL,
    last_longitude     REAL,
    last_waypoint_at   INTEGER,
    running            INTEGER NOT NULL,
    last_running_at    INTEGER,
    created_at         INTEGER NOT NULL
);
CREATE INDEX vehicles_account ON vehicles (account_id, id);

CREATE TABLE auth_codes (
    hash           TEXT    PRIMARY KEY,
    client_id      TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    account_id     INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    redirect_uri   TEXT, -- NULL for the code of an account-creation response
    code_challenge TEXT,
    family         TEXT    NOT NULL,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER
);

CREATE TABLE tokens (
    hash       TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL, -- 'access' or 'refresh'
    client_id  TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    account_id INTEGER REFERENCES accounts (id) ON DELETE CASCADE, -- NULL for client tokens
    family     TEXT    NOT NULL, -- every token descended from one grant
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER,
    rotated_at INTEGER -- refresh tokens: when exchanged for a new pair
);
CREATE INDEX tokens_family ON tokens (family);
CREATE INDEX tokens_expiry ON tokens (expires_at);

CREATE TABLE login_sessions (
    hash           TEXT    PRIMARY KEY,
    client_id      TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    redirect_uri   TEXT    NOT NULL,
    state          TEXT    NOT NULL,
    code_challenge TEXT,
    csrf_hash      TEXT    NOT NULL,
    expires_at     INTEGER NOT NULL
);

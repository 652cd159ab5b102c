-- Waypoint event subscriptions, their notifications and delivery attempts; data sets and
-- trips; simulated drives.

CREATE TABLE subscriptions (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    vehicle_id          INTEGER NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    creator_client_id   TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    type                TEXT    NOT NULL,
    minimum_time        INTEGER NOT NULL, -- minutes between notifications
    post_url            TEXT    NOT NULL,
    post_headers        TEXT    NOT NULL, -- JSON object
    notification_period TEXT    NOT NULL,
    -- The signing secret signs every delivery, so it is kept as it is, not hashed.
    signing_secret      TEXT    NOT NULL,
    created_at          INTEGER NOT NULL,
    deleted_at          INTEGER,
    last_notified_at    INTEGER
);
CREATE INDEX subscriptions_vehicle ON subscriptions (vehicle_id, id);

CREATE TABLE trips (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    vehicle_id     INTEGER NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    start_time     INTEGER NOT NULL,
    end_time       INTEGER,
    mileage        REAL,
    start_latitude REAL,
    start_longitude REAL,
    start_at       INTEGER,
    end_latitude   REAL,
    end_longitude  REAL,
    end_at         INTEGER
);
CREATE INDEX trips_vehicle ON trips (vehicle_id, start_time);

CREATE TABLE data_sets (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    vehicle_id      INTEGER NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    trip_id         INTEGER REFERENCES trips (id) ON DELETE SET NULL,
    timestamp       INTEGER NOT NULL,
    ignition_status TEXT    NOT NULL,
    datum           TEXT    NOT NULL, -- JSON array of {timestamp, key, value}
    created_at      INTEGER NOT NULL
);
CREATE INDEX data_sets_vehicle ON data_sets (vehicle_id, timestamp);
CREATE INDEX data_sets_trip ON data_sets (trip_id, timestamp);

CREATE TABLE notifications (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    vehicle_id      INTEGER NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    created_at      INTEGER NOT NULL,
    body            TEXT    NOT NULL, -- the exact JSON sent, the same on every attempt
    test            INTEGER NOT NULL,
    status          TEXT    NOT NULL, -- PENDING, DELIVERED, FAILED
    attempts        INTEGER NOT NULL,
    http_status     INTEGER NOT NULL, -- the receiver's last answer; 0 for none
    last_error      TEXT,
    -- When the next attempt is due. While an attempt runs it holds the claim's expiry, so
    -- that an attempt cut short by a crash is made again.
    next_attempt_at INTEGER,
    claimed_by      TEXT,
    delivered_at    INTEGER
);
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX notifications_vehicle ON notifications (vehicle_id, id);
CREATE INDEX notifications_subscription ON notifications (subscription_id, id);

CREATE TABLE delivery_attempts (
    notification_id INTEGER NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
    attempt         INTEGER NOT NULL,
    at              INTEGER NOT NULL,
    url             TEXT    NOT NULL,
    http_status     INTEGER NOT NULL,
    error           TEXT,
    duration_ms     INTEGER NOT NULL,
    PRIMARY KEY (notification_id, attempt)
);

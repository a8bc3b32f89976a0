/// The remote database's tables, shared by every hub that writes to it (each row carries its hub's name), and the
/// migrations that make them: `sensorhub_migrations` says which versions a database has, so a hub applies only
/// what is missing, under an advisory lock, so that two hubs starting together do not apply one twice.
enum RemoteSchema {
    struct Migration {
        var version: Int
        var description: String
        /// One statement each (the extended protocol takes one at a time).
        var statements: [String]
        /// Applied only where PostGIS is installed; a database without it lacks only this version, and gets it when
        /// the extension appears.
        var needsPostGIS = false
    }

    /// Any number, the same for every hub: the advisory lock migrations hold.
    static let lockKey: Int64 = 0x5345_4E53_4F52  // "SENSOR"

    static let migrationsTable = """
        CREATE TABLE IF NOT EXISTS sensorhub_migrations (
            version integer PRIMARY KEY,
            description text NOT NULL,
            applied timestamptz NOT NULL DEFAULT now()
        )
        """

    static let migrations: [Migration] = [
        Migration(
            version: 1, description: "hubs, sessions, readings and events",
            statements: [
                """
                CREATE TABLE IF NOT EXISTS hubs (
                    name text PRIMARY KEY,
                    first_seen timestamptz NOT NULL DEFAULT now(),
                    last_seen timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE TABLE IF NOT EXISTS sessions (
                    hub text NOT NULL REFERENCES hubs (name),
                    id text NOT NULL,
                    sensor_id text NOT NULL,
                    sensor text NOT NULL,
                    started timestamptz,
                    ended timestamptz,
                    PRIMARY KEY (hub, id)
                )
                """,
                """
                CREATE TABLE IF NOT EXISTS readings (
                    hub text NOT NULL REFERENCES hubs (name),
                    sensor_id text NOT NULL,
                    sensor text NOT NULL,
                    time timestamptz NOT NULL,
                    session text,
                    pm25 double precision,
                    pm10 double precision,
                    value double precision,
                    unit text,
                    lat double precision,
                    lon double precision,
                    alt double precision,
                    accuracy double precision,
                    UNIQUE (hub, sensor_id, time)
                )
                """,
                "CREATE INDEX IF NOT EXISTS readings_session ON readings (hub, session, time) WHERE session IS NOT NULL",
                "CREATE INDEX IF NOT EXISTS readings_time ON readings (time)",
                """
                CREATE TABLE IF NOT EXISTS events (
                    hub text NOT NULL REFERENCES hubs (name),
                    id text NOT NULL,
                    kind text NOT NULL,
                    sensor text NOT NULL,
                    topic text NOT NULL,
                    old text NOT NULL,
                    new text NOT NULL,
                    value text,
                    time timestamptz NOT NULL,
                    PRIMARY KEY (hub, id)
                )
                """,
                "CREATE INDEX IF NOT EXISTS events_time ON events (time)",
            ]),
        Migration(
            version: 2, description: "PostGIS: readings.position, a geography point with a GiST index",
            statements: [
                // Generated from lat/lon, so that inserts are the same with and without PostGIS.
                """
                ALTER TABLE readings ADD COLUMN IF NOT EXISTS position geography(Point, 4326)
                    GENERATED ALWAYS AS (
                        CASE WHEN lat IS NULL OR lon IS NULL THEN NULL
                        ELSE ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography END
                    ) STORED
                """,
                "CREATE INDEX IF NOT EXISTS readings_position ON readings USING GIST (position)",
            ],
            needsPostGIS: true),
        Migration(
            version: 3, description: "the registry, for hubs whose store: is this database",
            statements: [
                // One row: the document without its sensors, and the revisions readers compare. Changing the
                // registry locks it (as flock locks defaults.json.lock).
                """
                CREATE TABLE IF NOT EXISTS sensorhub_registry (
                    id integer PRIMARY KEY CHECK (id = 1),
                    revision bigint NOT NULL,
                    statuses bigint NOT NULL,
                    header text NOT NULL
                )
                """,
                // A sensor a row, as defaults.json has it; the rules' unique keys are checked at commit, so one
                // change may pass a name from one sensor to another.
                """
                CREATE TABLE IF NOT EXISTS sensorhub_sensors (
                    id text PRIMARY KEY,
                    position bigint NOT NULL,
                    name_key text NOT NULL,
                    topic text NOT NULL,
                    document text NOT NULL,
                    CONSTRAINT sensorhub_sensors_name UNIQUE (name_key) DEFERRABLE INITIALLY DEFERRED,
                    CONSTRAINT sensorhub_sensors_topic UNIQUE (topic) DEFERRABLE INITIALLY DEFERRED
                )
                """,
                "CREATE INDEX IF NOT EXISTS sensorhub_sensors_position ON sensorhub_sensors (position)",
            ]),
        Migration(
            version: 4, description: "the agents of a cluster, and the leases on their singleton duties",
            statements: [
                """
                CREATE TABLE IF NOT EXISTS sensorhub_agents (
                    cluster text NOT NULL,
                    agent text NOT NULL,
                    instance text NOT NULL,
                    version text NOT NULL,
                    started timestamptz NOT NULL,
                    last_seen timestamptz NOT NULL,
                    expires timestamptz NOT NULL,
                    duties text[] NOT NULL DEFAULT '{}',
                    PRIMARY KEY (cluster, agent)
                )
                """,
                // Times are the server's, so no two machines' clocks are compared.
                """
                CREATE TABLE IF NOT EXISTS sensorhub_leases (
                    cluster text NOT NULL,
                    duty text NOT NULL,
                    holder text NOT NULL,
                    epoch bigint NOT NULL,
                    expires timestamptz NOT NULL,
                    PRIMARY KEY (cluster, duty)
                )
                """,
            ]),
        Migration(
            version: 5,
            description: "a cluster's outbox, claimed by one agent at a time, and the messages each session committed",
            statements: [
                // Written in the transaction that commits the event, in order (`seq`); claimed until `claimed_until` (the server's
                // clock) by one agent process, renewed while it holds it, deleted once delivered or given up on.
                """
                CREATE TABLE IF NOT EXISTS sensorhub_outbox (
                    seq bigint GENERATED ALWAYS AS IDENTITY,
                    hub text NOT NULL,
                    key text NOT NULL,
                    backend text NOT NULL,
                    notification text NOT NULL,
                    created timestamptz NOT NULL DEFAULT now(),
                    claimed_by text,
                    claimed_until timestamptz,
                    PRIMARY KEY (hub, key)
                )
                """,
                "CREATE INDEX IF NOT EXISTS sensorhub_outbox_order ON sensorhub_outbox (hub, seq)",
                // The QoS 1 messages each MQTT session's agent committed lately, by the broker's packet id: one the
                // broker sends again (the agent died before acknowledging it) is known, and not applied twice. Ids
                // more than 4,096 behind a session's newest are forgotten.
                """
                CREATE TABLE IF NOT EXISTS sensorhub_deliveries (
                    session text NOT NULL,
                    packet integer NOT NULL,
                    digest text NOT NULL,
                    PRIMARY KEY (session, packet)
                )
                """,
            ]),
        Migration(
            version: 6, description: "indexes for reading a hub's history back (store:, hubctl history and events)",
            statements: [
                "CREATE INDEX IF NOT EXISTS readings_sensor ON readings (hub, sensor, time)",
                "CREATE INDEX IF NOT EXISTS readings_place ON readings (hub, lat, lon) WHERE lat IS NOT NULL",
                "CREATE INDEX IF NOT EXISTS events_sensor ON events (hub, sensor, time)",
                "CREATE INDEX IF NOT EXISTS events_hub_time ON events (hub, time)",
                "CREATE INDEX IF NOT EXISTS events_session ON events (hub, value) WHERE kind = 'session'",
            ]),
        Migration(
            version: 7, description: "a cluster's notification rate limits, shared by its agents",
            statements: [
                // A rule and sensor's last notification, by the server's clock (RateLimits).
                """
                CREATE TABLE IF NOT EXISTS sensorhub_rate_limits (
                    hub text NOT NULL,
                    rule text NOT NULL,
                    sensor text NOT NULL,
                    last timestamptz NOT NULL,
                    event text NOT NULL,
                    PRIMARY KEY (hub, rule, sensor)
                )
                """
            ]),
        Migration(
            version: 8, description: "a cluster's alert book, and what is queued for its keeper",
            statements: [
                // The book (AlertBook's JSON, empty before the first step) and the key of its buttons' tokens.
                """
                CREATE TABLE IF NOT EXISTS sensorhub_alert_book (
                    hub text PRIMARY KEY,
                    book text NOT NULL,
                    key text NOT NULL,
                    updated timestamptz NOT NULL DEFAULT now()
                )
                """,
                // An event the ingest committed for the book, or a person's request; a taken event is deleted, a taken
                // request keeps its outcome for an hour (a button's listener waits for it).
                """
                CREATE TABLE IF NOT EXISTS sensorhub_alert_queue (
                    seq bigint GENERATED ALWAYS AS IDENTITY,
                    hub text NOT NULL,
                    event text,
                    request text,
                    outcome text,
                    taken timestamptz,
                    PRIMARY KEY (hub, seq)
                )
                """,
            ]),
    ]

    /// The newest version.
    static var latest: Int { migrations.map(\.version).max() ?? 0 }
}

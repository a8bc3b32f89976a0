import HubCore

/// What `hubctl history`, `events`, `sessions`, `route` and the HTTP API read the history through: the SQLite file in
/// the state directory (`History`), or, when `store:` is a PostgreSQL database, that database's `readings` and
/// `events` tables (`PostgresHistory`), which every agent of a cluster writes. The same questions, the same answers.
public protocol HistoryReader: Sendable {
    /// Where the history is, for messages: a file's path or a database's URL.
    var location: String { get }

    /// A sensor's readings since `time`, oldest first; a numeric one's without its unit (the registry has it).
    func readings(of sensor: String, since time: Timestamp) async throws(HistoryError) -> [SensorReading]

    /// Min, mean and max per `period` (UTC; weeks start on Monday) of a sensor's readings since `time`.
    func aggregates(of sensor: String, since time: Timestamp, per period: History.Period) async throws(HistoryError)
        -> [History.Aggregate]

    /// Status events since `time` (of one sensor, or all): the newest `limit` of them, oldest first.
    func events(of sensor: String?, since time: Timestamp, limit: Int) async throws(HistoryError) -> [SensorEvent]

    /// Sessions started since `time` (of one sensor, or all), newest first, with their readings counted.
    func sessions(of sensor: String?, since time: Timestamp, limit: Int) async throws(HistoryError)
        -> [SessionSummary]

    /// The session called `id` (a recorded one's id, or `fixed:<sensor>`), or `nil` when the history has none.
    func session(_ id: String) async throws(HistoryError) -> SessionSummary?

    /// The readings of the session called `id`, oldest first, at most `limit` (the first ones).
    func track(of id: String, limit: Int) async throws(HistoryError) -> [TrackPoint]

    /// The PM2.5 readings with a position inside `box` since `time` (of every sensor, or of `sensors`): the newest
    /// `limit` when more match, with how many matched.
    func pollutionReadings(in box: GeoBoundingBox, since time: Timestamp, sensors: [String]?, limit: Int)
        async throws(HistoryError) -> History.AreaReadings
}

extension History: HistoryReader {
    public var location: String { path }
}

/// Where the history is read from: the state directory's `history.sqlite` (opened for each use: it appears once hubd
/// has written, and hubd may migrate it meanwhile), or a reader kept open (the store's database).
public enum HistorySource: Sendable {
    /// `history.sqlite` in `directory`; `held`: what hubd holds for it until its next commit (one a
    /// `commit_interval`), which hubd's own readers (the API, the dashboard) see with the file's rows.
    case file(directory: String, held: (any HeldHistory)? = nil)
    case reader(any HistoryReader)

    /// The reader with what hubd holds for the history (`HeldHistoryReader`): how hubd's own readers (the API, the
    /// dashboard) open it, so that they see everything that arrived without asking for a commit; a dashboard's
    /// charts, redrawn each minute, made the history commit each minute, four times what a day of five-minute
    /// commits writes (bench/history-commits.sh).
    public func openAll() throws(HistoryError) -> any HistoryReader {
        let reader = try open()
        guard case .file(_, let held?) = self else { return reader }
        return HeldHistoryReader(file: reader, held: held)
    }

    /// The reader; `HistoryError.missing` when the file is not there yet.
    public func open() throws(HistoryError) -> any HistoryReader {
        switch self {
        case .file(let directory, _): try History(directory: directory, create: false)
        case .reader(let reader): reader
        }
    }
}

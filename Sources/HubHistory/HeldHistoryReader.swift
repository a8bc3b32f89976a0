import HubCore

/// What hubd holds for the history and has not committed yet (`HistoryWriter`): the rows of its next commit.
public struct HeldRows: Sendable {
    public var readings: [RecordedReading]
    public var events: [SensorEvent]

    public init(readings: [RecordedReading] = [], events: [SensorEvent] = []) {
        self.readings = readings
        self.events = events
    }
}

/// Who holds rows for the history: hubd's writer.
public protocol HeldHistory: Sendable {
    /// Runs `read` with the rows held now, no commit starting until it returns (so that a row is in the file or
    /// held, never both nor neither, while it reads).
    func withHeld<Value: Sendable>(_ read: (HeldRows) async throws(HistoryError) -> Value)
        async throws(HistoryError) -> Value
    /// Commits what is held now (before a question only the file can answer).
    func writePending() async
}

/// The file's history with the rows hubd holds for it: readings, their aggregates by hour, day or week, and events
/// read from both, so a reader in hubd needs no commit. The other questions (sessions, tracks, places, and
/// aggregates by month) are rarer, and ask for the held rows to be committed first.
struct HeldHistoryReader: HistoryReader {
    let file: any HistoryReader
    let held: any HeldHistory

    var location: String { file.location }

    func readings(of sensor: String, since time: Timestamp) async throws(HistoryError) -> [SensorReading] {
        try await held.withHeld { rows throws(HistoryError) in
            let more = Self.readings(in: rows, of: sensor, since: time)
            let read = try await file.readings(of: sensor, since: time)
            return more.isEmpty ? read : (read + more).sorted { $0.time < $1.time }
        }
    }

    func aggregates(of sensor: String, since time: Timestamp, per period: History.Period) async throws(HistoryError)
        -> [History.Aggregate]
    {
        guard period.length != nil else {
            await held.writePending()
            return try await file.aggregates(of: sensor, since: time, per: period)
        }
        return try await held.withHeld { rows throws(HistoryError) in
            let more = Self.readings(in: rows, of: sensor, since: time)
            let read = try await file.aggregates(of: sensor, since: time, per: period)
            return more.isEmpty ? read : Self.merge(read, more, per: period)
        }
    }

    func events(of sensor: String?, since time: Timestamp, limit: Int) async throws(HistoryError) -> [SensorEvent] {
        try await held.withHeld { rows throws(HistoryError) in
            let read = try await file.events(of: sensor, since: time, limit: limit)
            // An event the journal handed over again after a crash is held and in the file: once.
            let known = Set(read.lazy.map(\.id).filter { !$0.isEmpty })
            let more = rows.events.filter {
                (sensor == nil || $0.sensor == sensor) && $0.time >= time && ($0.id.isEmpty || !known.contains($0.id))
            }
            guard !more.isEmpty else { return read }
            let all = (read + more).enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            return all.suffix(limit).map(\.element)
        }
    }

    func sessions(of sensor: String?, since time: Timestamp, limit: Int) async throws(HistoryError)
        -> [SessionSummary]
    {
        await held.writePending()
        return try await file.sessions(of: sensor, since: time, limit: limit)
    }

    func session(_ id: String) async throws(HistoryError) -> SessionSummary? {
        await held.writePending()
        return try await file.session(id)
    }

    func track(of id: String, limit: Int) async throws(HistoryError) -> [TrackPoint] {
        await held.writePending()
        return try await file.track(of: id, limit: limit)
    }

    func pollutionReadings(in box: GeoBoundingBox, since time: Timestamp, sensors: [String]?, limit: Int)
        async throws(HistoryError) -> History.AreaReadings
    {
        await held.writePending()
        return try await file.pollutionReadings(in: box, since: time, sensors: sensors, limit: limit)
    }

    /// The held readings of `sensor` since `time`, in the order they came, as the file gives them back (without a
    /// unit or a place: the file's `readings` has neither).
    static func readings(in rows: HeldRows, of sensor: String, since time: Timestamp) -> [SensorReading] {
        rows.readings.filter { $0.sensor == sensor && $0.reading.time >= time }.map { recorded in
            switch recorded.reading {
            case .numeric(let value, _, let time, _): .numeric(value, unit: nil, time: time)
            case .particulate(let reading):
                .particulate(ParticulateReading(pm25: reading.pm25, pm10: reading.pm10, time: reading.time))
            }
        }
    }

    /// The file's aggregates with `readings` counted in: a period both have is weighed by how many readings each
    /// has (exact where each reading has the series, as a sensor's readings do).
    static func merge(_ aggregates: [History.Aggregate], _ readings: [SensorReading], per period: History.Period)
        -> [History.Aggregate]
    {
        var byStart = Dictionary(aggregates.map { ($0.start, $0) }, uniquingKeysWith: { $1 })
        for reading in readings {
            let start = period.start(of: reading.time)
            var aggregate = byStart[start] ?? History.Aggregate(start: start, count: 0, spreads: [:])
            for series in History.Series.allCases {
                guard let value = series.value(of: reading) else { continue }
                let spread = aggregate.spreads[series] ?? .init(min: value, mean: value, max: value)
                // Rows without the series (none, for one sensor's) weigh nothing in its mean.
                let count = aggregate.spreads[series] == nil ? 0 : Double(aggregate.count)
                aggregate.spreads[series] = .init(
                    min: Swift.min(spread.min, value), mean: (spread.mean * count + value) / (count + 1),
                    max: Swift.max(spread.max, value))
            }
            aggregate.count += 1
            byStart[start] = aggregate
        }
        return byStart.values.sorted { $0.start < $1.start }
    }
}

import Foundation
import HubCore
import HubHistory

/// How `hubctl history` shows a sensor's readings: its series (PM2.5 and PM10, or a numeric sensor's value), each
/// under a heading, and its numbers as the sensor shows them (a numeric sensor's with the registry's unit). Tables
/// for people, CSV and JSON for scripts.
struct HistoryColumns {
    struct Column {
        var series: History.Series
        var heading: String
    }

    var sensor: String
    var kind: SensorKind
    var columns: [Column]
    var format: ValueFormat

    /// `nil` for a sensor that has no readings (a status sensor: its history is its events).
    init?(_ sensor: Sensor) {
        switch sensor.kind {
        case .particulate:
            columns = [Column(series: .pm25, heading: "PM2.5"), Column(series: .pm10, heading: "PM10")]
            // One decimal, as the SDS011 measures (`ParticulateReading.format`); µg/m³ goes without saying.
            format = ValueFormat(decimals: 1)
        case .numeric:
            columns = [Column(series: .value, heading: "VALUE")]
            format = sensor.format
        default:
            return nil
        }
        self.sensor = sensor.name
        kind = sensor.kind
    }

    /// A numeric sensor's CSV has a unit column; a particulate one's keeps the original monitor's shape.
    private var unitColumn: Bool { kind == .numeric }

    private func number(_ value: Double) -> String { format.format(value) }
    private func shown(_ value: Double?) -> String { value.map { format.withUnit(number($0)) } ?? "-" }

    // MARK: Readings

    func table(_ readings: [SensorReading]) -> String {
        guard !readings.isEmpty else { return "No readings in that time.\n" }
        let rows = readings.map { reading in
            [Output.absolute(reading.time)] + columns.map { shown($0.series.value(of: reading)) }
        }
        return Output.table(header: ["TIME"] + columns.map(\.heading), rows: rows)
    }

    /// A particulate sensor's as the original monitor wrote them (`PM2.5,<value>,<time>` then `PM10,<value>,<time>`
    /// per reading); a numeric sensor's as `time,value,unit` rows under that header.
    func readingsCSV(_ readings: [SensorReading]) -> String {
        guard unitColumn else {
            return readings.map { reading in
                columns.compactMap { column in
                    column.series.value(of: reading).map { "\(column.heading),\(number($0)),\(reading.time.iso8601)\n" }
                }.joined()
            }.joined()
        }
        var text = "time,value,unit\n"
        for reading in readings {
            guard let value = reading.number else { continue }
            text += [reading.time.iso8601, number(value), format.unit ?? ""].map(Output.csvField).joined(separator: ",")
            text += "\n"
        }
        return text
    }

    /// `{"sensor", "kind", "unit", "readings": [{"time", "<series>": number or null}]}`.
    func readingsJSON(_ readings: [SensorReading]) -> String {
        json(key: "readings", readings) { reading, writer, first in
            writer.key("time", first: &first)
            writer.timestamp(reading.time)
            for column in columns {
                writer.key(column.series.rawValue, first: &first)
                if let value = column.series.value(of: reading) { writer.number(value) } else { writer.raw("null") }
            }
        }
    }

    // MARK: Aggregates

    func aggregatesTable(_ rows: [History.Aggregate], period: History.Period) -> String {
        guard !rows.isEmpty else { return "No readings in that time.\n" }
        func triple(_ spread: History.Spread?) -> String {
            guard let spread else { return "-" }
            return format.withUnit([spread.min, spread.mean, spread.max].map(number).joined(separator: " / "))
        }
        let body = rows.map { row in
            [row.start.iso8601.prefix(period == .hour ? 16 : 10).description, String(row.count)]
                + columns.map { triple(row[$0.series]) }
        }
        return Output.table(
            header: [period.rawValue.uppercased() + " (UTC)", "READINGS"]
                + columns.map { "\($0.heading) MIN / MEAN / MAX" },
            rows: body)
    }

    /// A header, then a row a period: `start,readings,<series>_min,<series>_mean,<series>_max…` (and `unit`).
    func aggregatesCSV(_ rows: [History.Aggregate]) -> String {
        let names = columns.flatMap { column in ["min", "mean", "max"].map { "\(column.series.rawValue)_\($0)" } }
        var text = (["start", "readings"] + names + (unitColumn ? ["unit"] : [])).joined(separator: ",") + "\n"
        for row in rows {
            let spreads = columns.flatMap { column in
                row[column.series].map { [$0.min, $0.mean, $0.max].map(number) } ?? ["", "", ""]
            }
            let fields = [row.start.iso8601, String(row.count)] + spreads + (unitColumn ? [format.unit ?? ""] : [])
            text += fields.map(Output.csvField).joined(separator: ",") + "\n"
        }
        return text
    }

    /// `{"sensor", "kind", "unit", "period", "aggregates": [{"start", "readings", "<series>": {"min", "mean", "max"}
    /// or null}]}`.
    func aggregatesJSON(_ rows: [History.Aggregate], period: History.Period) -> String {
        json(key: "aggregates", period: period, rows) { row, writer, first in
            writer.key("start", first: &first)
            writer.timestamp(row.start)
            writer.key("readings", first: &first)
            writer.number(row.count)
            for column in columns {
                writer.key(column.series.rawValue, first: &first)
                guard let spread = row[column.series] else {
                    writer.raw("null")
                    continue
                }
                var inner = true
                writer.raw("{")
                for (name, value) in [("min", spread.min), ("mean", spread.mean), ("max", spread.max)] {
                    writer.key(name, first: &inner)
                    writer.number(value)
                }
                writer.raw("}")
            }
        }
    }

    // MARK: Helpers

    /// The sensor's object with `key` a list of `items`, an item a line, each written by `write`.
    private func json<Item>(
        key: String, period: History.Period? = nil, _ items: [Item],
        write: (Item, inout JSONWriter, inout Bool) -> Void
    ) -> String {
        var writer = JSONWriter(capacity: items.count * 80 + 128)
        var first = true
        writer.raw("{")
        writer.key("sensor", first: &first)
        writer.string(sensor)
        writer.key("kind", first: &first)
        writer.string(kind.rawValue)
        writer.key("unit", first: &first)
        if let unit = kind == .particulate ? "µg/m³" : format.unit { writer.string(unit) } else { writer.raw("null") }
        if let period {
            writer.key("period", first: &first)
            writer.string(period.rawValue)
        }
        writer.key(key, first: &first)
        writer.raw("[")
        for (index, item) in items.enumerated() {
            writer.raw(index == 0 ? "\n  {" : ",\n  {")
            var inner = true
            write(item, &writer, &inner)
            writer.raw("}")
        }
        writer.raw(items.isEmpty ? "]}\n" : "\n]}\n")
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

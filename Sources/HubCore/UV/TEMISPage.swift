import Foundation

/// The UV-index page TEMIS (KNMI/ESA) serves for a place: its clear-sky UV index and ozone column for about a week.
///
/// `https://www.temis.nl/uvradiation/nrt/uvindex.php?lon=5.18&lat=52.1` answers with HTML only: nested tables, one of
/// them holding a location heading, a header row (Date, UV index, ozone column) and one row a day — `12 Jun 2014`,
/// `7.3`, `324.5 DU`. The page is read tolerantly: any table row of that shape counts, wherever it sits, whatever the
/// markup, attributes, entities, whitespace or case around it. Its values hold at the place's local **solar noon**, so
/// each day carries that computed instant — never midnight, never noon on a clock.
public struct TEMISPage: Sendable, Hashable {
    /// One day's row.
    public struct Day: Sendable, Hashable {
        public let day: CalendarDay
        /// The clear-sky UV index at solar noon, as TEMIS computes it (ozone, altitude and surface albedo included).
        public let uvIndex: UVIndex
        /// The total ozone column at solar noon, DU.
        public let ozone: Double
        /// When the values hold: the place's solar noon that day.
        public let solarNoon: Date
    }

    /// The location heading when the page has one (`<h1>`–`<h3>` text before the first row), as written.
    public let location: String?
    /// The days, in date order.
    public let days: [Day]

    /// The largest page read; TEMIS's is about 20 kB.
    public static let maximumSize = 1 << 20
    /// The UV indexes accepted: clear-sky noon values reach about 20 at high tropical altitudes.
    public static let plausibleIndex = 0.0...30.0

    /// Reads the page for `place` (whose solar noon each day gets).
    public init(html: some Collection<UInt8>, place: GeoPoint) throws(TEMISPageError) {
        guard html.count <= Self.maximumSize else { throw .tooLarge(html.count) }
        let document = HTMLTables(Array(html))
        var days: [Day] = []
        var location: String?
        for row in document.rows {
            guard let first = row.cells.first(where: { !$0.isEmpty }), let day = Self.date(first) else {
                if days.isEmpty, let heading = row.heading { location = heading }
                continue
            }
            if row.truncated { throw .truncated("at '\(row.text)'") }
            let values = row.cells.drop(while: { $0 != first }).dropFirst().filter { !$0.isEmpty }
            guard values.count >= 2 else { throw .badRow(row.text, "a date without a UV index and an ozone column") }
            guard let index = Self.number(values[values.startIndex]) else {
                throw .badRow(row.text, "the UV index '\(values[values.startIndex])' is not a number")
            }
            guard Self.plausibleIndex.contains(index) else {
                throw .badRow(row.text, "a UV index of \(index) is not plausible (0 to 30)")
            }
            let ozoneText = values[values.startIndex + 1]
            let unit = ozoneText.lowercased().hasSuffix("du")
            guard let ozone = Self.number(unit ? String(ozoneText.dropLast(2)) : ozoneText) else {
                throw .badRow(row.text, "the ozone column '\(ozoneText)' is not a number of DU")
            }
            guard UVIndex.plausibleOzone.contains(ozone) else {
                throw .badRow(row.text, "an ozone column of \(ozone) DU is not plausible (50 to 700)")
            }
            guard !days.contains(where: { $0.day == day }) else { throw .badRow(row.text, "\(day) appears twice") }
            let noon = SolarDay(place: place, day: day).solarNoon
            days.append(Day(day: day, uvIndex: UVIndex(index), ozone: ozone, solarNoon: noon))
        }
        guard !days.isEmpty else { throw document.sawTable ? .noRows : .noTable }
        if document.cutShort, let last = days.last { throw .truncated("after \(last.day)") }
        self.location = location ?? document.headings.first
        self.days = days.sorted { $0.day < $1.day }
    }

    /// `12 Jun 2014` (also `12 June 2014`, `12-Jun-2014`, any case).
    static func date(_ text: String) -> CalendarDay? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "-" })
        guard parts.count == 3, parts[0].count <= 2, parts[2].count == 4, let day = Int(parts[0]),
            let year = Int(parts[2]), parts[1].count >= 3
        else { return nil }
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        let name = parts[1].lowercased()
        guard let month = months.firstIndex(where: { name.hasPrefix($0) }) else { return nil }
        return CalendarDay(year: year, month: month + 1, day: day)
    }

    /// A plain decimal — digits, one optional point and digits — and nothing else (no `nan`, `inf` or `1e3`).
    static func number(_ text: String) -> Double? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), !pieces[0].isEmpty, pieces.count == 1 || !pieces[1].isEmpty,
            pieces.allSatisfy({ $0.count <= 6 && $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else { return nil }
        return Double(text)
    }
}

/// Why a TEMIS page could not be read; the page's last good values should be kept.
public enum TEMISPageError: Error, Hashable, CustomStringConvertible {
    /// The page is larger than any TEMIS page (bytes).
    case tooLarge(Int)
    /// There is no table in it: not the UV-index page (an error page, a login wall, an empty body).
    case noTable
    /// It has tables but no row like `12 Jun 2014 | 7.3 | 324.5 DU`.
    case noRows
    /// It ends inside a data row or table: a download cut short.
    case truncated(String)
    /// A row with a date whose values are missing, not numbers or not plausible.
    case badRow(String, String)

    public var description: String {
        switch self {
        case .tooLarge(let size): "the TEMIS page is \(size) bytes, larger than any UV-index page"
        case .noTable: "the TEMIS answer has no table: not the UV-index page"
        case .noRows: "the TEMIS page has no row like '12 Jun 2014 | 7.3 | 324.5 DU': its layout may have changed"
        case .truncated(let place): "the TEMIS page ends inside its table (\(place)): cut short"
        case .badRow(let row, let reason): "the TEMIS row '\(row)' is unusable: \(reason)"
        }
    }
}

/// The table rows of an HTML document, nested tables each on their own: cells as plain text (tags dropped, entities
/// decoded, whitespace collapsed). Never fails: whatever is not markup it understands is text.
struct HTMLTables {
    struct Row {
        var cells: [String] = []
        /// Ended by the end of the input rather than by markup.
        var truncated = false
        /// A heading's text when the "row" is one (text outside rows is not kept otherwise).
        var heading: String?
        var text: String { cells.filter { !$0.isEmpty }.joined(separator: " | ") }
    }

    let rows: [Row]
    let headings: [String]
    let sawTable: Bool
    /// The input ended inside a table, before `</body>` or `</html>`.
    let cutShort: Bool

    init(_ bytes: [UInt8]) {
        var rows: [Row] = []
        var headings: [String] = []
        var sawTable = false
        // The input ended inside a table before `</body>` or `</html>`: cut short, not merely sloppy.
        var sawDocumentEnd = false
        var tables: [Row?] = []  // the row being read at each open table
        var heading: String?
        var index = 0

        func finishRow(truncated: Bool = false) {
            guard let last = tables.indices.last, var row = tables[last] else { return }
            row.cells = row.cells.map(Self.normalised)
            row.truncated = truncated
            if row.cells.contains(where: { !$0.isEmpty }) { rows.append(row) }
            tables[last] = nil
        }
        func append(_ text: String) {
            if heading != nil { heading! += text }
            guard let last = tables.indices.last, let cell = tables[last]?.cells.indices.last else { return }
            tables[last]!.cells[cell] += text
        }

        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                append(Self.decoded(bytes[index..<end]))
                index = end
                continue
            }
            if bytes[index...].starts(with: Array("<!--".utf8)) {
                index = Self.find(Array("-->".utf8), in: bytes, from: index + 4).map { $0 + 3 } ?? bytes.count
                continue
            }
            guard let (name, closing, end) = Self.tag(bytes, at: index) else {
                append("<")
                index += 1
                continue
            }
            index = end
            switch (name, closing) {
            case ("script", false), ("style", false):
                index = Self.find(Array("</\(name)".utf8), in: bytes, from: index, caseInsensitive: true) ?? bytes.count
            case ("table", false):
                sawTable = true
                tables.append(nil)
            case ("table", true):
                finishRow()
                if !tables.isEmpty { tables.removeLast() }
            case ("tr", false):
                finishRow()
                if !tables.isEmpty { tables[tables.count - 1] = Row() }
            case ("tr", true):
                finishRow()
            case ("td", false), ("th", false):
                if let last = tables.indices.last {
                    if tables[last] == nil { tables[last] = Row() }
                    tables[last]!.cells.append("")
                }
            case ("h1", false), ("h2", false), ("h3", false):
                heading = ""
            case ("h1", true), ("h2", true), ("h3", true):
                if let text = heading.map(Self.normalised), !text.isEmpty {
                    headings.append(text)
                    rows.append(Row(heading: text))
                }
                heading = nil
            case ("body", true), ("html", true):
                sawDocumentEnd = true
            case ("br", _), ("p", _), ("div", _), ("td", true), ("th", true):
                append(" ")
            default:
                break
            }
        }
        // The end of the input inside a table: every row still open was cut short (unless the document ended
        // properly and only forgot to close its tables).
        cutShort = !tables.isEmpty && !sawDocumentEnd
        while !tables.isEmpty {
            finishRow(truncated: !sawDocumentEnd)
            tables.removeLast()
        }
        self.rows = rows
        self.headings = headings
        self.sawTable = sawTable
    }

    /// The tag at `start` (a `<`): its lowercased name, whether it closes, and the index after its `>` (quoted
    /// attribute values may hold `>`). A declaration (`<!DOCTYPE …>`, `<?xml …?>`): an empty name, skipped. Not a tag at
    /// all (`5 < 6`): `nil`, and the `<` is text.
    static func tag(_ bytes: [UInt8], at start: Int) -> (name: String, closing: Bool, end: Int)? {
        var index = start + 1
        let closing = index < bytes.count && bytes[index] == UInt8(ascii: "/")
        if closing { index += 1 }
        let nameStart = index
        while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
        let declaration =
            index < bytes.count && (bytes[index] == UInt8(ascii: "!") || bytes[index] == UInt8(ascii: "?"))
        guard index > nameStart || (declaration && !closing) else { return nil }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
        var quote: UInt8?
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                break
            }
        }
        return (name, closing, index)
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int, caseInsensitive: Bool = false) -> Int? {
        guard start <= bytes.count - needle.count else { return nil }
        let fold: (UInt8) -> UInt8 = { caseInsensitive && (65...90).contains($0) ? $0 | 0x20 : $0 }
        let target = needle.map(fold)
        for index in start...(bytes.count - needle.count)
        where (0..<needle.count).allSatisfy({ fold(bytes[index + $0]) == target[$0] }) {
            return index
        }
        return nil
    }

    /// Text with its character references decoded: the few named ones a page like this uses, and numeric ones.
    /// Anything else is kept as written.
    static func decoded(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("&") else { return text }
        let named: [String: String] = [
            "nbsp": " ", "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "deg": "°", "middot": "·",
        ]
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let after = rest[rest.index(after: ampersand)...]
            if let semicolon = after.prefix(10).firstIndex(of: ";") {
                let name = after[..<semicolon].lowercased()
                var replacement = named[name]
                if replacement == nil, name.hasPrefix("#") {
                    let digits = name.dropFirst()
                    let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
                    replacement = value.flatMap(Unicode.Scalar.init).map { String(Character($0)) }
                }
                if let replacement {
                    result += replacement
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            result += "&"
            rest = after
        }
        return result + rest
    }

    /// Whitespace (no-break spaces included) collapsed to single spaces, trimmed.
    static func normalised(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace || $0 == "\u{A0}" }).joined(separator: " ")
    }
}

import Foundation
import HubCore
import Testing

/// The configuration reference's sections that HubCore reads (`HubConfiguration.referenceSections`): each key's
/// documented default, written into the file, reads the same as the file without it, so the Default column can't
/// say what hubd does not do. (That the page is the code's lists is `DocsTests`'; that the lists are what the readers
/// allow is by construction: `ConfigNode.allow` takes them.)
@Suite struct ConfigReferenceTests {
    /// What a section needs to be read at all (its required keys), by path; and what the top level needs with it.
    static let required: [String: (section: [String], root: String)] = [
        "store": (["url: postgres://hub@db.example.net/sensors"], ""),
        "remote": (["url: postgres://hub@db.example.net/sensors", "hub: home"], ""),
        "cluster": (["group: building", "agent: hub-1"], "store: postgres://hub@db.example.net/sensors\n"),
        "thresholds[]": (["above: 30"], ""),
        "sessions[]": (["sensors: [walker]"], ""),
        "feeds.<name>": (["format: nea"], ""),
    ]

    /// `lines` placed at `path` (`air.alert`, `thresholds[]`, `feeds.<name>`) of a file.
    static func yaml(_ path: String, _ lines: [String], root: String) -> String {
        var text = root
        var indent = ""
        let parts = path.split(separator: ".").map(String.init)
        for (index, part) in parts.enumerated() {
            let last = index == parts.count - 1
            if part.hasSuffix("[]") {
                text += "\(indent)\(part.dropLast(2)):\n"
                indent += "  "
                text += lines.enumerated().map { "\(indent)\($0.offset == 0 ? "- " : "  ")\($0.element)\n" }.joined()
                return text
            }
            text += "\(indent)\(part == "<name>" ? "x" : part):\n"
            indent += "  "
            if last { text += lines.map { "\(indent)\($0)\n" }.joined() }
        }
        return text
    }

    static func read(_ text: String) throws -> HubConfiguration {
        try HubConfiguration.read(ConfigNode.parse(text, environment: [:]))
    }

    @Test func everyDocumentedDefaultIsWhatAnEmptyKeyDoes() throws {
        var checked = 0
        for section in HubConfiguration.referenceSections where section.path != "(top level)" {
            let (base, root) = Self.required[section.path] ?? ([], "")
            let without = try Self.read(Self.yaml(section.path, base.isEmpty ? ["{}"] : base, root: root))
            for key in section.keys {
                guard let value = key.defaultValue else { continue }
                let text = Self.yaml(section.path, base + ["\(key.name): \(value)"], root: root)
                let with = try Self.read(text)
                #expect(with == without, "\(section.path).\(key.name): the documented default \(value) reads otherwise")
                checked += 1
            }
        }
        #expect(checked >= 40)
    }

    @Test func eachSectionNamesAKeyOnceAndSaysWhatItIs() {
        for section in HubConfiguration.referenceSections {
            let names = section.keys.flatMap { $0.secret ? [$0.name, $0.name + "_file"] : [$0.name] }
            #expect(Set(names).count == names.count, "\(section.path): a key twice")
            for key in section.keys {
                #expect(!key.type.isEmpty && key.meaning.hasSuffix("."), "\(section.path).\(key.name)")
            }
        }
    }

    /// conf/hubd.yaml, the commented file a package installs, shows the defaults (`# qos: 1`): each one it shows is
    /// the reference's.
    @Test func theShippedFileShowsTheReferencesDefaults() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("conf/hubd.yaml"), encoding: .utf8)
        let sections = Dictionary(uniqueKeysWithValues: HubConfiguration.referenceSections.map { ($0.path, $0) })
        func unquoted(_ text: String) -> String { text.trimmingCharacters(in: CharacterSet(charactersIn: "\"'")) }
        var path: [String] = []
        var shown = 0
        for line in text.split(separator: "\n").map(String.init) {
            let indent = line.prefix { $0 == " " }.count / 2
            if let match = line.wholeMatch(of: /\s*([a-z0-9_]+):\s*(\[\])?/) {
                path = Array(path.prefix(indent)) + [String(match.output.1)]
            } else if let match = line.wholeMatch(of: /\s*# ([a-z0-9_]+): (\S.*)/) {
                let section = path.prefix(indent).joined(separator: ".")
                guard let key = sections[section]?.keys.first(where: { $0.name == String(match.output.1) }) else {
                    continue
                }
                shown += 1
                let value = unquoted(String(match.output.2))
                // A key with no value of its own whose meaning says what is used then (state.directory).
                if key.defaultValue == nil, key.meaning.contains("`\(value)`") { continue }
                #expect(
                    key.defaultValue.map(unquoted) == value,
                    "conf/hubd.yaml shows \(section).\(key.name): \(match.output.2); the reference says \(key.defaultValue ?? "none")"
                )
            }
        }
        #expect(shown >= 30, "\(shown) defaults shown")
    }

    /// hubd.yaml(5) holds every key, and no text line troff would take for a request (a meaning starting with `.`).
    @Test func theManualPageHoldsEveryKeyAsText() {
        let sections = HubConfiguration.referenceSections
        let page = ConfigReference.manual(sections, version: "1.2.3")
        #expect(page.hasPrefix(".TH HUBD.YAML 5 \"\" \"SensorHub 1.2.3\""))
        for section in sections {
            #expect(
                page.contains(".SS \(section.path.replacingOccurrences(of: "-", with: "\\-"))\n"), "\(section.path)")
            for key in section.keys {
                #expect(page.contains("\\fB\(key.name.replacingOccurrences(of: "-", with: "\\-"))\\fR"), "\(key.name)")
            }
        }
        let requests = Set(
            page.split(separator: "\n").filter { $0.hasPrefix(".") || $0.hasPrefix("'") }.map { $0.prefix(3) })
        #expect(requests.isSubset(of: [".TH", ".SH", ".SS", ".TP"]), "\(requests)")
        #expect(!page.contains("`") && !page.contains("]("))
    }

    /// What the test above builds: the same nesting the docs show.
    @Test func theFilesItWritesAreShapedAsTheDocsShowThem() {
        #expect(Self.yaml("air.alert", ["metric: pm10"], root: "") == "air:\n  alert:\n    metric: pm10\n")
        #expect(
            Self.yaml("thresholds[]", ["above: 30", "for: 5m"], root: "")
                == "thresholds:\n  - above: 30\n    for: 5m\n")
        #expect(Self.yaml("feeds.<name>", ["format: nea"], root: "") == "feeds:\n  x:\n    format: nea\n")
    }
}

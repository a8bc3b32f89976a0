/// The configuration reference, docs/configuration.md: every key of `hubd.yaml` from the lists the readers check
/// the file against (`ConfigKey`), printed by `hubd --config-reference`. `make test` fails when the page and the
/// code disagree; `make docs` writes it again.
public enum ConfigReference {
    /// The page, in Markdown, for `sections` in their order.
    public static func markdown(_ sections: [ConfigSection]) -> String {
        var lines = [
            "# Configuration reference",
            "",
            "<!-- Made by `hubd --config-reference` (`make docs`) from the key lists hubd checks its file against;",
            "     `make test` fails when this page and the code disagree. Edit the lists, not this page. -->",
            "",
            "Every key of `hubd.yaml`, with what it takes, what hubd does without it, and what it is for. A key that is",
            "not here is refused at start, naming it. [hubd](hubd.md) tells where the file is read from;",
            "`hubd --check-config` checks one without starting.",
            "",
            "- **Environment.** Any key can be set by an environment variable named after its path:",
            "  `sensors.silence_timeout` is `HUB_SENSORS_SILENCE_TIMEOUT`, `notifiers.backends.phone.url` is",
            "  `HUB_NOTIFIERS_BACKENDS_PHONE_URL` (dots, dashes and spaces become `_`).",
            "- **Secrets** (a row that says `_file`) can be given as a file instead: `token_file: /etc/sensorhub/token`",
            "  (or `$CREDENTIALS_DIRECTORY/…` under systemd).",
            "- **Durations** are written `500ms`, `90s`, `10m`, `2h` or `1d`.",
            "- **Reloading.** SIGHUP (`systemctl reload hubd`) reads the file again and applies it, but for a key",
            "  marked *(restart)* or a section read at start: those take effect when hubd next starts (the reload's",
            "  log line names the ones that changed).",
            "- A `–` default means nothing is set: the feature is off, or the meaning says what happens.",
            "",
            "Sections:",
            "",
        ]
        for section in sections {
            lines.append("- [`\(section.path)`](#\(slug("`\(section.path)`")))")
        }
        for section in sections {
            lines += ["", "## `\(section.path)`", "", section.summary]
            if section.restart { lines[lines.count - 1] += " Read at start: a change applies when hubd restarts." }
            if let more = section.more {
                lines[lines.count - 1] += " More: [\(pageName(more))](\(more))."
            }
            lines += ["", "| Key | Takes | Default | What it does |", "|---|---|---|---|"]
            for key in section.keys {
                let name = key.secret ? "`\(key.name)`, `\(key.name)_file`" : "`\(key.name)`"
                let value = key.defaultValue.map { "`\($0)`" } ?? "–"
                let meaning = key.meaning + (key.restart ? " *(restart)*" : "")
                lines.append("| \(name) | \(cell(key.type)) | \(cell(value)) | \(cell(meaning)) |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The places of the file read at start only (`ConfigSection.restart`, `ConfigKey.restart`): `sensors.qos`,
    /// `sds011`; a section of named entries or items is its whole list (`feeds`).
    public static func restartPaths(_ sections: [ConfigSection]) -> [String] {
        var paths: [String] = []
        for section in sections {
            let fixed = section.path.split(separator: ".").prefix { !$0.contains("<") && !$0.contains("[") }
                .joined(separator: ".")
            guard !fixed.isEmpty else { continue }
            if section.restart {
                paths.append(fixed)
            } else if fixed == section.path {
                paths += section.keys.filter(\.restart).map { "\(fixed).\($0.name)" }
            }
        }
        return paths.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    /// GitHub's anchor for a heading: lower case, punctuation dropped but `-` and `_`, spaces as `-`.
    static func slug(_ heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_"
                    ? character : nil
            })
    }

    /// A page's name as a link shows it: `air-quality.md#sds011` → air-quality.
    static func pageName(_ link: String) -> String {
        String(link.prefix { $0 != "." && $0 != "#" })
    }

    /// Text for a table cell: a `|` would end it.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
    }
}

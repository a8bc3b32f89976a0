import Foundation

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
            introduction + " More: [hubd](hubd.md).",
            "",
        ]
        lines += notes.map { "- **\($0.title).** \($0.text)" }
        lines += [
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
            if section.restart { lines[lines.count - 1] += " " + readAtStart }
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

    /// What the reference is, before its sections (Markdown: the manual page takes its marks out).
    static let introduction = """
        Every key of `hubd.yaml`, with what it takes, what hubd does without it, and what it is for. hubd reads \
        `--config`, else `$HUB_CONFIG`, else `/etc/sensorhub/hubd.yaml`; a key that is not here is \
        refused at start, naming it, and `hubd --check-config` checks a file without starting.
        """

    /// What a section read at start says (`ConfigSection.restart`).
    static let readAtStart = "Read at start: a change applies when hubd restarts."

    static let notes: [(title: String, text: String)] = [
        (
            "Environment",
            "Any key can be set by an environment variable named after its path: `sensors.silence_timeout` is "
                + "`HUB_SENSORS_SILENCE_TIMEOUT`, `notifiers.backends.phone.url` is `HUB_NOTIFIERS_BACKENDS_PHONE_URL` "
                + "(dots, dashes and spaces become `_`)."
        ),
        (
            "Secrets",
            "A key shown with its `_file` form can be given as a file instead: `token_file: /etc/sensorhub/token` "
                + "(or `$CREDENTIALS_DIRECTORY/…` under systemd)."
        ),
        ("Durations", "Written `500ms`, `90s`, `10m`, `2h` or `1d`."),
        (
            "Reloading",
            "SIGHUP (`systemctl reload hubd`) reads the file again and applies it, but for a key marked (restart) or "
                + "a section read at start: those take effect when hubd next starts, and the reload's log line names "
                + "the ones that changed."
        ),
    ]

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

extension ConfigReference {
    /// The same reference as a manual page, hubd.yaml(5): what `man hubd.yaml` shows once the package is installed.
    public static func manual(_ sections: [ConfigSection], version: String) -> String {
        var lines = [
            ".TH HUBD.YAML 5 \"\" \"SensorHub \(version)\" \"File Formats Manual\"",
            ".SH NAME",
            "hubd.yaml \\- configuration of hubd, the SensorHub agent",
            ".SH SYNOPSIS",
            "/etc/sensorhub/hubd.yaml",
            ".SH DESCRIPTION",
            roff(plain(introduction)),
        ]
        for note in notes { lines += [".TP", "\\fB\(note.title)\\fR", roff(plain(note.text))] }
        lines += [
            ".SH KEYS"
        ]
        for section in sections {
            lines += [".SS \(roff(section.path))", roff(plain(section.summary))]
            if section.restart { lines.append(readAtStart) }
            for key in section.keys {
                let name =
                    key.secret
                    ? "\\fB\(roff(key.name))\\fR, \\fB\(roff(key.name))_file\\fR" : "\\fB\(roff(key.name))\\fR"
                let value = key.defaultValue.map { "; default \(roff($0))" } ?? ""
                lines += [".TP", "\(name) (\(roff(key.type))\(value))"]
                lines.append(roff(plain(key.meaning)) + (key.restart ? " (restart)" : ""))
            }
        }
        lines += [".SH SEE ALSO", "hubd(1), hubctl(1)"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Markdown's marks taken out: `code` as it is, [text](link) as its text.
    static func plain(_ text: String) -> String {
        text.replacingOccurrences(of: "`", with: "")
            .replacingOccurrences(of: #"\[([^\]]*)\]\([^)]*\)"#, with: "$1", options: .regularExpression)
    }

    /// Text troff prints as it is: backslashes escaped, and no line starting with a control character.
    static func roff(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }
}

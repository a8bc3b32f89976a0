import ArgumentParser
import Foundation
import HubCLI
import HubTestKit
import Testing

/// The pages a person reads — README.md, docs/, examples/README.md — checked against the code (issue 39), so they
/// can't drift from it: every link between them leads to a file and a heading that exist, every `hubd.yaml` block
/// (a ```yaml fence; another YAML is fenced ```yaml <whose>) is accepted by hubd's own reader (`hubd
/// --check-config`), and every `hubctl` command line in a shell block by hubctl's own argument parser.
@Suite struct DocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The pages, relative to the repository.
    static let pages: [String] = {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))
            ?? []
        return ["README.md", "examples/README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }()

    /// A fenced code block: where it starts, its info string (`yaml`, `sh`…) and its text.
    struct Block {
        var page: String
        var line: Int
        var info: String
        var text: String
    }

    /// A page's lines, each with whether it is inside a code block.
    static func lines(_ page: String) throws -> [(number: Int, text: String, code: Bool)] {
        let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        var inCode = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
            let fence = line.trimmingCharacters(in: .whitespaces).hasPrefix("```")
            defer { if fence { inCode.toggle() } }
            return (index + 1, String(line), inCode || fence)
        }
    }

    static func blocks(_ page: String) throws -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        for (number, text, _) in try lines(page) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                if let block = open {
                    blocks.append(block)
                    open = nil
                } else {
                    open = Block(page: page, line: number, info: String(trimmed.dropFirst(3)), text: "")
                }
            } else if open != nil {
                open?.text += text + "\n"
            }
        }
        return blocks
    }

    /// The anchors GitHub gives a page's headings: lower case, punctuation but `-` and `_` dropped, spaces as `-`,
    /// a repeated one numbered (`-1`).
    static func anchors(_ page: String) throws -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        for (_, text, code) in try lines(page) where !code && text.hasPrefix("#") {
            var heading = String(text.drop { $0 == "#" }).trimmingCharacters(in: .whitespaces)
            heading = heading.replacingOccurrences(
                of: #"\[([^\]]*)\]\([^)]*\)"#, with: "$1", options: .regularExpression)
            let slug = String(
                heading.lowercased().unicodeScalars.filter {
                    $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == " " || $0 == "-"
                        || $0 == "_"
                }.map { $0 == " " ? "-" : Character($0) })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    @Test func everyLinkBetweenThePagesLeadsSomewhere() throws {
        var broken: [String] = []
        var checked = 0
        for page in Self.pages {
            let directory = (page as NSString).deletingLastPathComponent
            for (number, text, code) in try Self.lines(page) where !code {
                // Links outside inline code: `[text](target)`.
                let prose = text.replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
                for match in prose.matches(of: /\]\(([^)\s]+)\)/) {
                    let target = String(match.output.1)
                    guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                    checked += 1
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                    let file =
                        parts[0].isEmpty
                        ? page
                        : ((directory as NSString).appendingPathComponent(String(parts[0])) as NSString)
                            .standardizingPath
                    guard FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(file).path) else {
                        broken.append("\(page):\(number): \(target): no file \(file)")
                        continue
                    }
                    if parts.count == 2, file.hasSuffix(".md"), !(try Self.anchors(file)).contains(String(parts[1])) {
                        broken.append("\(page):\(number): \(target): no heading #\(parts[1]) in \(file)")
                    }
                }
            }
        }
        #expect(checked > 50, "the pages should link to each other (\(checked) links found)")
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    /// Every ```yaml block is a `hubd.yaml` hubd accepts as it is (a secret file it names is made, with a
    /// placeholder, and an HTTPS certificate and key, the tests' own, where the block is checked).
    @Test func everyHubdYAMLBlockIsAcceptedByHubd() async throws {
        let hubd = try builtProduct("hubd")
        var checked = 0
        for page in Self.pages {
            for block in try Self.blocks(page) where block.info == "yaml" {
                checked += 1
                let directory = try TemporaryDirectory(prefix: "docs-yaml")
                var text = block.text
                // Secrets and key files the block names: made in the directory, absolute paths moved there.
                for match in block.text.matches(of: /(\w+_file):\s*([^\s#,}]+)/) {
                    let path = String(match.output.2)
                    guard !path.hasPrefix("$") else { continue }
                    let name = (path as NSString).lastPathComponent
                    text = text.replacingOccurrences(of: path, with: name)
                    try "123456789:AAplaceholder\n".write(
                        toFile: directory.file(name), atomically: true, encoding: .utf8)
                }
                // HTTPS files the block names: a real certificate and key (check-config reads them as hubd does).
                for match in block.text.matches(of: /tls_(certificate|key):\s*([^\s#,}]+)/) {
                    let path = String(match.output.2)
                    let name = (path as NSString).lastPathComponent
                    text = text.replacingOccurrences(of: path, with: name)
                    let identity = try await TestCertificates.shared().localhost
                    let source = match.output.1 == "key" ? identity.keyFile : identity.certificateFile
                    try? FileManager.default.removeItem(atPath: directory.file(name))
                    try FileManager.default.copyItem(atPath: source, toPath: directory.file(name))
                }
                let file = directory.file("hubd.yaml")
                try text.write(toFile: file, atomically: true, encoding: .utf8)
                let result = try await runProcess(hubd, ["--config", file, "--check-config"], environment: [:])
                #expect(
                    result.status == 0,
                    "\(page):\(block.line): hubd refuses this block: \(result.standardError)\n\(block.text)")
            }
        }
        #expect(checked >= 10, "\(checked) blocks")
    }

    /// docs/configuration.md is what `hubd --config-reference` prints: the key lists hubd checks its file against,
    /// so a key added, renamed or given another default in the code fails here until `make docs` writes the page.
    @Test func theConfigurationReferenceIsTheCodes() async throws {
        let result = try await runProcess(try builtProduct("hubd"), ["--config-reference"], environment: [:])
        #expect(result.status == 0, "\(result.standardError)")
        let page = try String(
            contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let printed = result.standardOutput
        #expect(printed.contains("| `silence_timeout` |") && printed.contains("(type: ntfy)"))
        let differing = zip(page.split(separator: "\n"), printed.split(separator: "\n")).enumerated().first {
            $0.element.0 != $0.element.1
        }
        #expect(
            page == printed,
            """
            docs/configuration.md is not what hubd --config-reference prints (run make docs): first difference at \
            line \(differing.map { "\($0.offset + 1): \($0.element.0) ≠ \($0.element.1)" } ?? "the end")
            """)
    }

    /// The `hubctl` commands of a shell block's line: after a `$ ` prompt, `sudo` or variables, split at `&&`,
    /// `;` and `|`, up to a comment or a redirection, words as the shell splits them.
    static func hubctlCommands(in line: String) -> [[String]] {
        var words: [String] = []
        var commands: [[String]] = []
        var word = ""
        var quote: Character?
        var started = false
        func end() {
            if started { words.append(word) }
            word = ""
            started = false
        }
        func command() {
            end()
            while let first = words.first, first == "$" || first == "sudo" || first.contains("=") {
                words.removeFirst()
            }
            if words.first == "hubctl" { commands.append(Array(words.dropFirst())) }
            words = []
        }
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
                continue
            }
            switch character {
            case "'", "\"":
                quote = character
                started = true
            case "\\":
                if let next = characters.popFirst() { word.append(next) }
                started = true
            case " ", "\t":
                end()
            case "#" where !started:
                command()
                return commands
            case ">" where !started || word == "2":
                word = ""
                started = false
                command()
                return commands
            case ";", "|", "&":
                if characters.first == character { characters.removeFirst() }
                command()
            default:
                word.append(character)
                started = true
            }
        }
        command()
        return commands
    }

    @Test func theLineSplitterReadsWhatTheShellWould() {
        #expect(
            Self.hubctlCommands(in: #"$ hubctl sensors add 'front door' --preset zigbee2mqtt  # a comment"#)
                == [["sensors", "add", "front door", "--preset", "zigbee2mqtt"]])
        #expect(
            Self.hubctlCommands(in: "hubctl sensors list && sudo hubctl status | head") == [
                ["sensors", "list"], ["status"],
            ])
        #expect(Self.hubctlCommands(in: "hubctl events --csv > events.csv") == [["events", "--csv"]])
        #expect(
            Self.hubctlCommands(in: #"HUB_STATE_DIR=x hubctl history "living room""#) == [["history", "living room"]])
        #expect(Self.hubctlCommands(in: "make run").isEmpty)
    }

    /// Every `hubctl` line of a shell block (```sh, ```console, or a bare ```) parses with hubctl's own parser, with
    /// `validate()` run: the commands, options and values the pages show exist.
    @Test func everyHubctlLineIsOneHubctlTakes() throws {
        var refused: [String] = []
        var checked = 0
        for page in Self.pages {
            for block in try Self.blocks(page) where ["sh", "console", "bash", "shell", ""].contains(block.info) {
                var joined = ""
                for line in block.text.split(separator: "\n") {
                    // A line continued with a backslash is one command.
                    if line.hasSuffix("\\") {
                        joined += line.dropLast() + " "
                        continue
                    }
                    let full = joined + line
                    joined = ""
                    for arguments in Self.hubctlCommands(in: full) {
                        checked += 1
                        do {
                            _ = try HubctlCommand.parseAsRoot(arguments)
                        } catch {
                            // --help and --version end parsing with a clean exit: those parse.
                            if HubctlCommand.exitCode(for: error) == .success { continue }
                            refused.append(
                                "\(page):\(block.line): hubctl \(arguments.joined(separator: " ")): "
                                    + HubctlCommand.message(for: error))
                        }
                    }
                }
            }
        }
        #expect(checked > 40, "\(checked) hubctl lines found")
        #expect(refused.isEmpty, "\(refused.joined(separator: "\n"))")
    }
}

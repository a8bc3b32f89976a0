import ArgumentParser
import Foundation
import HubCore
import HubSupport

extension HubctlCommand.Sensors {
    /// `hubctl sensors import FILE`
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Add many sensors at once from a CSV, JSON or YAML file.",
            discussion: """
                Each sensor has a name (required) and, optionally, a topic (default: from the topic template, as \
                for 'sensors add'), a kind (status, numeric or particulate) and a silenceTimeout (90s, 15m, 2h); \
                a device that publishes JSON also value, map, unit, decimals, range (-40..85) and availability, \
                as 'sensors add' takes them. 'hubctl sensors export' writes the same shapes:

                  CSV   a header line naming the columns, then a sensor a line:
                          name,topic,kind,silenceTimeout
                          kitchen,kitchen,status,
                          front door,home/front-door/status,status,15m
                  JSON  an array of objects: [{"name": "kitchen", "topic": "kitchen"}, …]
                  YAML  a list of mappings:  - name: kitchen
                                               topic: kitchen

                The format is --format, else the file's extension (.csv, .json, .yaml, .yml), else what the \
                text looks like. All or nothing: when any sensor is wrong (an invalid name or topic, a name or \
                topic twice in the file or already in the registry, control characters), nothing is added and \
                every wrong one is named with its line (or [index] in JSON). The registry is written once, under \
                its lock; a running hubd subscribes to the new sensors within a second.

                Examples:
                  hubctl sensors import sensors.csv
                  hubctl sensors export > all.json && hubctl sensors import all.json --state-dir /srv/other
                  generate-sensors | hubctl sensors import - --format csv --skip-existing
                """)

        @OptionGroup var state: StateOptions

        @Argument(help: ArgumentHelp("The file to read; '-' reads standard input.", valueName: "file"))
        var file: String

        @Option(help: "csv, json or yaml (default: from the file's extension, else from what the text looks like).")
        var format: SensorList.Format?

        @Flag(help: "Skip sensors whose name the registry already has, instead of refusing the import.")
        var skipExisting = false

        @Option(
            help: ArgumentHelp(
                "The topic template for sensors without a topic (default: the configuration's sensors.topic_template, else {name}).",
                valueName: "template"))
        var topicTemplate: String?

        func run() async throws {
            let (configuration, directory) = try await state.resolve()
            let store = StateOptions.registry(configuration: configuration, state: directory)
            let text: String
            if file == "-" {
                text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            } else {
                guard let data = FileManager.default.contents(atPath: file) else {
                    Failure.printError("cannot read '\(file)'")
                    throw ExitCode(Failure.ioError)
                }
                guard let decoded = String(data: data, encoding: .utf8) else {
                    Failure.printError("'\(file)' is not UTF-8 text")
                    throw ExitCode(Failure.invalidInput)
                }
                text = decoded
            }
            let template: TopicTemplate
            do {
                template = try TopicTemplate.from(option: topicTemplate, configured: configuration.topicTemplate)
            } catch {
                throw Failure.report(error)
            }
            let format = format ?? (file == "-" ? nil : SensorList.Format(fileName: file)) ?? .init(sniffing: text)
            let (entries, unreadable) = SensorList.parse(text, as: format)
            let problems = Locked(unreadable)
            let skipExisting = skipExisting
            let outcome = try await withStoreErrors { () async throws(StoreError) -> SensorList.Outcome? in
                do throws(StoreError) {
                    return try await store.update { document throws(RegistryError) in
                        let (outcome, refused) = SensorList.apply(
                            entries, to: &document, skippingExisting: skipExisting, template: template)
                        let wrong = problems.withLock { problems in
                            problems += refused
                            return !problems.isEmpty
                        }
                        // Nothing is written when anything was wrong: a change that throws writes nothing.
                        if wrong { throw .invalidSetting("") }
                        return outcome
                    }
                } catch {
                    if case .registry = error, !problems.withLock(\.isEmpty) { return nil }
                    throw error
                }
            }
            guard let outcome else {
                let problems = problems.withLock { $0 }
                let shown = problems.prefix(1000)
                Failure.printError(
                    "nothing imported: \(problems.count) of the sensors in \(file == "-" ? "the input" : file) can't be added\n"
                        + shown.map { "  " + $0 }.joined(separator: "\n")
                        + (problems.count > shown.count ? "\n  … and \(problems.count - shown.count) more" : ""))
                throw ExitCode(Failure.invalidInput)
            }
            var summary = "Imported \(outcome.added.count) sensor\(outcome.added.count == 1 ? "" : "s")"
            if !outcome.skipped.isEmpty { summary += "; skipped \(outcome.skipped.count) the registry already has" }
            print(summary + ".")
        }
    }

    /// `hubctl sensors export`
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write every sensor as CSV, JSON or YAML, for 'sensors import'.",
            discussion: """
                Writes each sensor's name, topic, kind and silenceTimeout (and a device's value, map, unit, \
                decimals, range and availability), in the order they were added (statuses \
                and times are the hub's and are left out). Importing the output into an empty registry makes the \
                same sensors. The format is --format, else the file's extension, else CSV.

                Examples:
                  hubctl sensors export > sensors.csv
                  hubctl sensors export --format yaml
                  hubctl sensors export all.json
                """)

        @OptionGroup var state: StateOptions

        @Argument(help: ArgumentHelp("The file to write (default: standard output).", valueName: "file"))
        var file: String?

        @Option(help: "csv, json or yaml (default: from the file's extension, else csv).")
        var format: SensorList.Format?

        func run() async throws {
            let store = try await state.registryWithStatuses()
            let document = try await withStoreErrors { () async throws(StoreError) in try await store.read() }
            let format = format ?? file.flatMap(SensorList.Format.init(fileName:)) ?? .csv
            let text = SensorList.render(document.sensors, as: format)
            guard let file, file != "-" else {
                print(text, terminator: "")
                return
            }
            do {
                try text.write(toFile: file, atomically: true, encoding: .utf8)
            } catch {
                Failure.printError("cannot write '\(file)': \(error.localizedDescription)")
                throw ExitCode(Failure.ioError)
            }
            FileHandle.standardError.write(Data("Exported \(document.sensors.count) sensors to \(file).\n".utf8))
        }
    }
}

extension SensorList.Format: ExpressibleByArgument {}

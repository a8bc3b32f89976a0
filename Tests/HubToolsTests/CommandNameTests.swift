import ArgumentParser
import HubCLI
import Testing

/// Every hubctl command names itself. Without a `commandName`, ArgumentParser derives it with
/// `String(describing:)` of the command's type at every start, a dynamic cast that scans all of the binary's
/// protocol conformances once per type: 10 ms of hubctl's 31 ms start on 2026-11-26 (perf stat, `hubctl --version`;
/// 20.5 ms with every name given).
@Suite struct CommandNameTests {
    /// The commands under `command`, itself included, that leave their name to be derived.
    func unnamed(_ command: any ParsableCommand.Type, under path: String = "") -> [String] {
        let configuration = command.configuration
        let here = path + "/" + (configuration.commandName ?? "\(command)")
        return (configuration.commandName == nil ? [here] : [])
            + configuration.subcommands.flatMap { unnamed($0, under: here) }
    }

    @Test func everyHubctlCommandNamesItself() {
        #expect(HubctlCommand.configuration.subcommands.count >= 10)
        #expect(unnamed(HubctlCommand.self) == [])
    }
}

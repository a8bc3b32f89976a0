import HubAgent
import HubCLI

/// One executable behind both names (issue 55): the package installs it as `hubd` with `hubctl` a symbolic link to it,
/// so the Swift runtime and the modules both commands share are on the disk once. It answers to the name it was run
/// by; `swift run hubctl` builds the command line alone, for development.
@main
enum Hubd {
    static func main() async {
        switch Invocation.command(calledAs: CommandLine.arguments.first ?? "hubd") {
        case .hubctl: await HubctlCommand.main()
        case .hubd: await HubdCommand.main()
        }
    }
}

/// Which command a multi-call binary was run as: the last component of `argv[0]`, so `/usr/bin/hubctl`, `./hubctl`
/// and `hubctl` are the command line, and any other name (`hubd`, a copy renamed) is the agent.
enum Invocation {
    case hubd, hubctl

    static func command(calledAs path: String) -> Invocation {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name == "hubctl" ? .hubctl : .hubd
    }
}

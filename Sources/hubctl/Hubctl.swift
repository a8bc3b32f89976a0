import HubCLI

@main
enum Hubctl {
    static func main() async { await HubctlCommand.main() }
}

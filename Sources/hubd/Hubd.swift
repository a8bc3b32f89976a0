import HubAgent

@main
enum Hubd {
    static func main() async { await HubdCommand.main() }
}

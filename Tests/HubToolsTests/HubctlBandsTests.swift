import Foundation
import HubCore
import HubTestKit
import Testing

/// `hubctl sensors add/set --bands` as a process against real files: stored, shown, cleared, refused where they
/// don't belong.
@Suite(.timeLimit(.minutes(2)))
struct HubctlBandsTests {
    let hubctl: Hubctl

    init() throws {
        hubctl = try Hubctl()
    }

    func bands(_ name: String) throws -> ValueBands? {
        try DefaultsStore(directory: hubctl.state.path).read().sensor(named: name)?.format.bands
    }

    @Test func addShowSetAndClear() async throws {
        let added = try await hubctl.run(
            "sensors", "add", "garden uv", "--kind", "numeric", "--value", "uvi", "--unit", "UVI", "--bands",
            "0=Low,3=Moderate,6=High")
        #expect(added.status == 0, "\(added.standardError)")
        #expect(try bands("garden uv") == ValueBands("0=Low,3=Moderate,6=High"))
        let shown = try await hubctl.run("sensors", "show", "garden uv")
        #expect(shown.standardOutput.contains("Bands:") && shown.standardOutput.contains("0=Low,3=Moderate,6=High\n"))
        let json = try await hubctl.run("sensors", "show", "garden uv", "--json")
        #expect(json.standardOutput.contains(#""bands": "0=Low,3=Moderate,6=High""#), "\(json.standardOutput)")

        let set = try await hubctl.run("sensors", "set", "garden uv", "--bands", ValueBands.whoUV.description)
        #expect(set.status == 0, "\(set.standardError)")
        #expect(try bands("garden uv") == .whoUV)
        let cleared = try await hubctl.run("sensors", "set", "garden uv", "--bands", "")
        #expect(cleared.status == 0, "\(cleared.standardError)")
        #expect(try bands("garden uv") == nil)
        #expect(try DefaultsStore(directory: hubctl.state.path).read().sensor(named: "garden uv")?.format.unit == "UVI")
    }

    @Test func badBandsAreRefusedNamingTheOption() async throws {
        let bad = try await hubctl.run("sensors", "add", "uv", "--kind", "numeric", "--bands", "3=Low,1=High")
        #expect(bad.status != 0)
        #expect(bad.standardError.contains("--bands band 2: 1 is not above 3"), "\(bad.standardError)")
        let status = try await hubctl.run("sensors", "add", "door", "--bands", "0=Low")
        #expect(status.status != 0)
        #expect(status.standardError.contains("for numeric sensors"), "\(status.standardError)")
        #expect(try DefaultsStore(directory: hubctl.state.path).read().sensors.isEmpty)
    }
}

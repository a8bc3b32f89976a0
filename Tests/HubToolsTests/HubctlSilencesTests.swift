import Foundation
import HubTestKit
import Testing

/// Silences refuse what they cannot mean (issue 52): before, `--for 10` and `--for 1 hour` made a 1-second silence of
/// `sensor=door* sensor=hour` and exited 0, `door[` and `sensor=~door.*` were taken and matched nothing.
@Suite struct HubctlSilencesTests {
    @Test(arguments: [
        (["door*", "--for", "10"], "'10' has no unit: write 10m, 10h or 10d"),
        (["door*", "--for", "1", "hour"], "'1' has no unit"),
        (["door*", "hour", "--for", "1h"], "'hour' looks like the unit of --for"),
        (["door*", "--for", "0s"], "must last longer than nothing"),
        (["door*", "--for=-1h"], "can't last a negative time"),
        (["door*", "--for", "soon"], "'soon' is not a duration"),
        (["door["], "opens a [ it never closes"),
        (["sensor=~door.*"], "regular expressions (=~, !~) are not supported"),
        (["sensor!~door.*"], "regular expressions (=~, !~) are not supported"),
    ])
    func whatCannotMeanAnythingIsRefused(_ arguments: [String], _ reason: String) async throws {
        let hubctl = try Hubctl()
        let result = try await hubctl.run(["silences", "add"] + arguments)
        #expect(result.status == 64 && result.standardError.contains(reason), "\(arguments): \(result.standardError)")
        #expect(try await hubctl.run("silences", "list").standardOutput.contains("No silences in force"))
    }

    /// A silence that matches no sensor is taken (one may be added later) and said so.
    @Test func aSilenceThatMatchesNoSensorIsWarnedAbout() async throws {
        let hubctl = try Hubctl()
        #expect(try await hubctl.run("sensors", "add", "front door").status == 0)
        let none = try await hubctl.run("silences", "add", "garage*", "--for", "1h")
        #expect(none.status == 0 && none.standardError.contains("warning: no sensor matches sensor=garage* now"))
        let some = try await hubctl.run("silences", "add", "front*", "--for", "1h")
        #expect(some.status == 0 && !some.standardError.contains("warning"), "\(some.standardError)")
    }
}

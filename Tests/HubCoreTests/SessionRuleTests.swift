import Foundation
import HubCore
import HubTestKit
import Testing

/// `sessions:` in hubd.yaml: which sensors are mobile and how their readings group, errors naming the key.
@Suite struct SessionRuleTests {
    func load(_ yaml: String) throws -> HubConfiguration {
        let directory = try TemporaryDirectory(prefix: "sessions")
        try yaml.write(toFile: directory.file("hubd.yaml"), atomically: true, encoding: .utf8)
        return try HubConfiguration.load(option: nil, environment: ["HUB_CONFIG": directory.file("hubd.yaml")])
    }

    @Test func gapsAreDurationsManualOrTheDefault() throws {
        let rules = try load(
            """
            sessions:
              - sensors: [walker, "airbeam*"]
              - sensors: survey
                gap: manual
              - sensors: [jogger]
                gap: 90
            """
        ).sessions
        #expect(rules.map(\.sensors) == [["walker", "airbeam*"], ["survey"], ["jogger"]])
        #expect(rules.map(\.gap) == [SessionRule.defaultGap, nil, .seconds(90)])
    }

    @Test func badEntriesNameWhatIsWrong() throws {
        for (yaml, fragment) in [
            ("sessions:\n  - gap: 5m\n", "needs sensors:"),
            ("sessions:\n  - sensors: [a]\n    gap: soon\n", "soon"),
            ("sessions:\n  - sensors: [a]\n    gap: 0s\n", "0s"),
            ("sessions:\n  - sensors: [a]\n    every: 5m\n", "every"),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try load(yaml) }
            #expect(error.map { "\($0)".contains(fragment) } == true, "\(yaml): \(error.map { "\($0)" } ?? "")")
        }
    }
}

import Foundation
import HubTestKit

// How AlertChaosTests judges a run: the backends' files, one message per id, against what was expected.
extension AlertChaosTests {
    /// The files' lines, one message per id, against `expected` (`message(_:_:_:)`).
    func judge(_ files: [String: String], expected: [String]) -> Outcome {
        var outcome = Outcome(expected: expected)
        for (backend, path) in files.sorted(by: { $0.key < $1.key }) {
            var ids: [String: String] = [:]
            for line in jsonLines(path) {
                let seen = message(backend, line["reason"] as? String ?? "?", line["alerts"] as? [String] ?? [])
                let id = line["id"] as? String ?? "?"
                if let before = ids[id] {
                    // The same id again: the outbox's at least once, allowed only for the same message.
                    if before == seen { outcome.repeats += 1 } else { outcome.extra.append("\(seen) under \(id)") }
                    continue
                }
                ids[id] = seen
                outcome.seen.append(seen)
            }
        }
        var left = outcome.seen
        for message in expected {
            if let index = left.firstIndex(of: message) { left.remove(at: index) } else { outcome.lost.append(message) }
        }
        outcome.extra += left
        return outcome
    }

    /// A message as the judge compares them: backend, reason and the alerts it names.
    func message(_ backend: String, _ reason: String, _ alerts: [String]) -> String {
        "\(backend) \(reason) \(alerts.sorted().joined(separator: ","))"
    }

    /// `message` for a person: many alerts shortened to the first, the last and how many.
    func short(_ messages: [String]) -> [String] {
        messages.map { message in
            let parts = message.split(separator: " ", maxSplits: 2).map(String.init)
            let alerts = parts.count > 2 ? parts[2].split(separator: ",") : []
            guard alerts.count > 3 else { return message }
            return "\(parts[0]) \(parts[1]) \(alerts[0])…\(alerts[alerts.count - 1]) (\(alerts.count))"
        }
    }
}

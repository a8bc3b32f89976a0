import Foundation
import HubCore

extension DiscoveryReport {
    // MARK: For people

    /// - Parameters:
    ///   - again: the command that adds them all (`hubctl discover --add`, with the options given).
    func text(adding: Bool, again: String) -> String {
        var text = ""
        if !rows.isEmpty {
            let table = rows.map { row in
                let registry =
                    row.existing.map { "exists (\($0))" }
                    ?? (row.problem != nil ? "can't add" : adding ? "added" : "new")
                return [
                    row.device.family.rawValue, row.device.device, row.sensor, row.device.setup.topic,
                    row.device.value ?? "-", row.device.setup.kind.rawValue, registry,
                ]
            }
            text += Output.table(
                header: ["FAMILY", "DEVICE", "SENSOR", "TOPIC", "VALUE", "KIND", "REGISTRY"], rows: table)
        }
        let waiting = rows.filter { $0.existing == nil && $0.problem == nil }
        if adding {
            for sensor in added {
                text += "Added '\(sensor.name)' on topic '\(sensor.topic)'\(Output.deviceSummary(sensor)).\n"
            }
            if added.isEmpty && !rows.isEmpty {
                text += "Nothing to add: every device heard that can have a sensor has one.\n"
            }
        } else if !waiting.isEmpty {
            text += "\nTo add \(waiting.count == 1 ? "it" : "them one by one"):\n"
            for row in waiting {
                var why = "\(row.device.summary): \(row.device.reason)"
                if let note = row.device.nameNote { why += "; \(note)" }
                text += "  # " + Output.shown(why) + "\n  " + Output.shown(Self.command(row)) + "\n"
            }
            if waiting.count > 1 { text += "or all at once: \(again)\n" }
        }
        let refused = rows.filter { $0.problem != nil }
        if !refused.isEmpty {
            text += "\nCan't be added:\n"
            text += refused.map { "  \(Output.shown($0.device.device)): \(Output.shown($0.problem ?? ""))\n" }.joined()
        }
        if !skipped.isEmpty {
            text += "\nNot followed:\n"
            text += skipped.map { "  \(Output.shown($0.device)): \(Output.shown($0.reason))\n" }.joined()
        }
        return text
    }
}

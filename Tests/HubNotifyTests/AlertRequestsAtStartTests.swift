import Foundation
import HubCore
import HubSupport
import HubTestKit
import Testing

@testable import HubNotify

/// A person's request (`hubctl silences expire`, written to `alert-requests.jsonl`) that lands while hubd starts:
/// before its router watches the file, or before anything rings the router. Found by `AlertChaosTests` (seed
/// 321638): hubd killed just as `hubctl silences expire` ran; the request waited unseen, the door's alert stayed
/// silenced, and when the door closed its alert closed untold, so neither its firing nor its resolved message went.
@Suite struct AlertRequestsAtStartTests {
    static let yaml = """
        notifiers:
          backends:
            audit: { type: file, path: /dev/null }
          rules:
            doors: { events: [changed], statuses: [open], backends: [audit], group_wait: 1s }
        """

    static func silence(_ id: String) -> AlertRequest {
        let now = Timestamp.now
        return .silence(
            Silence(
                id: id, matchers: [Silence.Matcher(name: "sensor", operation: .equal, value: "door*")], startsAt: now,
                endsAt: now.adding(milliseconds: 3_600_000), createdBy: "ana", comment: "painting"))
    }

    /// Written while hubd was down (or starting, before its router ran): taken at start, with no event to wake it.
    @Test func aRequestWrittenBeforeTheStartIsTakenWithNoEvent() async throws {
        let directory = try TemporaryDirectory()
        try await withRouter(
            Self.yaml, directory: directory,
            before: { _ in try? AlertRequests(directory: directory.path).append([Self.silence("before")]) }
        ) { router in
            // Taken: in the book, and gone from the file. The file is emptied only after the book is saved, so the
            // two are waited for together (CI saw the book before the file was emptied).
            try await eventually("the silence taken", within: .seconds(5)) {
                router.alerts.book.silences.map(\.id) == ["before"]
                    && AlertRequests(directory: directory.path).pending().requests.isEmpty
            }
        }
    }

    /// Written as the router starts, at moments spread over its first milliseconds: each taken, none left waiting
    /// for a later change of the file.
    @Test func aRequestWrittenAsTheRouterStartsIsTaken() async throws {
        for run in 0..<40 {
            let directory = try TemporaryDirectory()
            try await withRouter(Self.yaml, directory: directory) { router in
                try await Task.sleep(for: .microseconds(run * 250))
                try AlertRequests(directory: directory.path).append([Self.silence("s\(run)")])
                try await eventually("run \(run): the silence taken", within: .seconds(5)) {
                    router.alerts.book.silences.map(\.id) == ["s\(run)"]
                }
            }
        }
    }
}

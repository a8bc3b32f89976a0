import Foundation
import HubCore
import Testing

@testable import HubNotify

/// What a chat backend edits and what it sends anew (`GroupMessages`), without a server.
@Suite struct GroupMessagesTests {
    func message(
        _ group: String, _ reason: AlertMessage.Reason, _ alerts: [String]
    ) -> HubNotify.Notification {
        Notification(
            id: "\(group)#\(reason)", backend: "chat", rule: "leak", event: event("kitchen"), title: "t", body: "b",
            alert: .init(group: group, reason: reason, alerts: alerts))
    }

    @Test func aFiringUpdateEditsTheGroupsMessage() {
        let groups = GroupMessages<Int>()
        #expect(groups.target(of: message("leak", .firing, ["a"])) == nil, "nothing sent yet")
        groups.sent(1, for: message("leak", .firing, ["a"]))
        // The book's update names everything still firing: a resolved or acknowledged `a` may leave it.
        #expect(groups.target(of: message("leak", .firing, ["b"])) == 1)
        #expect(groups.target(of: message("leak", .firing, ["b", "a"])) == 1)
        #expect(groups.target(of: message("other", .firing, ["a"])) == nil, "another group")
        groups.edited(1, for: message("leak", .firing, ["a", "b"]))
        #expect(groups.target(of: message("leak", .digest, ["a", "b"])) == nil, "a digest is a message of its own")

        // Reminders are new messages (they notify), and the newest is the one later updates edit.
        #expect(groups.target(of: message("leak", .reminder, ["a", "b"])) == nil)
        groups.sent(2, for: message("leak", .reminder, ["a", "b"]))
        #expect(groups.target(of: message("leak", .firing, ["a", "b", "c"])) == 2)

        // A refused edit: forgotten, and the new message sent instead is the group's.
        groups.forget(message("leak", .firing, ["a", "b", "c"]))
        #expect(groups.target(of: message("leak", .firing, ["a", "b", "c"])) == nil)
        groups.sent(3, for: message("leak", .firing, ["a", "b", "c"]))
        #expect(groups.target(of: message("leak", .firing, ["a", "b", "c"])) == 3)

        // Resolved: a new message, and the group's next firing starts a new one too.
        #expect(groups.target(of: message("leak", .resolved, ["a", "b", "c"])) == nil)
        groups.sent(4, for: message("leak", .resolved, ["a", "b", "c"]))
        #expect(groups.target(of: message("leak", .firing, ["a", "b", "c"])) == nil)
        #expect(groups.count == 0)
    }

    @Test func theOldestGroupGoesWhenFull() {
        let groups = GroupMessages<Int>(capacity: 3)
        for index in 1...4 { groups.sent(index, for: message("g\(index)", .firing, ["a"])) }
        #expect(groups.count == 3)
        #expect(groups.target(of: message("g1", .firing, ["a"])) == nil)
        #expect(groups.target(of: message("g2", .firing, ["a"])) == 2)
        #expect(groups.target(of: message("g4", .firing, ["a"])) == 4)
        #expect(GroupMessages<Int>().capacity == 1_000)
    }
}

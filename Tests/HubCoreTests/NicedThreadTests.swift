import Foundation
import HubSupport
import Testing

/// The registry writer's thread: its work in order, at nice 10 on that thread alone.
@Suite struct NicedThreadTests {
    /// This thread's nice value: field 19 of /proc/thread-self/stat (after the command name's closing parenthesis).
    static func niceOfThisThread() -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
    }

    @Test func runsItsWorkInOrderAtALowerPriority() async throws {
        let thread = NicedThread(name: "test.niced")
        let order = Locked<[Int]>([])
        for index in 0..<100 { thread.async { order.withLock { $0.append(index) } } }
        let base = try #require(Self.niceOfThisThread())  // 0, unless the tests run under nice themselves
        let nice = await thread.run { Self.niceOfThisThread() }
        #expect(order.withLock { $0 } == Array(0..<100))
        #expect(nice == min(19, base + 10))
        #expect(Self.niceOfThisThread() == base)  // the caller's thread keeps its priority
    }
}

import Foundation

/// How `hubctl` has the hubd running on a state directory write what it holds before reading the files: hubd
/// commits the history every `history.commit_interval` (an hour by default), writes the registry's statuses every
/// `store.flush_interval` (5 minutes) and the alert book's files only when the book must be durable, all for the SD
/// card; without asking, `hubctl history`, `hubctl sensors list` and `hubctl alerts list` would miss what came since.
/// The request is SIGUSR1; hubd answers by rewriting `hubd.answered` in the state directory (its pid and how many
/// it answered; not flushed: worth nothing after a crash) once everything is written. hubd writes the file first
/// when it starts trapping the signal, so `hubctl` only signals a hubd that answers: SIGUSR1 ends a process that
/// does not trap it (an older hubd, or one starting).
public enum WriteRequest {
    public static let fileName = "hubd.answered"
    /// What hubd answered in before (it answered only for the history): removed as hubd starts.
    static let formerFileName = "history.answered"

    /// hubd, as it starts: an earlier hubd's answer goes, lest its pid be this one's before the signal is trapped.
    public static func forget(in directory: String) {
        unlink(directory + "/" + fileName)
        unlink(directory + "/" + formerFileName)
    }

    /// hubd: process `pid` answers requests, `count` so far.
    public static func answer(in directory: String, pid: Int32, count: Int) {
        try? replaceFileAtomically(at: directory + "/" + fileName, with: Array("\(pid) \(count)\n".utf8), sync: false)
    }

    /// hubctl: has the hubd running on `directory`, if one answers requests, write what it holds, waiting up to
    /// `limit` for it; whether it answered. Nothing when no hubd runs there or it is another user's (the files are
    /// what there is then).
    @discardableResult
    public static func ask(directory: String, within limit: Duration = .seconds(2)) -> Bool {
        guard let before = answered(in: directory), before.pid == InstanceLock.holder(directory: directory),
            kill(before.pid, SIGUSR1) == 0
        else { return false }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            usleep(10_000)
            if let now = answered(in: directory), now != before { return true }
        }
        return false
    }

    private static func answered(in directory: String) -> Answer? {
        guard let text = try? String(contentsOfFile: directory + "/" + fileName, encoding: .utf8) else { return nil }
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let pid = Int32(fields[0]), pid > 0, let count = Int(fields[1]) else { return nil }
        return Answer(pid: pid, count: count)
    }

    private struct Answer: Equatable {
        var pid: Int32
        var count: Int
    }
}

import Crypto
import HubCore
import HubNotify
import HubRemote
import Logging

/// The cluster's alert book (`PostgresAlertBook`) as the router's `SharedAlertBook`: kept by the agent that holds
/// the `alerts` duty, each step fenced by that lease.
final class ClusterAlertBook: SharedAlertBook {
    let database: PostgresAlertBook
    let keeper: LeaseKeeper

    init(database: PostgresAlertBook, keeper: LeaseKeeper) {
        self.database = database
        self.keeper = keeper
    }

    func whileKept(_ work: @escaping @Sendable () async -> Void) async {
        await DutyGate(keeper: keeper, duty: .alerts).run(work)
    }

    func load() async throws -> AlertBook { try await database.load() }

    func key() async throws -> SymmetricKey { try await database.key() }

    func step(_ body: @escaping @Sendable (SharedAlertStep) async -> SharedAlertStep.Result) async throws -> Bool? {
        guard let fence = keeper.fence(of: .alerts) else { return nil }
        return try await database.step(fence: fence, body)
    }

    func changes() -> AsyncStream<Void> { database.queuedChanges() }

    func committed() -> AsyncStream<Void> { database.writtenChanges() }

    func outcome(of id: Int64) async throws -> String? { try await database.outcome(of: id) }

    func ask(_ request: AlertRequest) async throws -> Int64 { try await database.ask(request) }

    func saved() async throws -> SavedAlerts { try await database.saved() }

    func send(_ requests: [AlertRequest]) async throws { try await database.send(requests) }
}

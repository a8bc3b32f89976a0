import Crypto
import Foundation
import HubCore

/// Where `hubctl`, the HTTP API and hubd's button listeners find the alert book and leave requests for it: the state
/// directory's files (`AlertFiles`) on one hub, the cluster's database (HubRemote's `PostgresAlertBook`) in a
/// cluster. Whoever keeps the book alone writes it; everyone else asks.
public protocol AlertPlace: Sendable {
    /// The book as last kept, with the requests not taken yet.
    func saved() async throws -> SavedAlerts
    /// Leaves `requests` for the book's keeper, durably.
    func send(_ requests: [AlertRequest]) async throws
    /// A number that moves whenever the book does, where the place can tell without reading it (hubd's own place);
    /// nil where only the files or the database can say.
    var revision: Int? { get }
}

extension AlertPlace {
    public var revision: Int? { nil }
}

/// One hub's alert place: `alerts.json` and `alert-requests.jsonl` in the state directory.
public struct AlertFiles: AlertPlace {
    public let directory: String
    /// The book's file and its log of changes (`AlertLedger+Files`), for whoever watches or moves them.
    public static let bookName = AlertLedger.bookName
    public static let logName = AlertLedger.logName

    public init(directory: String) { self.directory = directory }

    public func saved() async throws -> SavedAlerts { try SavedAlerts(directory: directory) }

    public func send(_ requests: [AlertRequest]) async throws {
        try AlertRequests(directory: directory).append(requests)
    }
}

/// hubd's own place on one hub (`NotificationRouter.alertPlace`): the requests not taken yet, read from
/// `alert-requests.jsonl` first, then the book the router keeps in memory, which has every request taken between the
/// two reads (as `SavedAlerts(directory:)` reads the files in that order). The files follow the book only when it
/// must be durable (before alert messages go, at the router's progress reports, when a person acted, when `hubctl`
/// asks: `WriteRequest`), so hubd's readers — the API, the dashboard, Home Assistant's alert entities — read the
/// book here, and before the router has opened it, the files.
struct LiveAlerts: AlertPlace {
    let files: AlertFiles
    let ledger: AlertLedger

    func saved() async throws -> SavedAlerts {
        let waiting = AlertRequests(directory: files.directory).pending().requests
        guard let book = ledger.openBook else { return try await files.saved() }
        return SavedAlerts(book: book, pending: waiting)
    }

    func send(_ requests: [AlertRequest]) async throws { try await files.send(requests) }

    var revision: Int? { ledger.revision }
}

/// A cluster's alert book (docs/cluster.md, "Alerts"): kept by one agent at a time, the holder of the `alerts` duty,
/// in the database, with the events it has not taken yet and people's requests queued beside it. Each of the
/// keeper's steps takes what is queued, applies it to the book, and writes the book, the messages that are due
/// (into the cluster's outbox) and the requests' outcomes in one transaction, fenced by the duty's lease: a keeper
/// that lost the duty commits nothing.
public protocol SharedAlertBook: AlertPlace {
    /// Runs `work` while this agent keeps the book (cancelled when the duty goes to another agent), again each time
    /// it comes back, until cancelled.
    func whileKept(_ work: @escaping @Sendable () async -> Void) async
    /// The book as the last keeper committed it.
    func load() async throws -> AlertBook
    /// The cluster's key for the tokens of buttons and links, made by the first agent that asks.
    func key() async throws -> SymmetricKey
    /// One step: hands `body` the queued events (oldest first) and requests, and commits the book, the
    /// notifications and the requests' outcomes it returns; then says whether more wait than a step takes. Nil, with
    /// nothing committed, when this agent no longer keeps the book.
    func step(_ body: @escaping @Sendable (SharedAlertStep) async -> SharedAlertStep.Result) async throws -> Bool?
    /// A signal each time an agent queued something for the book (and when the listening connection is made).
    func changes() -> AsyncStream<Void>
    /// A signal each time the keeper committed a step that changed the book.
    func committed() -> AsyncStream<Void>
    /// The outcome of a request `send` queued as `id`, once the keeper took it; nil until then.
    func outcome(of id: Int64) async throws -> String?
    /// Queues one request; returns its id, for `outcome(of:)`.
    func ask(_ request: AlertRequest) async throws -> Int64
}

/// What a keeper's step takes: the book as committed (read under the step's lock: the truth, whatever the keeper
/// believed before), the events the ingest queued for it, and people's requests by id.
public struct SharedAlertStep: Sendable {
    public var book: AlertBook
    public var events: [SensorEvent]
    public var requests: [(id: Int64, request: AlertRequest)]
    /// Queued rows that could not be read (logged by the keeper, then dropped).
    public var unreadable: Int

    public init(
        book: AlertBook, events: [SensorEvent], requests: [(id: Int64, request: AlertRequest)], unreadable: Int
    ) {
        (self.book, self.events, self.requests, self.unreadable) = (book, events, requests, unreadable)
    }

    /// What the step commits: the book is written when its revision moved past the committed one's.
    public struct Result: Sendable {
        public var book: AlertBook
        public var notifications: [Notification]
        /// Each request's outcome, in words, by id.
        public var outcomes: [Int64: String]

        public init(book: AlertBook, notifications: [Notification], outcomes: [Int64: String]) {
            (self.book, self.notifications, self.outcomes) = (book, notifications, outcomes)
        }
    }
}

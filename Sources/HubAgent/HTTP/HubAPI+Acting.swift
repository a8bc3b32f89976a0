import Foundation
import HTTPTypes
import HubCore
import HubNotify
import HubSupport
import Hummingbird
import NIOCore

/// What the dashboard acts with beyond hubctl's first doors: snoozing one alert, previewing a silence before it is
/// added, renaming a sensor, the backends' health and a test through one. Each goes where hubctl's goes (the alert
/// requests, the registry, the router's backends) and names who did it.
extension HubAPI {
    /// The lengths a snooze may have: a minute to a week (a longer one is a silence, with a comment).
    static let snoozeLengths: ClosedRange<Int64> = 60_000...(7 * 86_400_000)

    /// `POST /api/v1/alerts/{id}/snooze` `{"for": "1h"}` (1 h when left out): a silence on the alert's rule,
    /// sensor and kind, announced as a notification's snooze button's is; `DELETE /api/v1/silences/{id}` with
    /// the answer's `silence` ends it early.
    func snoozeAlert(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let id = pathName(context, "id")
        let body = try await object(request, context, allowed: ["for"])
        var length = AlertBook.snooze
        if let text = try optionalString(body, "for") {
            guard let duration = DurationText.parse(text), text.contains(where: \.isLetter) else {
                throw HTTPError(.badRequest, message: "\"for\" is a duration with its unit, like 30m, 1h or 1d")
            }
            length = Int64(duration.seconds * 1000)
        }
        guard Self.snoozeLengths.contains(length) else {
            throw HTTPError(.badRequest, message: "\"for\" is from 1m to 7d (a longer pause is a silence)")
        }
        guard try await savedAlerts().book.alerts[id]?.firing == true else {
            throw HTTPError(.notFound, message: "no firing alert '\(id)'")
        }
        let who = Self.who(context, onBehalfOf: nil)
        let silence = "snooze-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        try await send(
            .snooze(
                alert: id, silence: silence, milliseconds: length, by: who, via: context.identity?.via ?? "api",
                at: .now))
        logger.notice("alert snoozed over HTTP", metadata: ["alert": "\(id)", "by": "\(who)", "silence": "\(silence)"])
        return json(["snoozed": id, "silence": silence], status: .accepted)
    }

    struct SilencePreview: Encodable {
        /// The sensors it may hold (by name and labels: a matcher on rule, kind or status is not known until an
        /// alert comes).
        var sensors: [String]
        /// The open alerts it would hold now.
        var alerts: [String]
        var warning: String?
    }

    /// `GET /api/v1/silences/preview?matcher=door*&matcher=kind=offline`: what a silence with these matchers would
    /// hold, before it is added (Alertmanager's silence form shows the same); the matchers are checked as adding
    /// checks them.
    func previewSilence(_ request: Request) async throws -> Response {
        let texts = request.uri.queryParameters.getAll("matcher").map { String($0) }
        guard !texts.isEmpty else {
            throw HTTPError(.badRequest, message: "give one matcher or more: ?matcher=door*&matcher=kind=offline")
        }
        var matchers: [Silence.Matcher] = []
        for text in texts {
            do {
                matchers.append(try Silence.Matcher(parsing: text))
            } catch {
                throw HTTPError(.badRequest, message: "\(error)")
            }
        }
        let now = Timestamp.now
        let silence = Silence(
            id: "preview", matchers: matchers, startsAt: now, endsAt: now.adding(milliseconds: 3_600_000),
            createdBy: "", comment: "")
        let names = try await readStore().sensors.sortedByName().map(\.name)
        let facts = alertSetup()?.facts ?? { _ in AlertBook.SensorFacts() }
        let sensors = names.filter { silence.mayMatch(anyOf: [$0], facts: facts) }
        let book = try await savedAlerts().book
        let alerts = book.alerts.values.filter { $0.firing && book.silenced($0, by: silence, at: now) }.map(\.id).sorted()
        return json(
            SilencePreview(
                sensors: sensors, alerts: alerts, warning: silence.unmatchedWarning(sensors: names, facts: facts)))
    }

    /// `PATCH /api/v1/sensors/{name}` `{"name": "hall door"}`: renames it (`hubctl sensors rename`); its topic
    /// stays, so its firmware needs no change.
    func renameSensor(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let old = pathName(context, "name")
        let body = try await object(request, context, allowed: ["name"])
        guard let new = try optionalString(body, "name") else {
            throw HTTPError(.badRequest, message: "\"name\" (the new name) is required")
        }
        let renamed = try await storeUpdate { document throws(RegistryError) in
            try document.renameSensor(old, to: new, retopic: nil)
        }
        logger.notice(
            "sensor renamed over HTTP",
            metadata: ["sensor": "\(old)", "to": "\(renamed.name)", "by": "\(context.identity?.who ?? "api")"])
        return sensorResponse(renamed)
    }

    struct NotifierHealth: Encodable {
        var name: String
        var type: String
        var queued: Int
        var delivered: Int
        var retried: Int
        var failed: Int
        var dropped: Int
        var lastDelivered: Timestamp?
        var lastError: String?
        var lastErrorAt: Timestamp?
    }

    /// `GET /api/v1/notifiers`: each backend's health since hubd started (what `hubctl status` counts).
    func listNotifiers() -> Response {
        let statistics = snapshot(false).notifications.backends
        let health = notifiers().map { name, type in
            let counted = statistics[name] ?? BackendStatistics()
            return NotifierHealth(
                name: name, type: type, queued: counted.queued, delivered: counted.delivered,
                retried: counted.retried, failed: counted.failed, dropped: counted.dropped,
                lastDelivered: counted.lastDelivered, lastError: counted.lastError, lastErrorAt: counted.lastErrorAt)
        }
        return json(health)
    }

    struct TestAnswer: Encodable {
        var backend: String
        var delivered: Bool
        /// "delivered", or the receiver's own words for why not.
        var result: String
        var milliseconds: Int
    }

    /// `POST /api/v1/notifiers/{name}/test`: one real attempt through the backend, as `hubctl notify test NAME`;
    /// 200 with what happened, delivered or not.
    func testNotifier(_ request: Request, _ context: HubRequestContext) async throws -> Response {
        let name = pathName(context, "name")
        guard let notifierTest else { throw HTTPError(.serviceUnavailable, message: "no hub runs the notifiers") }
        guard notifiers().contains(where: { $0.name == name }) else {
            throw HTTPError(.notFound, message: "no notifier backend named '\(name)'")
        }
        let who = context.identity?.who ?? "api"
        let event = SensorEvent(
            id: SensorEvent.randomID(), kind: .test, sensor: "test from \(who)", topic: "sensorhub/test",
            oldStatus: "before", newStatus: "test", time: .now)
        let outcomes: [NotificationTest.Outcome]
        do {
            outcomes = try await notifierTest(name, event)
        } catch {
            throw HTTPError(.internalServerError, message: "\(error)")
        }
        var answers: [TestAnswer] = []
        for outcome in outcomes {
            let milliseconds = Int(outcome.elapsed.seconds * 1000)
            if outcome.results.isEmpty {
                answers.append(
                    TestAnswer(
                        backend: name, delivered: false, result: "no devices registered", milliseconds: milliseconds))
            }
            for (_, result) in outcome.results {
                answers.append(
                    TestAnswer(
                        backend: name, delivered: result == .delivered, result: "\(result)",
                        milliseconds: milliseconds))
            }
        }
        logger.notice(
            "test notification sent over HTTP",
            metadata: ["backend": "\(name)", "by": "\(who)", "delivered": "\(answers.allSatisfy(\.delivered))"])
        return json(answers)
    }
}

import HubCore
import HubSupport

extension SensorTracker {
    /// One sensor as the tracker follows it: what every message reads inline, the rest out of line.
    struct Tracked: Sendable {
        /// The registry's id for the sensor: with `sequence`, its events' ids.
        var id: String
        /// The sequence number of its last event.
        var sequence: Int
        var name: String
        var status: String
        /// Offline because its device (or its availability topic) said so in this run, not by silence: only then
        /// does a retained `online`, which the broker replays on every subscription, bring it back.
        var offlineByAnnouncement = false
        var isOffline: Bool
        var lastUpdated: Timestamp?
        var silenceTimeout: Duration?
        /// Monotonic deadline for silence; bumped by every live message.
        var silenceDeadline: ContinuousClock.Instant?
        var kind: SensorKind = .status
        /// What a plain status sensor never uses, out of line: the tracker holds one of these structs per sensor.
        private var extras = Extras.none

        struct Extras: Sendable {
            var statusBeforeOffline: String?
            var air: AirQualityMonitor?
            var format = ValueFormat()
            var attributes: SensorAttributes = []
            var availability: String?
            var alerts: [String] = []
            var watches: [String: ThresholdWatch] = [:]
            var sessions: SessionRule?
            var session: OpenSession?

            /// The one box every sensor starts with (shared, so it costs nothing until a sensor changes it).
            static let none = OutOfLine(Extras())
        }

        init(
            id: String, sequence: Int, name: String, status: String, statusBeforeOffline: String?,
            lastUpdated: Timestamp?, isOffline: Bool, silenceTimeout: Duration?, kind: SensorKind,
            air: AirQualityMonitor?, format: ValueFormat, attributes: SensorAttributes, availability: String?,
            alerts: [String], sessions: SessionRule?, session: OpenSession?
        ) {
            (self.id, self.sequence, self.name, self.status) = (id, sequence, name, status)
            (self.lastUpdated, self.isOffline, self.silenceTimeout, self.kind) =
                (lastUpdated, isOffline, silenceTimeout, kind)
            // Each through its setter, which leaves the shared box alone for a field at its default.
            (self.statusBeforeOffline, self.format, self.attributes) = (statusBeforeOffline, format, attributes)
            (self.availability, self.alerts, self.sessions, self.session) = (availability, alerts, sessions, session)
            if let air { self.air = air }
        }

        /// The status before going offline, restored by an `online` announcement.
        var statusBeforeOffline: String? {
            get { extras.value.statusBeforeOffline }
            set { extras.set(\.statusBeforeOffline, to: newValue) }
            _modify { yield &extras.value.statusBeforeOffline }
        }
        /// Particulate sensors: recent readings and the alert state.
        var air: AirQualityMonitor? {
            get { extras.value.air }
            _modify { yield &extras.value.air }
        }
        /// How its payloads are read; the other fields of the last one; the topic of its device's availability.
        var format: ValueFormat {
            get { extras.value.format }
            set { extras.set(\.format, to: newValue) }
            _modify { yield &extras.value.format }
        }
        var attributes: SensorAttributes {
            get { extras.value.attributes }
            set { extras.set(\.attributes, to: newValue) }
            _modify { yield &extras.value.attributes }
        }
        var availability: String? {
            get { extras.value.availability }
            set { extras.set(\.availability, to: newValue) }
            _modify { yield &extras.value.availability }
        }
        /// The thresholds it is past (their names), and each configured threshold's watch on it.
        var alerts: [String] {
            get { extras.value.alerts }
            set { extras.set(\.alerts, to: newValue) }
            _modify { yield &extras.value.alerts }
        }
        var watches: [String: ThresholdWatch] {
            get { extras.value.watches }
            set { extras.set(\.watches, to: newValue) }
            _modify { yield &extras.value.watches }
        }
        /// A mobile sensor's session rule, and its open session.
        var sessions: SessionRule? {
            get { extras.value.sessions }
            set { extras.set(\.sessions, to: newValue) }
            _modify { yield &extras.value.sessions }
        }
        var session: OpenSession? {
            get { extras.value.session }
            set { extras.set(\.session, to: newValue) }
            _modify { yield &extras.value.session }
        }
    }
}

extension SensorTracker {
    /// `time`, or a millisecond after the sensor's last message when that was at the same millisecond or up to a
    /// second later: messages the broker held back (a reconnection, a burst) arrive within a millisecond, and the
    /// history in the store's database (and `remote:`) keeps one reading a sensor and millisecond. A clock set back
    /// by more than a second is followed as it is.
    static func ownMillisecond(_ time: Timestamp, after last: Timestamp?) -> Timestamp {
        guard let last, time <= last, last.millisecondsSince1970 - time.millisecondsSince1970 < 1000 else {
            return time
        }
        return last.adding(milliseconds: 1)
    }
}

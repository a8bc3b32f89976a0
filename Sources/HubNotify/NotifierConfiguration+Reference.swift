import HubCore

extension NotifierConfiguration {
    /// The `notifiers` and `alerts` sections as the configuration reference tells them: the same key lists their
    /// readers check the file against.
    public static var referenceSections: [ConfigSection] {
        var sections = [
            ConfigSection(
                "notifiers",
                "Where events go: the backends that deliver notifications, and the rules that choose them.",
                more: "notifications.md", keys: sectionKeys),
            ConfigSection(
                "notifiers.backends.<name>",
                "One backend. Every backend takes these keys besides its kind's own: its queue, its retries and its"
                    + " quiet hours.",
                more: "notifications.md#delivery-queues-the-outbox-retries-and-templates",
                keys: BackendSpec.commonKeys + DeliveryPolicy.keys),
        ]
        for kind in BackendSpec.kinds {
            let phones = kind.type == "apns" || kind.type == "webpush"
            sections.append(
                ConfigSection(
                    "notifiers.backends.<name> (type: \(kind.type))", kind.summary,
                    more: phones
                        ? "notifications.md#phones-and-browsers-apns-and-web-push" : "notifications.md#backends",
                    keys: kind.keys))
        }
        sections += [
            ConfigSection(
                "notifiers.rules.<name>",
                "One rule: which events go to which backends, and how they read. Any of group_by, group_wait,"
                    + " group_interval, repeat, repeat_limit, escalate or quiet_hours makes its events alerts: grouped,"
                    + " reminded, escalated and acknowledged; their defaults are an alerting rule's.",
                more: "notifications.md", keys: ruleKeys + alertKeys),
            ConfigSection(
                "notifiers.rules.<name>.escalate[]",
                "One step of an alerting rule's escalation: other backends told once, when an alert still fires and"
                    + " nobody acknowledged it.",
                more: "alerts.md#reminders-and-escalation", keys: escalationKeys),
            ConfigSection(
                "alerts",
                "What every alerting rule shares: the storm guard, the public URL, quiet hours, and sensors'"
                    + " parents and labels.",
                more: "alerts.md", keys: AlertSettings.keys),
            ConfigSection(
                "alerts.sensors.<glob>",
                "The parent and labels of the sensors whose names match the glob (`\"zb-*\"`), matched in the file's"
                    + " order.",
                more: "alerts.md#dependencies", keys: AlertSettings.sensorKeys),
            ConfigSection(
                "alerts.quiet_hours.<name>",
                "A named window in which alert messages below urgent wait, for the rules and backends that name it,"
                    + " and go as one digest when it ends.",
                more: "alerts.md#quiet-hours", keys: AlertSettings.quietHoursKeys),
        ]
        return sections
    }
}

extension OpenAPIDocument {
    /// The alerts' endpoints: the open alerts, acknowledging, silences, and the signed links of notifications'
    /// buttons (`/a/{id}`), indented as the document's.
    static let alertPaths = """
          /api/v1/alerts:
            get:
              summary: The open alerts (firing, acknowledged, held by a parent, resolved but not yet sent)
              responses:
                "200": {description: 'Alerts: id (rule/sensor/kind), rule, sensor, kind, firing, event, opened, acknowledged, told'}
          /api/v1/alerts/{id}/ack:
            post:
              summary: Acknowledge a firing alert (its reminders and escalation stop)
              parameters:
                - {name: id, in: path, required: true, schema: {type: string}, description: 'rule/sensor/kind, percent-encoded'}
              requestBody:
                content: {application/json: {schema: {type: object, properties: {by: {type: string}}}}}
              responses:
                "202": {description: Handed to the alert book}
                "404": {description: No such firing alert}
          /api/v1/alerts/{id}/snooze:
            post:
              summary: Snooze a firing alert (a silence on its rule, sensor and kind, announced); end it with DELETE /api/v1/silences/{silence}
              parameters:
                - {name: id, in: path, required: true, schema: {type: string}, description: 'rule/sensor/kind, percent-encoded'}
              requestBody:
                content: {application/json: {schema: {type: object, properties: {for: {type: string, default: 1h, description: 1m to 7d}}}}}
              responses:
                "202": {description: 'Handed to the alert book: snoozed (the id) and silence (its id)'}
                "400": {description: A length that can't be read or is out of range}
                "404": {description: No such firing alert}
          /api/v1/silences/preview:
            get:
              summary: What a silence with these matchers would hold - the sensors, the open alerts - before it is added
              parameters:
                - {name: matcher, in: query, required: true, schema: {type: array, items: {type: string}}, style: form, explode: true}
              responses:
                "200": {description: 'sensors, alerts, and warning when it matches no sensor'}
                "400": {description: A matcher that can't be read}
          /api/v1/discover:
            get:
              summary: Listen for devices on the broker (hubctl discover) - the retained messages, then seconds of live ones
              parameters:
                - {name: seconds, in: query, schema: {type: number, default: 5, maximum: 30}}
              responses:
                "200": {description: 'The JSON of hubctl discover --json: devices (with registry new, exists, refused) and skipped'}
                "409": {description: A discovery is under way}
                "502": {description: The broker can't be listened to}
          /api/v1/discover/add:
            post:
              summary: Add the sensors of devices the last discovery heard, all or none (hubctl discover --add)
              requestBody:
                content: {application/json: {schema: {type: object, required: [topics], properties: {topics: {type: array, items: {type: string}}}}}}
              responses:
                "201": {description: 'The sensors added: name, topic'}
                "404": {description: The last discovery heard no device on a topic given}
          /api/v1/notifiers:
            get:
              summary: Each notifier backend's health since hubd started - queue, delivered, failed, last delivery, last error
              responses:
                "200": {description: 'Backends: name, type, queued, delivered, retried, failed, dropped, lastDelivered, lastError, lastErrorAt'}
          /api/v1/notifiers/{name}/test:
            post:
              summary: One real attempt through a backend, as hubctl notify test (nothing queued or retried)
              parameters:
                - {name: name, in: path, required: true, schema: {type: string}}
              responses:
                "200": {description: 'Per target: backend, delivered, result (the receiver''s words), milliseconds'}
                "404": {description: No such backend}
          /api/v1/stream:
            get:
              summary: 'Server-sent events: "change" when what a page shows may have changed (then fetch again)'
              responses:
                "200": {description: text/event-stream}
                "503": {description: Too many streams open}
          /events:
            get:
              summary: The events page (HTML) - newest first, filtered, live, with CSV and JSON downloads
              responses:
                "200": {description: HTML}
          /api/v1/silences:
            get:
              summary: Silences, in force, to come and expired (kept five days), and those hubd has not taken yet
              responses:
                "200": {description: 'Silences: id, matchers, startsAt, endsAt, createdBy, comment'}
            post:
              summary: Add a silence
              requestBody:
                content:
                  application/json:
                    schema:
                      type: object
                      required: [matchers, endsAt]
                      properties:
                        matchers: {type: array, items: {type: string}, description: 'name=value, name!=value (globs), or a sensor glob'}
                        startsAt: {type: string, format: date-time}
                        endsAt: {type: string, format: date-time}
                        createdBy: {type: string}
                        comment: {type: string}
              responses:
                "201": {description: The silence}
                "400": {description: A matcher or a time that can't be read}
          /api/v1/silences/{id}:
            delete:
              summary: End a silence now (alerts it held that still fire are sent at once)
              parameters:
                - {name: id, in: path, required: true, schema: {type: string}}
              responses:
                "200": {description: Expired}
                "404": {description: No such silence in force or to come}
          /alerts:
            get:
              summary: The dashboard's alerts page (HTML) - open alerts, who acknowledged, silences and their expiry
              responses:
                "200": {description: HTML}
          /a/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}, description: A signed token from a notification's button or link}
            get:
              summary: A page that says what the link does, with a button to confirm (a prefetching mail scanner acts on nothing)
              security: []
              responses:
                "200": {description: HTML}
                "403": {description: A forged token}
                "404": {description: The alerts it named are no longer open}
                "409": {description: The token was used already}
                "410": {description: The token expired}
            post:
              summary: Acknowledge or snooze (1 h) the alerts the notification named; the signed token is the authority
              security: []
              responses:
                "200": {description: Done}
                "403": {description: A forged token}
                "404": {description: The alerts it named are no longer open}
                "409": {description: The token was used already}
                "410": {description: The token expired}

        """
}

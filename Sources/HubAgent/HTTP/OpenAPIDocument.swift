/// The OpenAPI 3.1 description of the HTTP API, served at `/api/v1/openapi.yaml`. A test checks that its paths
/// and methods are exactly the router's, and exercises each one.
enum OpenAPIDocument {
    static let yaml = """
        openapi: 3.1.0
        info:
          title: SensorHub API
          version: "1"
          description: >-
            The hub's sensors, events, air quality and push registration. Every operation needs an identity
            (401 without): "Authorization: Bearer <token>" (hubctl tokens add, or http.token), or a person's session
            cookie (POST /login), except those marked security: [] (docs/security.md). What an identity may do:
            read (viewer, read token), act on alerts, phones and sessions (member, write token), manage sensors
            (admin, admin token); 403 says what is missing. JSON bodies are sent as Content-Type: application/json
            (415 otherwise). Errors are {"error": "<what was wrong>"} with a 4xx or 5xx status.
        security:
          - token: []
          - session: []
        paths:
        \(accessPaths)
          /healthz:
            get:
              summary: Whether hubd runs, and is connected to the broker
              security: []
              responses:
                "200": {description: '{"status":"ok","connected":true,"sensors":3}'}
          /metrics:
            get:
              summary: Prometheus metrics (messages, changes, rejections, reconnects, notifications per backend, queue depths)
              responses:
                "200": {description: Prometheus text format}
          /:
            get:
              summary: The dashboard (HTML)
              responses:
                "200": {description: HTML}
          /dashboard/chart.json:
            get:
              summary: A chart's series as JSON (the dashboard's charts) - title, unit, lines (the WHO guideline, thresholds), fromZero, from, to, points as [time ms, min, mean, max]
              parameters:
                - {name: sensor, in: query, schema: {type: string}}
                - {name: pollutant, in: query, schema: {type: string, enum: [pm25, pm10]}}
                - {name: period, in: query, schema: {type: string, enum: [hour, day, week, month], default: day}}
              responses:
                "200": {description: The series}
          /dashboard/chart.svg:
            get:
              summary: A chart as SVG, of a numeric sensor's value or a particulate sensor's PM2.5 or PM10
              description: >-
                sensor names a numeric sensor (its value, in its unit) or a particulate one (pollutant picks the
                series); without sensor, the first particulate sensor's pollutant.
              parameters:
                - {name: sensor, in: query, schema: {type: string}}
                - {name: pollutant, in: query, schema: {type: string, enum: [pm25, pm10], default: pm25}}
                - {name: period, in: query, schema: {type: string, enum: [hour, day, week, month], default: day}}
              responses:
                "200": {description: SVG}
                "400": {description: Bad period, or a status sensor (it has no readings)}
                "404": {description: No such sensor}
          /manifest.webmanifest:
            get:
              summary: The dashboard's web app manifest (installable, standalone)
              security: []
              responses:
                "200": {description: application/manifest+json}
          /sw.js:
            get:
              summary: The dashboard's service worker (shows Web Push messages; a tap opens the dashboard)
              security: []
              responses:
                "200": {description: JavaScript}
          /icon.svg:
            get:
              summary: The web app's icon
              security: []
              responses:
                "200": {description: SVG}
          /dashboard/push.js:
            get:
              summary: The script behind the dashboard's "Notify me on this device"
              security: []
              responses:
                "200": {description: JavaScript}
          /api/v1/openapi.yaml:
            get:
              summary: This document
              responses:
                "200": {description: YAML}
        \(alertPaths)  /api/v1/webpush/key:
            get:
              summary: The hub's VAPID public key, for pushManager.subscribe's applicationServerKey
              description: Public by design (the browser hands it to its push service), so no identity is needed.
              security: []
              responses:
                "200": {description: '{"publicKey":"<uncompressed P-256 key, base64url>"}'}
                "404": {description: No webpush backend is configured}
          /api/v1/sensors:
            get:
              summary: Every sensor, with its live status
              responses:
                "200":
                  description: Sensors, sorted by name
                  content:
                    application/json:
                      schema: {type: array, items: {$ref: "#/components/schemas/Sensor"}}
            post:
              summary: Add a sensor (the same rules as hubctl sensors add)
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [name]
                      additionalProperties: false
                      properties:
                        name: {type: string, description: "1-64 letters, digits, spaces, - _ ."}
                        topic: {type: string, description: The sensor's MQTT topic (default from the topic template)}
                        kind: {type: string, enum: [status, numeric, particulate]}
                        silenceTimeout: {type: string, description: "A duration: 90s, 10m, 2h"}
                        value: {type: string, description: "Where the value is in a JSON payload: contact, AM2301.Temperature, /a/0"}
                        map: {type: string, description: "What values mean: true=closed,false=open"}
                        unit: {type: string, description: "A numeric sensor's unit: °C"}
                        bands: {type: string, description: "A numeric sensor's named ranges: 0=Low,3=Moderate; the status is the band"}
                        availability: {type: string, description: "A topic where the device says online or offline"}
              responses:
                "201": {description: The sensor, content: {application/json: {schema: {$ref: "#/components/schemas/Sensor"}}}}
                "400": {description: Invalid JSON, name, topic or field}
                "401": {description: The API token is missing or wrong}
                "409": {description: The name or topic is taken}
                "413": {description: Body over 64 KiB}
          /api/v1/sensors/{name}:
            parameters:
              - {name: name, in: path, required: true, schema: {type: string}}
            get:
              summary: One sensor
              responses:
                "200": {description: The sensor, content: {application/json: {schema: {$ref: "#/components/schemas/Sensor"}}}}
                "404": {description: No such sensor}
            patch:
              summary: Rename a sensor (its topic stays)
              requestBody:
                content: {application/json: {schema: {type: object, required: [name], properties: {name: {type: string}}}}}
              responses:
                "200": {description: The renamed sensor, content: {application/json: {schema: {$ref: "#/components/schemas/Sensor"}}}}
                "404": {description: No such sensor}
                "409": {description: Another sensor has that name}
            delete:
              summary: Remove a sensor
              responses:
                "204": {description: Removed}
                "401": {description: The API token is missing or wrong}
                "404": {description: No such sensor}
          /api/v1/events:
            get:
              summary: Status changes, silences, recoveries and air-quality alerts, the newest `limit` (1000 by default)
              parameters:
                - {name: since, in: query, schema: {type: string, default: 24h}}
                - {name: sensor, in: query, schema: {type: string}}
                - {name: kind, in: query, schema: {type: string}, description: 'changed, offline, … (several with commas)'}
                - {name: limit, in: query, schema: {type: integer, default: 1000, maximum: 10000}}
                - {name: format, in: query, schema: {type: string, enum: [json, csv]}}
              responses:
                "200":
                  description: Events, oldest first (CSV with format=csv)
                  content:
                    application/json:
                      schema:
                        type: array
                        items:
                          type: object
                          properties:
                            time: {type: string, format: date-time}
                            sensor: {type: string}
                            event: {type: string, enum: [changed, silent, offline, recovered, air_quality, threshold, discovered]}
                            from: {type: string}
                            to: {type: string}
                            detail: {type: [string, "null"]}
                "400": {description: Bad since}
                "404": {description: No such sensor, or no history yet}
          /api/v1/air:
            get:
              summary: Each particulate sensor's current reading, AQI, level, means and alert state
              responses:
                "200":
                  description: Readings
                  content:
                    application/json:
                      schema:
                        type: array
                        items:
                          type: object
                          properties:
                            sensor: {type: string}
                            pm25: {type: [number, "null"]}
                            pm10: {type: [number, "null"]}
                            time: {type: string, format: date-time}
                            aqi: {type: integer}
                            category: {type: string}
                            colour: {type: string}
                            light: {type: string, enum: [green, yellow, red]}
                            alert: {type: boolean}
                            mean1h: {type: object}
                            mean24h: {type: object}
                            threshold: {type: object}
          /api/v1/air/history:
            get:
              summary: Min, mean and max per hour, day, week or month (UTC)
              parameters:
                - {name: period, in: query, schema: {type: string, enum: [hour, day, week, month], default: hour}}
                - {name: since, in: query, schema: {type: string, default: 24h}}
                - {name: sensor, in: query, schema: {type: string}}
              responses:
                "200": {description: 'Aggregates: [{"start","readings","pm25":{"min","mean","max"},"pm10":{…}}]'}
                "400": {description: Bad period or since, or not a particulate sensor}
                "404": {description: No particulate sensor, or no history yet}
          /api/v1/alert:
            get:
              summary: The original air monitor's alert endpoint
              responses:
                "200": {description: '{"alert":true,"pollutant":"PM2.5","value":27.4,"time":"…"}'}
          /api/v1/route:
            get:
              summary: >-
                The least-polluted route between two places over the PM2.5 readings with a position in the history
                (readings inside the circle around the midpoint, radius half the distance plus margin, spread on a
                grid by inverse-distance weighting; A* minimising length × (1 + weight × PM2.5)), beside the
                shortest path. Along the roads of route.roads in hubd.yaml when set. At most 1,000,000 grid cells
                and the newest 200,000 readings in the area.
              parameters:
                - {name: from, in: query, required: true, schema: {type: string, example: "52.0907,5.1214"}, description: 'LAT,LON in degrees'}
                - {name: to, in: query, required: true, schema: {type: string, example: "52.0860,5.1400"}, description: 'LAT,LON in degrees'}
                - {name: since, in: query, schema: {type: string, default: 30d}}
                - {name: margin, in: query, schema: {type: number, default: 200}, description: metres added to the circle}
                - {name: cell, in: query, schema: {type: number, default: 25}, description: metres along a grid cell's side}
                - {name: radius, in: query, schema: {type: number, default: 250}, description: metres within which a reading counts for a cell (at most 1000)}
                - {name: weight, in: query, schema: {type: number, default: 0.02}, description: k per µg/m³}
                - {name: default, in: query, schema: {type: number, default: 15}, description: µg/m³ for cells with no reading}
                - {name: sensors, in: query, schema: {type: string}, description: "only these sensors' readings (names separated by commas)"}
                - {name: format, in: query, schema: {type: string, enum: [geojson, gpx], default: geojson}}
                - {name: shortest, in: query, schema: {type: boolean, default: false}, description: "the shortest path's line too"}
              responses:
                "200":
                  description: >-
                    A GeoJSON Feature (LineString of [longitude, latitude]) with properties route
                    (least-polluted), length_m, exposure (µg/m³·m), mean_pm25, shortest_length_m, shortest_exposure,
                    defaulted_cells, default_pm25 and readings; or a GPX 1.1 track with format=gpx. With
                    shortest=true, a FeatureCollection of that Feature and the shortest path's (route: shortest,
                    length_m, exposure, mean_pm25), or two GPX tracks
                  content:
                    application/geo+json:
                      schema:
                        type: object
                        properties:
                          type: {type: string, enum: [Feature]}
                          geometry: {type: object}
                          properties:
                            type: object
                            properties:
                              route: {type: string, enum: [least-polluted, shortest]}
                              length_m: {type: number}
                              exposure: {type: number}
                              mean_pm25: {type: number}
                              shortest_length_m: {type: number}
                              shortest_exposure: {type: number}
                              defaulted_cells: {type: integer}
                              default_pm25: {type: number}
                              readings: {type: integer}
                    application/gpx+xml: {}
                "400": {description: 'A bad or missing from/to, setting, since or format; start and end in one cell; too many cells; a point off the roads'}
                "404": {description: No PM2.5 readings with a position in the area, no history yet, or no such sensor}
                "422": {description: The roads do not join start and end}
                "503": {description: Two routes are being planned already (one a core)}
          /api/v1/devices:
            get:
              summary: The registered phones and browsers, without their tokens or subscriptions
              responses:
                "200":
                  description: The devices
                  content:
                    application/json:
                      schema: {type: array, items: {$ref: '#/components/schemas/Device'}}
                "401": {description: The API token is missing or wrong}
            post:
              summary: >-
                Register a phone's APNs device token or a browser's Web Push subscription (validated, de-duplicated,
                stored encrypted), with the sensors and events it wants
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      description: >-
                        Either token (or ID) or a browser's PushSubscription.toJSON() (endpoint, keys, expirationTime);
                        sensors and events are optional (every sensor, every kind when absent). Registering again keeps
                        the id and changes the choice only when sensors or events are given.
                      properties:
                        token: {type: string, description: 64-200 hexadecimal digits}
                        ID: {type: string, description: The original app's name for token}
                        endpoint: {type: string, description: "The push service's https URL"}
                        keys:
                          type: object
                          properties:
                            p256dh: {type: string, description: The browser's P-256 public key (65 bytes), base64url}
                            auth: {type: string, description: The 16-byte auth secret, base64url}
                        expirationTime: {type: [number, "null"]}
                        sensors: {$ref: '#/components/schemas/DeviceChoice/properties/sensors'}
                        events: {$ref: '#/components/schemas/DeviceChoice/properties/events'}
              responses:
                "201": {description: '{"added":true,"id":"…","choice":{"sensors":["door*"],"events":[]}}'}
                "200": {description: 'Already registered: {"added":false,"id":"…","choice":{…}}'}
                "400": {description: Not a device token or subscription, or a bad sensors/events field (named)}
                "401": {description: The API token is missing or wrong}
          /api/v1/devices/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}, description: The device id or its token}
            patch:
              summary: Change the sensors or events a device gets (only the fields given)
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: '#/components/schemas/DeviceChoice'}
              responses:
                "200":
                  description: The device
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/Device'}
                "400": {description: A bad sensors or events field (named), or neither given}
                "401": {description: The API token is missing or wrong}
                "404": {description: No such device}
            delete:
              summary: Remove a device
              responses:
                "204": {description: Removed}
                "401": {description: The API token is missing or wrong}
                "404": {description: No such device}
        \(sessionPaths)components:
        \(securitySchemes)  schemas:
        \(sessionSchema)
            DeviceChoice:
              type: object
              properties:
                sensors:
                  type: array
                  items: {type: string}
                  description: Sensor names or globs (door*), case ignored; [] for every sensor
                events:
                  type: array
                  items: {type: string, enum: [changed, silent, offline, recovered, air_quality, threshold, discovered]}
                  description: Event kinds; [] for every kind
            Device:
              type: object
              properties:
                id: {type: string, description: An HMAC of the token or endpoint, never the secret}
                kind: {type: string, enum: [apns, webpush]}
                masked: {type: string, description: "The token's ends, or the push service's host"}
                choice: {$ref: '#/components/schemas/DeviceChoice'}
                added: {type: string, format: date-time}
            Sensor:
              type: object
              properties:
                name: {type: string}
                topic: {type: string}
                status: {type: string}
                kind: {type: string, description: "status, numeric or particulate"}
                added: {type: string, format: date-time}
                lastUpdated: {type: [string, "null"], format: date-time}
                silenceTimeout: {type: [string, "null"]}
                mobile: {type: boolean, description: "A mobile sensor (sessions: in hubd.yaml); present only then"}
                session:
                  type: object
                  description: A mobile sensor's open recording session (id, started, last); present only then
                attributes:
                  type: object
                  description: >-
                    The other fields of its device's last payload (battery, linkquality…), by dotted path; present
                    when there are any
                  additionalProperties: {type: [number, string, boolean]}
                unit: {type: [string, "null"], description: "A numeric sensor's unit (°C); only numeric sensors have it"}
                value:
                  type: [number, "null"]
                  description: A numeric sensor's value (null while waiting or offline); only numeric sensors have it

        """
}

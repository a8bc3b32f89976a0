extension OpenAPIDocument {
    /// The session endpoints' part of `paths` (the API's and the dashboard's pages), indented as the document's.
    static let sessionPaths = """
          /api/v1/sessions:
            get:
              summary: Mobile sensors' recording sessions, newest first
              parameters:
                - {name: sensor, in: query, schema: {type: string}}
                - {name: since, in: query, schema: {type: string, default: 30d}, description: Started within this}
                - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 1000, default: 100}}
              responses:
                "200":
                  description: Sessions
                  content:
                    application/json:
                      schema: {type: array, items: {$ref: '#/components/schemas/Session'}}
                "400": {description: Bad since or limit}
                "404": {description: No such sensor, or no history yet}
          /api/v1/sessions/{id}:
            parameters:
              - name: id
                in: path
                required: true
                schema: {type: string}
                description: A session's id (its start event's), or fixed:<sensor> for a fixed sensor's readings
            get:
              summary: A session with its statistics
              responses:
                "200":
                  description: >-
                    The session, with duration_s, distance_m (great-circle, along its positions), pm25, pm10 and
                    value ({min, mean, max} or null), above_guideline_s (time with PM2.5 above guideline, each reading
                    counting until the next, at most 5 min), guideline (µg/m³, the WHO 24-hour PM2.5 guideline) and
                    positioned (readings with a position)
                  content:
                    application/json:
                      schema: {$ref: '#/components/schemas/Session'}
                "404": {description: No such session, or no history yet}
          /api/v1/sessions/{id}/track:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}}
            get:
              summary: A session's readings as GeoJSON (RFC 7946), GPX 1.1 or CSV, as a download
              parameters:
                - {name: format, in: query, schema: {type: string, enum: [geojson, gpx, csv], default: geojson}}
              responses:
                "200":
                  description: >-
                    application/geo+json (a LineString of the track and a Point per positioned reading; coordinates
                    [lon, lat]), application/gpx+xml (a trkpt per positioned reading) or text/csv (a row per reading:
                    time,lat,lon,alt,accuracy,pm25,pm10,value), with a Content-Disposition file name
                "400": {description: Bad format}
                "404": {description: No such session, or no history yet}
          /api/v1/sensors/{name}/session:
            parameters:
              - {name: name, in: path, required: true, schema: {type: string}}
            post:
              summary: Start or stop a mobile sensor's recording session (a start while one is open ends it first)
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [action]
                      properties:
                        action: {type: string, enum: [start, stop]}
              responses:
                "200":
                  description: >-
                    {"changed":true,"recording":true,"session":"<id>","events":[…session events…]}, or
                    {"changed":false} for a stop with no session open
                "400": {description: A bad body}
                "401": {description: The API token is missing or wrong}
                "404": {description: No such sensor}
                "409": {description: Not a mobile sensor (sessions in hubd.yaml does not name it)}
                "503": {description: No hub runs to record it}
          /sessions:
            get:
              summary: The dashboard's page of recent sessions (HTML), of one sensor with sensor
              parameters:
                - {name: sensor, in: query, schema: {type: string}}
              responses:
                "200": {description: HTML}
          /sessions/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}}
            get:
              summary: >-
                The dashboard's page of a session (HTML): its figures, its track as an SVG map coloured by PM2.5 band
                (over http.map_tiles' tiles, drawn on a plain ground without them), its chart over time, its
                downloads, and a link to the least-polluted way between its ends
              responses:
                "200": {description: HTML}
                "404": {description: No such session (HTML)}
          /route:
            get:
              summary: >-
                The dashboard's route page (HTML): with from and to (and the other parameters of /api/v1/route), the
                least-polluted way beside the shortest on one map, with their lengths, mean PM2.5 and exposure
              parameters:
                - {name: from, in: query, schema: {type: string, example: "52.0907,5.1214"}}
                - {name: to, in: query, schema: {type: string, example: "52.0860,5.1400"}}
                - {name: since, in: query, schema: {type: string, default: 30d}}
              responses:
                "200": {description: HTML}
                "400": {description: A bad parameter, said on the page (HTML)}
                "404": {description: No PM2.5 readings in the area (HTML)}
                "503": {description: Routes being planned already (HTML)}

        """

    /// The `Session` schema, indented as the document's other schemas (its line ends in the document).
    static let sessionSchema = """
            Session:
              type: object
              properties:
                id: {type: string}
                sensor: {type: string}
                started: {type: string, format: date-time}
                ended: {type: [string, "null"], format: date-time}
                open: {type: boolean}
                readings: {type: integer}
                duration_s: {type: number, description: Only for one session}
                distance_m: {type: number, description: Only for one session}
                pm25: {type: [object, "null"], description: '{"min","mean","max"}; only for one session'}
                pm10: {type: [object, "null"], description: '{"min","mean","max"}; only for one session'}
                value: {type: [object, "null"], description: '{"min","mean","max"}; only for one session'}
                above_guideline_s: {type: number, description: Only for one session}
                guideline: {type: number, description: Only for one session}
                positioned: {type: integer, description: Only for one session}
        """
}

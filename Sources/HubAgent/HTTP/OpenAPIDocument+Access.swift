/// The OpenAPI document's part about who may call: logging in and out, who one is, one's logins; and the security
/// schemes. Public operations say `security: []` (the same list as the route table's, a test checks).
extension OpenAPIDocument {
    static let accessPaths = """
          /login:
            get:
              summary: The login page (HTML); on a hub with no accounts, how to make the first
              security: []
              parameters:
                - {name: next, in: query, schema: {type: string}, description: Where to go once logged in (a path of this hub)}
              responses:
                "200": {description: HTML}
            post:
              summary: Log in (a form from the hub's own page) and get a session cookie
              security: []
              requestBody:
                content:
                  application/x-www-form-urlencoded:
                    schema:
                      type: object
                      properties: {user: {type: string}, password: {type: string}, next: {type: string}}
              responses:
                "303": {description: 'Logged in: Set-Cookie sensorhub_session (HttpOnly, SameSite=Strict, Secure over HTTPS), to next'}
                "401": {description: Wrong name or password (the login page again)}
                "403": {description: Not from the hub's own page (Origin)}
                "429": {description: Too many failures from this address or for this name (Retry-After)}
          /logout:
            post:
              summary: Log out this browser (ends its session)
              security: []
              responses:
                "303": {description: To /login}
          /dashboard/app.js:
            get:
              summary: The dashboard's script (the pages carry no inline script)
              security: []
              responses:
                "200": {description: JavaScript}
          /dashboard/events.js:
            get:
              summary: The events page's script
              security: []
              responses:
                "200": {description: JavaScript}
          /dashboard/follow.js:
            get:
              summary: The script of a page that loads itself again when the hub changes
              security: []
              responses:
                "200": {description: JavaScript}
          /dashboard/dygraph.js:
            get:
              summary: dygraphs (MIT, from Debian's libjs-dygraphs), the dashboard's charts
              security: []
              responses:
                "200": {description: JavaScript}
          /dashboard/dygraph.css:
            get:
              summary: dygraphs' style sheet
              security: []
              responses:
                "200": {description: CSS}
          /dashboard/app.css:
            get:
              summary: The pages' style sheet
              security: []
              responses:
                "200": {description: CSS}
          /api/v1/me:
            get:
              summary: Who the request is from, and what it may do
              responses:
                "200": {description: '{"name":"ana","kind":"person","role":"member","access":"act"}; kind person, token or http.token; access read, act or manage'}
          /api/v1/logins:
            get:
              summary: One's logins (an admin's, everyone's), newest first
              responses:
                "200": {description: 'Logins: id, user, created, lastSeen, address, agent, current'}
          /api/v1/logins/{id}:
            delete:
              summary: End one of one's logins (a lost phone), or with admin anyone's
              parameters:
                - {name: id, in: path, required: true, schema: {type: string}}
              responses:
                "204": {description: Ended}
                "404": {description: No such login of yours}

        """

    static let securitySchemes = """
          securitySchemes:
            token:
              type: http
              scheme: bearer
              description: An API token (hubctl tokens add NAME --scope read|write|admin), or http.token (admin)
            session:
              type: apiKey
              in: cookie
              name: sensorhub_session
              description: A person's login (POST /login); a write with it must come from the hub's own origin

        """
}

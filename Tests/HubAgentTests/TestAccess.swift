import HTTPTypes
import HubCore
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

@testable import HubAgent

/// The admin token the router tests' hubs take (`http.token`) when a test does not care who asks.
let testAdminToken = "router-tests-admin-0123456789"

/// How the router tests' API admits requests: `token` as `http.token`, the accounts of `directory`, every host name
/// (the Host check is tested against a real hubd, `SecurityTests`).
func testAccess(_ directory: String, token: String? = testAdminToken, imageOrigins: [String] = []) -> HTTPAccess {
    var settings = HTTPAccess.Settings()
    settings.configuredToken = token
    settings.imageOrigins = imageOrigins
    settings.hosts = nil
    var logger = Logger(label: "api-test")
    logger.logLevel = .critical
    return HTTPAccess(settings: settings, stateDirectory: directory, logger: logger)
}

/// A test client as a program calls the API: its token on every request that carries no `Authorization` of its own,
/// and `Content-Type: application/json` on every body that says no type.
struct AuthorizedClient: TestClientProtocol {
    let base: any TestClientProtocol
    /// nil: only the content type is added.
    let token: String?

    var port: Int? { base.port }

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?)
        async throws -> TestResponse
    {
        var headers = headers
        if let token, headers[.authorization] == nil { headers[.authorization] = "Bearer \(token)" }
        if body != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        return try await base.executeRequest(uri: uri, method: method, headers: headers, body: body)
    }
}

import Foundation
import HTTPTypes
import HubTestKit
import HummingbirdTesting
import NIOCore
import Testing

@testable import HubAgent

extension HubAPITests {
    /// The dashboard as an installable web app: the page links its manifest and loads the push script; the manifest,
    /// icon and service worker are served with their types; the VAPID key is there when a webpush backend is, and
    /// its absence is said plainly.
    @Test func installableWebAppAndTheVAPIDKey() async throws {
        let vapid = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        try await withClient(webPushKey: vapid) { client in
            try await client.execute(uri: "/", method: .get) {
                let html = String(buffer: $0.body)
                #expect(html.contains("<link rel=\"manifest\" href=\"/manifest.webmanifest\">"))
                #expect(html.contains("<button id=\"push-button\" type=\"button\">Notify me on this device</button>"))
                #expect(html.contains("<script src=\"/dashboard/push.js\" defer></script>"))
                #expect(html.contains("<script src=\"/dashboard/app.js\" defer></script>"))
                #expect(!html.contains("<script>"), "no inline script: the CSP refuses any")
                #expect(!html.contains("https://"), "no external assets")
            }
        }
        try await withClient { client in
            // No webpush backend: no button that could do nothing.
            try await client.execute(uri: "/", method: .get) {
                #expect(!String(buffer: $0.body).contains("push-button"))
            }
            try await client.execute(uri: "/manifest.webmanifest", method: .get) {
                #expect($0.headers[.contentType] == "application/manifest+json")
                let manifest = try #require(try decode($0.body) as? [String: Any])
                #expect(manifest["display"] as? String == "standalone" && manifest["start_url"] as? String == "/")
                let icons = try #require(manifest["icons"] as? [[String: Any]])
                #expect(icons.first?["src"] as? String == "/icon.svg")
            }
            try await client.execute(uri: "/icon.svg", method: .get) {
                #expect($0.headers[.contentType] == "image/svg+xml" && String(buffer: $0.body).hasPrefix("<svg"))
            }
            for script in ["/sw.js", "/dashboard/push.js"] {
                try await client.execute(uri: script, method: .get) {
                    #expect($0.headers[.contentType] == "text/javascript; charset=utf-8", "\(script)")
                    #expect($0.headers[.cacheControl] == "no-cache")
                }
            }
            try await client.execute(uri: "/api/v1/webpush/key", method: .get) {
                #expect($0.status == .notFound)
                #expect(error($0.body)?.hasPrefix("no webpush backend is configured: add one (type: webpush") == true)
            }
        }
        let key = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        // A public key, read like every read: no API token needed even where writes need one.
        try await withClient(token: "secret", webPushKey: key) { client in
            try await client.execute(uri: "/api/v1/webpush/key", method: .get) {
                #expect($0.status == .ok)
                let answer = try decode($0.body) as? [String: String]
                #expect(answer == ["publicKey": key])
            }
        }
    }
}

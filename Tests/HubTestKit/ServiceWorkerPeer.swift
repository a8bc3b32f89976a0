import Foundation

extension PythonPeers {
    /// Hands `plaintext` to the real `push` handler of `origin`'s service worker in a running Chromium, as the
    /// browser's push service would (`Tests/Peers/cdp_worker.py`, over the DevTools protocol at `debugger`), and
    /// returns the notifications the worker then shows: `title`, `body`, `tag`, `actions` (`action`, `title`),
    /// `data`.
    public static func deliverPush(debugger: String, origin: String, plaintext: String) async throws
        -> [[String: Any]]
    {
        let answer = try await serviceWorker(debugger, origin, ["push"], input: plaintext)
        guard let shown = answer as? [[String: Any]] else { throw TestKitError("cdp_worker.py push said \(answer)") }
        return shown
    }

    /// Dispatches a `notificationclick` with `action` on the notification tagged `tag`, in the worker's own
    /// context, and returns what happened: `dispatched`, `left` (notifications still shown), `requests` (the
    /// worker's fetches: `url`, `method`, `status`, `failed`) and `exceptions` (uncaught, in the worker).
    public static func clickNotification(debugger: String, origin: String, tag: String, action: String) async throws
        -> [String: Any]
    {
        let answer = try await serviceWorker(debugger, origin, ["click", tag, action])
        guard let clicked = answer as? [String: Any] else { throw TestKitError("cdp_worker.py click said \(answer)") }
        return clicked
    }

    private static func serviceWorker(_ debugger: String, _ origin: String, _ command: [String], input: String? = nil)
        async throws -> Any
    {
        let result = try await run("Tests/Peers/cdp_worker.py", [debugger, origin] + command, input: input)
        guard result.status == 0 else {
            throw TestKitError("cdp_worker.py \(command[0]) failed: \(result.standardError)")
        }
        return try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
    }
}

import ServiceLifecycle

/// Runs `action` every `interval` until cancelled (a service wraps its timers in `cancelWhenGracefulShutdown`).
func every(_ interval: Duration, _ action: @Sendable () async -> Void) async {
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
        do {
            try await Task.sleep(for: interval)
        } catch {
            return
        }
        await action()
    }
}

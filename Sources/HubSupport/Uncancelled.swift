/// Runs `body` in a task of its own, which the caller's cancellation does not reach, and waits for it: the last work
/// of a service whose task is being cancelled (giving up claims, saying it stops), which a cancelled database query
/// would otherwise refuse at once.
package func uncancelled<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
    await Task { await body() }.value
}

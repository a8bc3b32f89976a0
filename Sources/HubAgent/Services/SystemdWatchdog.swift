import ServiceLifecycle

/// Tells systemd hubd is alive (`WATCHDOG=1`, when the unit has a watchdog) and that it is stopping
/// (`STOPPING=1`, as soon as a graceful shutdown begins: this service stops among the first).
struct SystemdWatchdog: Service {
    let notifier: SystemdNotifier

    func run() async {
        if let interval = notifier.watchdogInterval {
            await cancelWhenGracefulShutdown { await every(interval) { notifier.watchdog() } }
        } else {
            try? await gracefulShutdown()
        }
        notifier.stopping()
    }
}

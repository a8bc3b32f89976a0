// The idle floor of a Swift program on Linux (issue 38): an async main that waits for ever, as a service does
// between events, after one task has run. libdispatch's worker-pool monitor (src/event/workqueue.c, a 1 s timer on
// its manager queue, in every process that has used Dispatch or Swift concurrency) wakes it once a second whatever
// the program does. `make bench`'s idle section runs it beside hubd:
//   swiftc -O -parse-as-library -o /tmp/swiftfloor bench/swiftfloor.swift && /tmp/swiftfloor
import Dispatch

@main struct SwiftFloor {
    static func main() async {
        // One task, as any service starts some: the worker pool and its monitor are set up.
        await Task.detached { _ = 1 }.value
        // Waits for a signal that never comes.
        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The process's memory as Linux counts it (/proc/self/status), and a way to see one operation's peak.
enum Memory {
    /// Resident set size now, in bytes.
    static var resident: Int { status("VmRSS") }

    /// The resident high-water mark since the process started or since the last `resetPeak()`, in bytes.
    static var peak: Int { status("VmHWM") }

    /// The highest `peak` this process has seen: `resetPeak()` folds the mark it clears into it.
    nonisolated(unsafe) private static var highest = 0

    /// The process's own high-water mark over its whole life, resets included.
    static var processPeak: Int { max(highest, peak) }

    /// Whether `resetPeak()` works here (Linux ≥ 4.0 with /proc writable by the process).
    nonisolated(unsafe) private(set) static var canResetPeak = true

    /// Clears VmHWM back to the current RSS ("5" to /proc/self/clear_refs, proc(5)), so that the next reading of
    /// `peak` is the high-water mark of what runs in between.
    static func resetPeak() {
        highest = max(highest, peak)
        guard canResetPeak else { return }
        do {
            try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        } catch {
            canResetPeak = false
        }
    }

    /// Hands freed memory back to the kernel (glibc's `malloc_trim`), so that a route's arrays are counted when
    /// they are touched again rather than reused from pages the previous route left resident.
    static func trim() { _ = mallocTrim?(0) }

    /// glibc's `malloc_trim(3)`, which its Swift module leaves out (it is in <malloc.h>); `nil` elsewhere.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Runs `body` from a trimmed heap and a cleared high-water mark; returns its result and how far the resident
    /// set rose above where it started, in bytes.
    static func peakAbove<T>(_ body: () throws -> T) rethrows -> (T, Int) {
        trim()
        let before = resident
        resetPeak()
        let result = try body()
        return (result, max(0, peak - before))
    }

    private static func status(_ key: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            let fields = line.dropFirst(key.count + 1).split { $0 == " " || $0 == "\t" }
            let kilobytes = fields.first.flatMap { Int($0) } ?? 0
            return kilobytes * 1024
        }
        return 0
    }
}

/// Wall-clock and CPU time of one call.
enum Stopwatch {
    /// Seconds on the monotonic clock.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// CPU seconds of this process so far (user and system).
    static func cpu() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `body`'s result and its wall-clock seconds.
    static func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = now()
        let result = try body()
        return (result, now() - start)
    }
}

/// Median, 90th percentile (nearest rank) and maximum of a sample.
struct Spread {
    var median: Double
    var p90: Double
    var max: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        guard !sorted.isEmpty else {
            (median, p90, max) = (.nan, .nan, .nan)
            return
        }
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        p90 = sorted[Swift.max(0, Int((0.9 * Double(sorted.count)).rounded(.up)) - 1)]
        max = sorted[sorted.count - 1]
    }
}

/// Numbers as the report writes them.
enum Format {
    static func mebibytes(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 1) + " MiB" }

    static func milliseconds(_ seconds: Double) -> String {
        let ms = seconds * 1000
        return fixed(ms, ms < 10 ? 2 : ms < 100 ? 1 : 0)
    }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        return String(format: "%.\(decimals)f", value)
    }

    /// 1234567 → "1,234,567".
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return (value < 0 ? "-" : "") + groups.joined(separator: ",")
    }
}

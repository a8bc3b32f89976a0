import Foundation

/// Every thread of process `pid` (this one by default): its id, name and nice value, from
/// `/proc/<pid>/task/<id>/stat` (fields 2 and 19). The main thread's id is the process's.
public func threadPriorities(of pid: pid_t? = nil) -> [(id: pid_t, name: String, nice: Int32)] {
    let tasks = "/proc/\(pid.map(String.init) ?? "self")/task"
    return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).compactMap { task in
        guard let id = pid_t(task), let stat = try? String(contentsOfFile: "\(tasks)/\(task)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { return nil }
        let name = String(stat[stat.index(after: open)..<close])
        // After the name: state is field 3, nice field 19.
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 16, let nice = Int32(fields[16]) else { return nil }
        return (id, name, nice)
    }
}

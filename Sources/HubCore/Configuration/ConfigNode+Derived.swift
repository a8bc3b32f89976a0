extension ConfigNode {
    /// This mapping with `key` (and `<key>_file`) replaced by the keys `derived` from it (an Apprise URL); a key the
    /// mapping sets keeps its value. Messages about a derived key point at `key`'s line.
    public func replacing(_ key: String, with derived: [(key: String, values: [String])]) -> ConfigNode {
        guard case .mapping(let entries, let line) = value else { return self }
        let source = (self[key].value ?? self[key + "_file"].value)?.line ?? line
        var kept = entries.filter { $0.key != key && $0.key != key + "_file" }
        for (name, values) in derived where !kept.contains(where: { $0.key == name }) {
            let scalars = values.map { Value.scalar($0, line: source) }
            kept.append(Entry(key: name, value: scalars.count == 1 ? scalars[0] : .sequence(scalars, line: source)))
        }
        return ConfigNode(path: path, value: .mapping(kept, line: line), context: context)
    }
}

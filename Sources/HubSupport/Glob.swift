import Foundation

/// Shell-style glob (`*`, `?`, `[…]`), ignoring case: how rules name sensors (`door*`, `*-temp`).
package func glob(_ pattern: String, _ text: String) -> Bool {
    // FNM_CASEFOLD (a GNU extension Swift does not import) is 1 << 4.
    fnmatch(pattern, text, 1 << 4) == 0
}

/// Whether `text` matches one of `patterns`; a list that names nothing takes everything, as rules and devices read it.
package func glob(anyOf patterns: [String], _ text: String) -> Bool {
    patterns.isEmpty || patterns.contains { glob($0, text) }
}

/// Why `pattern` is not a glob that can mean anything (an unclosed `[`), or nil when it is one.
package func globMistake(_ pattern: String) -> String? {
    var inside = false
    var escaped = false
    for character in pattern {
        if escaped {
            escaped = false
            continue
        }
        switch character {
        case "\\": escaped = true
        case "[" where !inside: inside = true
        case "]" where inside: inside = false
        default: break
        }
    }
    return inside ? "'\(pattern)' opens a [ it never closes (write [ab] for a or b, or \\[ for a bracket)" : nil
}

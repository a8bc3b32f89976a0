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
